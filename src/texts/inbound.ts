import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { inTransaction } from '../db/client'
import { normalizePhone } from '../platform/phone'
import { findAccountById } from '../accounts/account.queries'
import { addCustomerMessage } from '../jobs/add-customer-message'
import { isFinished } from '../jobs/job-status'
import { toJobRow } from '../jobs/job.queries'
import type { JobRow } from '../jobs/job.view'
import type { ContextFactory } from '../operations/context-factory'
import { recordConsent, recordOptOut } from './consent'

const STOP = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'REVOKE']
const START = ['START', 'YES', 'UNSTOP', 'OPTIN']
const HELP = ['HELP', 'INFO']

export interface InboundDeps { db: Db; clock: Clock; contexts: ContextFactory; replyWindowMs: number }

/**
 * The accounts a text sent to `to` can concern: those whose own sending number it is, else those
 * that send from the installation's number (TWILIO_FROM or its Messaging Service).
 */
function accountsReachedAt(db: Db, to: string): string[] {
  const own = db.$client.query<{ id: string }, [string]>('SELECT id FROM accounts WHERE sms_from = ?').all(to)
  if (own.length) return own.map((a) => a.id)
  return db.$client.query<{ id: string }, []>('SELECT id FROM accounts WHERE sms_from IS NULL').all().map((a) => a.id)
}

/** The customer texts these accounts sent (or are sending) to a number, newest first; skipped and failed ones never reached them. */
function textsTo(db: Db, phone: string, accounts: string[]): { account_id: string; job_id: string | null; created_at: number }[] {
  return db.$client.query<{ account_id: string; job_id: string | null; created_at: number }, [string]>(
    "SELECT account_id, job_id, created_at FROM texts WHERE to_phone = ? AND recipient = 'customer' AND status IN ('queued', 'sending', 'sent', 'delivered') ORDER BY created_at DESC LIMIT 100",
  ).all(phone).filter((t) => accounts.includes(t.account_id))
}

export interface InboundText { from: string; to: string; body: string; sid: string | null; media?: string[] }

/** What handling an inbound text answers: the reply to send back, the job it went on, and whether it matched nothing or was a retry. */
export interface InboundAnswer { reply: string | null; jobId: string | null; unmatched?: true; repeated?: true }

/**
 * Handles a text from a customer, routed by the number it was sent to: only accounts that send
 * from that number, and among them only those that texted this customer, ever see it.
 * - STOP (and synonyms) revokes consent for the number in those accounts, START restores it.
 * - HELP is answered with the name of the company that last texted them (none named otherwise).
 * - Every reply, a keyword included, becomes job.customer_message on the job of the last text they got when it is
 *   open, else on their newest open job, else on that last job if it finished within the reply
 *   window.
 * A provider's retry of the same message (same MessageSid) is answered as the first time and
 * changes nothing. Returns the reply to send back, if any.
 */
export function handleInboundText(deps: InboundDeps, msg: InboundText): InboundAnswer {
  const seenAnswer = () => {
    const seen = msg.sid ? deps.db.$client.query<{ reply: string | null; job_id: string | null }, [string]>('SELECT reply, job_id FROM inbound_texts WHERE message_sid = ?').get(msg.sid) : null
    return seen ? { reply: seen.reply, jobId: seen.job_id, repeated: true as const } : null
  }
  const seen = seenAnswer()
  if (seen) return seen
  // Writes under the write lock, looking again first: the same message sent to two instances at
  // once (a provider's retry of a slow answer) is handled by whichever takes the lock first, and
  // the other answers as a retry.
  const once = (write: () => InboundAnswer): InboundAnswer => inTransaction(deps.db, (): InboundAnswer => seenAnswer() ?? write())
  const phone = normalizePhone(msg.from) ?? msg.from
  const to = normalizePhone(msg.to) ?? msg.to
  // A keyword is the whole message, in any case, with spaces and punctuation around it ("Stop.", " stop! "); "2 stop" or "s t o p" is not.
  const keyword = msg.body.replace(/^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu, '').toUpperCase()
  const now = deps.clock.now()
  const reached = accountsReachedAt(deps.db, to)
  const sent = textsTo(deps.db, phone, reached)
  const texted = [...new Set(sent.map((t) => t.account_id))]
  const remember = (reply: string | null, accountId: string | null, jobId: string | null) => {
    if (msg.sid) deps.db.$client.query('INSERT INTO inbound_texts (message_sid, account_id, job_id, reply, created_at) VALUES (?, ?, ?, ?, ?)').run(msg.sid, accountId, jobId, reply, now)
    return { reply, jobId }
  }
  const jobs = new Map<string, JobRow>()
  const jobOf = (id: string) => {
    if (!jobs.has(id)) {
      const raw = deps.db.$client.query<Record<string, any>, [string]>('SELECT * FROM jobs WHERE id = ? AND archived_at IS NULL').get(id)
      if (raw) jobs.set(id, toJobRow(raw))
    }
    return jobs.get(id)
  }
  // A finished job takes replies for the window counted from when it finished (its last status
  // change), not from its last update: otherwise each reply would keep the window open forever.
  const finishedAt = deps.db.$client.query<{ at: number | null }, [string]>("SELECT max(created_at) AS at FROM job_events WHERE job_id = ? AND type = 'job.status_changed'")
  const inWindow = (j: JobRow) => (finishedAt.get(j.id)?.at ?? j.updatedAt) >= now - deps.replyWindowMs
  const last = sent[0]?.job_id ? jobOf(sent[0].job_id) : undefined
  const newestOpen = texted.length
    ? deps.db.$client.query<Record<string, any>, string[]>(
      `SELECT * FROM jobs WHERE json_extract(customer, '$.phone') = ? AND archived_at IS NULL AND status NOT IN ('completed', 'cancelled', 'goa')
          AND account_id IN (${texted.map(() => '?').join(', ')}) ORDER BY created_at DESC LIMIT 1`,
    ).all(phone, ...texted).map(toJobRow)[0]
    : undefined
  const job = last && !isFinished(last.status) ? last : newestOpen ?? (last && inWindow(last) ? last : undefined)
  // A keyword is also a reply the dispatcher should see ("Cancel" may mean the tow, not only the texts).
  const onTimeline = (reply: string | null, accountId: string | null) => {
    if (!job) return remember(reply, accountId, null)
    const ctx = deps.contexts.forCustomer({ accountId: job.accountId, jobId: job.id })
    addCustomerMessage(ctx, job.id, { text: msg.body, via: 'sms', from: phone, messageSid: msg.sid, mediaUrls: msg.media })
    return remember(reply, accountId ?? job.accountId, job.id)
  }
  if (STOP.includes(keyword) || START.includes(keyword)) {
    // Accounts sending from this number that texted the customer or hold a job of theirs.
    const withJobs = deps.db.$client.query<{ account_id: string }, [string]>("SELECT DISTINCT account_id FROM jobs WHERE json_extract(customer, '$.phone') = ?").all(phone).map((r) => r.account_id)
    const concerned = reached.filter((a) => texted.includes(a) || withJobs.includes(a))
    return once(() => {
      for (const a of concerned) {
        if (STOP.includes(keyword)) recordOptOut(deps.db, a, phone, `sms:${keyword}`, now)
        else recordConsent(deps.db, a, phone, `sms:${keyword}`, now, true)
      }
      return onTimeline(null, concerned[0] ?? null)
    })
  }
  if (HELP.includes(keyword)) {
    const account = texted[0] ? findAccountById(deps.db, texted[0]) : undefined
    const company = account ? `${account.name}${account.phone ? ` (${account.phone})` : ''}: texts` : 'Texts'
    return once(() => onTimeline(`${company} about your tow request. Reply STOP to stop, START to resume. Msg&data rates may apply.`, account?.id ?? null))
  }
  if (!job) return once(() => ({ ...remember(null, null, null), unmatched: true }))
  return once(() => onTimeline(null, job.accountId))
}

const RANK: Record<string, number> = { queued: 0, sending: 1, sent: 2, delivered: 3, failed: 3 }

type DeliveryReport = { providerId: string; status: string; errorCode: string | null }

/**
 * Reports for a message this process has sent but not yet recorded (Twilio can report within
 * milliseconds of taking a message, before the sender writes its sid): kept a while, and applied
 * when the sender records the sid (applyEarlyReport).
 */
const early = new Map<string, { report: DeliveryReport; to: string; at: number }>()
const EARLY_KEEP_MS = 5 * 60_000

/** Applies a report that came before the sender recorded `providerId`, if one did. */
export function applyEarlyReport(db: Db, clock: Clock, providerId: string): void {
  const kept = early.get(providerId)
  if (!kept) return
  early.delete(providerId)
  applyDeliveryReport(db, clock, kept.report)
}

/** Applies a provider's delivery report (Twilio status callback); statuses only move forward. */
export function applyDeliveryReport(db: Db, clock: Clock, report: DeliveryReport): boolean {
  const to = report.status === 'delivered' ? 'delivered' : report.status === 'failed' || report.status === 'undelivered' ? 'failed' : report.status === 'sent' ? 'sent' : null
  if (!to) return false
  const row = db.$client.query<{ id: string; status: string }, [string]>('SELECT id, status FROM texts WHERE provider_message_id = ?').get(report.providerId)
  if (!row) {
    const now = clock.now()
    for (const [sid, kept] of early) { if (now - kept.at > EARLY_KEEP_MS || early.size > 10_000) early.delete(sid); else break }
    const before = early.get(report.providerId)
    if (!before || RANK[before.to]! < RANK[to]!) early.set(report.providerId, { report, to, at: now })
    return false
  }
  if ((RANK[row.status] ?? 0) >= RANK[to]!) return false
  db.$client.query('UPDATE texts SET status = ?, error = coalesce(?, error), updated_at = ? WHERE id = ?')
    .run(to, report.errorCode ? `provider error ${report.errorCode}` : null, clock.now(), row.id)
  return true
}

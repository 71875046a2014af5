import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { inTransaction } from '../db/client'
import { normalizePhone } from '../platform/phone'
import { findAccountById } from '../accounts/account.queries'
import { commitJobChange, type JobContext } from '../jobs/job-context'
import { isFinished } from '../jobs/job-status'
import { findJobOrThrow, toJobRow } from '../jobs/job.queries'
import { recordConsent, recordOptOut } from './consent'

const STOP = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'REVOKE']
const START = ['START', 'YES', 'UNSTOP', 'OPTIN']
const HELP = ['HELP', 'INFO']

export interface InboundDeps { db: Db; clock: Clock; publicUrl: string; replyWindowMs: number }

/** Accounts that have texted this number (a STOP or START applies to each of them). */
function accountsOf(db: Db, phone: string): string[] {
  const rows = db.$client.query<{ account_id: string }, [string]>("SELECT DISTINCT account_id FROM jobs WHERE json_extract(customer, '$.phone') = ?").all(phone)
  if (rows.length) return rows.map((r) => r.account_id)
  const fallback = db.$client.query<{ id: string }, []>('SELECT id FROM accounts WHERE is_default = 1').get()
  return fallback ? [fallback.id] : []
}

/**
 * Handles a text from a customer: STOP (and synonyms) revokes consent for that number, START
 * restores it, HELP gets an answer; anything else is threaded onto the sender's most recent
 * open job (or one finished within the reply window) as job.customer_message.
 * Returns the reply to send back, if any.
 */
export function handleInboundText(deps: InboundDeps, msg: { from: string; body: string; sid: string | null; media?: string[] }): { reply: string | null; jobId: string | null; unmatched?: true } {
  const phone = normalizePhone(msg.from) ?? msg.from
  const keyword = msg.body.trim().toUpperCase().replace(/[^A-Z]/g, '')
  const now = deps.clock.now()
  if (STOP.includes(keyword)) {
    inTransaction(deps.db, () => { for (const a of accountsOf(deps.db, phone)) recordOptOut(deps.db, a, phone, `sms:${keyword}`, now) })
    return { reply: null, jobId: null }
  }
  if (START.includes(keyword)) {
    inTransaction(deps.db, () => { for (const a of accountsOf(deps.db, phone)) recordConsent(deps.db, a, phone, `sms:${keyword}`, now, true) })
    return { reply: null, jobId: null }
  }
  const recent = deps.db.$client.query<Record<string, any>, [string]>(
    "SELECT * FROM jobs WHERE json_extract(customer, '$.phone') = ? AND archived_at IS NULL ORDER BY created_at DESC LIMIT 20",
  ).all(phone).map(toJobRow)
  if (HELP.includes(keyword)) {
    const company = recent[0] ? findAccountById(deps.db, recent[0].accountId)?.name : undefined
    return { reply: `${company ?? 'Towline'}: texts about your tow request. Reply STOP to stop, START to resume. Msg&data rates may apply.`, jobId: null }
  }
  // A finished job takes replies for the window counted from when it finished (its last status
  // change), not from its last update: otherwise each reply would keep the window open forever.
  const finishedAt = deps.db.$client.query<{ at: number | null }, [string]>(
    "SELECT max(created_at) AS at FROM job_events WHERE job_id = ? AND type = 'job.status_changed'",
  )
  const job = recent.find((j) => !isFinished(j.status)) ?? recent.find((j) => (finishedAt.get(j.id)?.at ?? j.updatedAt) >= now - deps.replyWindowMs)
  if (!job) return { reply: null, jobId: null, unmatched: true }
  const account = findAccountById(deps.db, job.accountId)!
  const ctx: JobContext = {
    db: deps.db, clock: deps.clock, publicUrl: deps.publicUrl, scope: { accountId: job.accountId, siteIds: null },
    actor: { kind: 'customer' }, companyName: account.name, defaultCountry: account.defaultCountry,
  }
  inTransaction(deps.db, () => {
    commitJobChange(deps.db, ctx, findJobOrThrow(deps.db, ctx.scope, job.id), {}, [{ type: 'job.customer_message', detail: { text: msg.body, from: phone, message_sid: msg.sid, ...(msg.media?.length ? { media_urls: msg.media } : {}) } }])
  })
  return { reply: null, jobId: job.id }
}

const RANK: Record<string, number> = { queued: 0, sending: 1, sent: 2, delivered: 3, failed: 3 }

/** Applies a provider's delivery report (Twilio status callback); statuses only move forward. */
export function applyDeliveryReport(db: Db, clock: Clock, report: { providerId: string; status: string; errorCode: string | null }): boolean {
  const to = report.status === 'delivered' ? 'delivered' : report.status === 'failed' || report.status === 'undelivered' ? 'failed' : report.status === 'sent' ? 'sent' : null
  if (!to) return false
  const row = db.$client.query<{ id: string; status: string }, [string]>('SELECT id, status FROM texts WHERE provider_message_id = ?').get(report.providerId)
  if (!row || (RANK[row.status] ?? 0) >= RANK[to]!) return false
  db.$client.query('UPDATE texts SET status = ?, error = coalesce(?, error), updated_at = ? WHERE id = ?')
    .run(to, report.errorCode ? `provider error ${report.errorCode}` : null, clock.now(), row.id)
  return true
}

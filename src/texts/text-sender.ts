import { inClaimTransaction, inTransaction, rowLock, type Db } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { isGoneLocalOwner, LEASE_OWNER } from '../platform/lease-owner'
import { isOptedOut, recordOptOut } from './consent'
import { applyEarlyReport } from './inbound'
import { ProviderError, type SmsProvider } from './providers'
import { openLinksIn, type JobLinks } from '../jobs/job-links'

/** Twilio's "Attempt to send to unsubscribed recipient": the number texted STOP to Twilio. */
const UNSUBSCRIBED = '21610'
/** Texts of one number sent in one pass, at most. */
const BATCH = 50
/** Due texts read per pass to find the numbers to serve. */
const DUE_READ = 200
/** Outcomes of a run of texts are written at least this often (ms). */
const RECORD_MS = 50
/** A tracking link as a stored text holds it (sealedLinkOf: the job's own sealed token): swapped for the job's current one at send time. */
const SEALED_TRACKING_LINK = /\/t\/\{sealed:[^}]+\}/g

type TextRow = { id: string; account_id: string; job_id: string | null; recipient: string; to_phone: string; from_number: string | null; body: string; status: string; attempts: number; sending_at: number | null; created_at: number; next_attempt_at: number | null; lease_owner: string | null }

/** How old a text may be and still go out, unless configured: six hours. */
export const DEFAULT_MAX_AGE_MS = 6 * 3_600_000

export interface TextSenderDeps {
  db: Db
  clock: Clock
  logger: Logger
  provider: SmsProvider
  retryMs: number[]
  /** How old a text may be and still go out (TOWLINE_SMS_MAX_AGE_HOURS): an older one is skipped as `expired`. */
  maxAgeMs?: number
  /** Opens the job links the outbox stores sealed. */
  links: JobLinks
  /** Texts sent at once (to different numbers). */
  concurrency?: number
  /** How long a text being sent stays leased (the provider's 15 s timeout + 15 s). */
  leaseMs?: number
  /** Who this sender is as a lease holder (LEASE_OWNER; tests run two in one process). */
  owner?: string
}

/**
 * Sends queued texts in the background of `towline serve`.
 * - A text is claimed before the provider is called: `sending`, with a lease, in its own commit.
 *   A lease that runs out (a crash, a second process that died) is settled on the next pass by
 *   asking the provider what became of the text (Twilio lists messages by recipient), never by
 *   sending blindly, so a text is neither lost nor sent twice. A restart on the same machine
 *   takes back the leases of its dead predecessor at once.
 * - Texts to one number go out in the order they were written: a text waits while an older one
 *   to that number is still queued or being sent.
 * - Nothing thrown escapes a timer (Bun would exit): a failed pass is logged and tried again.
 */
export class TextSender {
  private timer: ReturnType<typeof setTimeout> | null = null
  private running = false
  private again = false
  /** Texts skipped as expired in this pass, logged in one line at its end. */
  private expiredInPass = 0
  private stopped = false
  private current: Promise<void> = Promise.resolve()
  private nextAt: number | null = null

  constructor(private deps: TextSenderDeps) {}

  /** How old a text may be and still go out. */
  private get maxAgeMs(): number { return this.deps.maxAgeMs ?? DEFAULT_MAX_AGE_MS }

  private get owner() { return this.deps.owner ?? LEASE_OWNER }
  private get leaseMs() { return this.deps.leaseMs ?? 30_000 }

  /** Takes back what a stopped process of this machine was sending, then starts the loop. */
  async start(): Promise<void> {
    try {
      const now = this.deps.clock.now()
      const owners = this.q<{ owner: string | null }>("SELECT DISTINCT lease_owner AS owner FROM texts WHERE status = 'sending'").all()
      for (const { owner } of owners) {
        // Its lease is over: the next pass asks the provider about it before anything is resent.
        if (isGoneLocalOwner(owner, this.owner)) this.q("UPDATE texts SET next_attempt_at = ? WHERE status = 'sending' AND lease_owner IS ?").run(now, owner)
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'could not take back texts a stopped process was sending; their leases run out by themselves')
    }
    this.wake()
  }

  /** When (clock time) the last pass found the next text falls due, or null when none waits (for tests). */
  get nextPassAt(): number | null { return this.nextAt }

  /** Asks for a pass soon. */
  wake(): void {
    if (this.stopped) return
    if (this.running) { this.again = true; return }
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.timer = null; this.current = this.pass() }, 0)
  }

  private q<T>(sql: string) { return this.deps.db.$client.query<T, any[]>(sql) }

  /** Settles texts whose lease ran out by asking the provider whether it took them. */
  private async settleExpired(now: number): Promise<void> {
    const expired = this.q<TextRow>("SELECT * FROM texts WHERE status = 'sending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?").all(now, BATCH)
    // More than a batch: the rest are settled in the next pass, at once.
    if (expired.length === BATCH) this.again = true
    // Messages already matched to a text are never matched to another (two identical texts to one number).
    const known = this.q<{ n: number }>('SELECT count(*) AS n FROM texts WHERE provider_message_id = ?')
    for (const t of expired) {
      if (this.stopped) return
      let found = null
      try {
        found = await this.deps.provider.findSent({ textId: t.id, to: t.to_phone, body: openLinksIn(this.deps.links, t.body), from: t.from_number === this.deps.provider.defaultFrom ? null : t.from_number }, t.sending_at ?? t.created_at, (sid) => known.get(sid)!.n > 0)
      } catch (err) {
        // Ask again after another lease's time; the text stays claimed meanwhile.
        this.q("UPDATE texts SET next_attempt_at = ? WHERE id = ? AND status = 'sending' AND next_attempt_at = ?").run(this.deps.clock.now() + this.leaseMs, t.id, t.next_attempt_at)
        this.deps.logger.warn({ err, text_id: t.id }, 'could not ask the provider about a text caught mid-send; will ask again')
        continue
      }
      const later = this.deps.clock.now()
      if (found) {
        this.q("UPDATE texts SET status = 'sent', provider_message_id = ?, error = NULL, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'sending' AND next_attempt_at = ?").run(found.id, later, t.id, t.next_attempt_at)
        applyEarlyReport(this.deps.db, this.deps.clock, found.id)
      }
      // Not taken after a timeout on its last attempt (no lease: sendRun left it to be asked about): failed, as any last attempt.
      else if (t.lease_owner === null && t.attempts > this.deps.retryMs.length) this.q("UPDATE texts SET status = 'failed', next_attempt_at = NULL, updated_at = ? WHERE id = ? AND status = 'sending' AND next_attempt_at = ?").run(later, t.id, t.next_attempt_at)
      else this.q("UPDATE texts SET status = 'queued', next_attempt_at = ?, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'sending' AND next_attempt_at = ?").run(later, later, t.id, t.next_attempt_at)
      this.deps.logger.info({ text_id: t.id, found: !!found }, 'settled a text caught mid-send')
    }
  }

  private async pass(): Promise<void> {
    this.running = true
    try {
      await this.settleExpired(this.deps.clock.now())
      const now = this.deps.clock.now()
      // The numbers that have a text due; each number's open texts then go out in the order they
      // were written, one after the other, stopping at one that waits for a retry or is being sent.
      const due = this.q<{ to_phone: string }>("SELECT to_phone FROM texts WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, rowid LIMIT ?").all(now, DUE_READ)
      const phones = [...new Set(due.map((t) => t.to_phone))]
      let full = due.length === DUE_READ
      const sendInOrder = async (phone: string) => {
        const open = this.q<TextRow>('SELECT * FROM texts WHERE to_phone = ? AND next_attempt_at IS NOT NULL ORDER BY created_at, id LIMIT ?').all(phone, BATCH)
        if (open.length === BATCH) full = true
        // The leading run of texts that may go now: the first one waiting for a retry, or being sent, stops it.
        const run: TextRow[] = []
        for (const t of open) { if (t.status !== 'queued' || t.next_attempt_at! > now) break; run.push(t) }
        if (run.length && !this.stopped) await this.sendRun(run)
      }
      // Different numbers in parallel (a few at a time), each number in order.
      const width = this.deps.concurrency ?? 4
      let i = 0
      await Promise.all(Array.from({ length: Math.min(width, phones.length) }, async () => { while (i < phones.length && !this.stopped) await sendInOrder(phones[i++]!) }))
      if (full) this.again = true
      if (this.expiredInPass) {
        this.deps.logger.warn({ texts: this.expiredInPass, max_age_hours: this.maxAgeMs / 3_600_000 }, 'texts written too long ago to be sent were skipped as expired')
        this.expiredInPass = 0
      }
      // The next time something falls due. A text already due that did not go out waits behind
      // another to its number (a retry, a text being sent: their times are later than now, or
      // their commit wakes this sender), so it does not make the sender look again at once.
      const next = this.q<{ at: number | null }>('SELECT min(next_attempt_at) AS at FROM texts WHERE next_attempt_at > ?').get(now)
      this.nextAt = next?.at ?? null
      if (next?.at && !this.stopped && !this.again) this.timer = setTimeout(() => this.wake(), Math.max(0, Math.min(next.at - this.deps.clock.now(), 60_000)))
    } catch (err) {
      this.deps.logger.error({ err }, 'text sender pass failed; trying again in 5 s')
      if (!this.stopped) this.timer = setTimeout(() => this.wake(), 5_000)
    } finally {
      this.running = false
      if (this.again) { this.again = false; this.wake() }
    }
  }

  /**
   * Sends a run of one number's texts, in order: claims them in one commit (a STOP that arrived
   * since they were queued skips them instead), sends them one after the other, and records the
   * outcomes in batches (at least every RECORD_MS, and before returning). A text that will be
   * retried stops the run: the rest are handed back and wait behind it.
   */
  private async sendRun(run: TextRow[]): Promise<void> {
    const now = this.deps.clock.now()
    const lease = now + this.leaseMs * run.length
    // Each text goes out from its own account's number (one number's run can hold texts of several accounts).
    const fromOf = new Map<string, string | null>()
    const from = (t: TextRow) => {
      if (!fromOf.has(t.account_id)) fromOf.set(t.account_id, this.q<{ sms_from: string | null }>('SELECT sms_from FROM accounts WHERE id = ?').get(t.account_id)?.sms_from ?? null)
      return fromOf.get(t.account_id)!
    }
    const jobOf = this.deps.db.$client.query<{ customer: string; tracking_token_sealed: string | null }, [string]>('SELECT customer, tracking_token_sealed FROM jobs WHERE id = ?')
    /**
     * What a customer's text meets at send time: consent withdrawn (the job's texts allowed
     * turned off) or the number gone skip it, as a STOP does; a corrected number re-addresses it;
     * its tracking link is the job's current one.
     */
    const customerNow = (t: TextRow): { skip: string | null; phone: string; body: string } => {
      const job = t.job_id ? jobOf.get(t.job_id) : null
      if (!job) return { skip: isOptedOut(this.deps.db, t.account_id, t.to_phone) ? 'opted_out' : null, phone: t.to_phone, body: t.body }
      const customer = JSON.parse(job.customer) as { phone?: string | null; sms_consent?: boolean }
      const phone = customer.phone ?? null
      const skip = !customer.sms_consent ? 'no_consent' : !phone ? 'no_phone' : isOptedOut(this.deps.db, t.account_id, phone) ? 'opted_out' : null
      const body = job.tracking_token_sealed ? t.body.replace(SEALED_TRACKING_LINK, `/t/{sealed:${job.tracking_token_sealed}}`) : t.body
      return { skip, phone: phone ?? t.to_phone, body }
    }
    // A claim transaction: the run's texts are locked without waiting (FOR UPDATE SKIP LOCKED on
    // PostgreSQL), not under the write lock, so instances claim side by side; the run stops at
    // the first text another transaction holds, and the rest wait behind it.
    let expired = 0
    const claimed: TextRow[] = inClaimTransaction(this.deps.db, () => {
      const taken: TextRow[] = []
      const locked = this.deps.db.engine === 'sqlite' ? null : new Set(this.q<{ id: string }>(
        `SELECT id FROM texts WHERE to_phone = ? AND status = 'queued' AND next_attempt_at <= ? ORDER BY created_at, id LIMIT ?${rowLock(this.deps.db, 'skip')}`,
      ).all(run[0]!.to_phone, now, BATCH).map((r) => r.id))
      for (const t of run) {
        if (locked && !locked.has(t.id)) break
        // Written long ago and never sent (the service was down, the provider out, or an outbox
        // from a version without a sender): "your driver is on the way" is then wrong, not late.
        if (now - t.created_at > this.maxAgeMs) {
          this.q("UPDATE texts SET status = 'skipped', skip_reason = 'expired', next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'queued'").run(now, t.id)
          expired++
          continue
        }
        if (t.recipient === 'customer') {
          // The job as it is now, not as it was when the text was queued (a retry can wait an hour).
          const now_ = customerNow(t)
          if (now_.skip) {
            this.q("UPDATE texts SET status = 'skipped', skip_reason = ?, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'queued'").run(now_.skip, now, t.id)
            continue
          }
          if (now_.phone !== t.to_phone) {
            // The customer's number was corrected meanwhile: the text goes there, in that number's order.
            this.q("UPDATE texts SET to_phone = ?, updated_at = ? WHERE id = ? AND status = 'queued'").run(now_.phone, now, t.id)
            this.again = true
            continue
          }
          if (now_.body !== t.body) {
            // A new tracking link was made meanwhile: the old one answers 410.
            this.q("UPDATE texts SET body = ?, updated_at = ? WHERE id = ? AND status = 'queued'").run(now_.body, now, t.id)
            t.body = now_.body
          }
        }
        const got = this.q(
          "UPDATE texts SET status = 'sending', sending_at = ?, next_attempt_at = ?, lease_owner = ?, attempts = attempts + 1, provider = ?, from_number = ?, updated_at = ? WHERE id = ? AND status = 'queued' AND next_attempt_at = ?",
        ).run(now, lease, this.owner, this.deps.provider.name, from(t) ?? this.deps.provider.defaultFrom, now, t.id, t.next_attempt_at)
        if (got.changes === 0) break // taken by someone else: the rest wait behind it
        taken.push(t)
      }
      return taken
    })
    this.expiredInPass += expired
    // Every update below holds only while the lease does.
    const mine = "id = ? AND status = 'sending' AND next_attempt_at = ?"
    const outcomes: (() => void)[] = []
    let recordedAt = performance.now()
    const record = () => {
      if (!outcomes.length) return
      const batch = outcomes.splice(0)
      inTransaction(this.deps.db, () => { for (const write of batch) write() })
      recordedAt = performance.now()
    }
    let i = 0
    try {
      for (; i < claimed.length && !this.stopped; i++) {
        const t = claimed[i]!
        try {
          const sent = await this.deps.provider.send({ textId: t.id, to: t.to_phone, body: openLinksIn(this.deps.links, t.body), from: from(t) })
          const at = this.deps.clock.now()
          outcomes.push(() => {
            this.q(`UPDATE texts SET status = 'sent', provider_message_id = ?, error = NULL, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(sent.id, at, t.id, lease)
            applyEarlyReport(this.deps.db, this.deps.clock, sent.id)
          })
        } catch (err) {
          const e = err instanceof ProviderError ? err : new ProviderError((err as Error).message, true)
          const later = this.deps.clock.now()
          if (e.code === UNSUBSCRIBED && t.recipient === 'customer') {
            // The number texted STOP to Twilio directly (Twilio's own opt-out handling, e.g. before
            // our inbound webhook was set up): keep the opt-out here too so later texts are skipped.
            outcomes.push(() => {
              recordOptOut(this.deps.db, t.account_id, t.to_phone, 'twilio:21610', later)
              this.q(`UPDATE texts SET status = 'skipped', skip_reason = 'opted_out', error = ?, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(e.message, later, t.id, lease)
            })
            this.deps.logger.info({ text_id: t.id }, 'the number unsubscribed at the provider; recorded as opted out')
            // Later texts to that number are now opted out too: hand them back to be skipped.
            i++
            break
          }
          // t.attempts counts those before this one: after the first failure wait retryMs[0], and so on; then give up.
          const wait = e.retryable ? this.deps.retryMs[t.attempts] : undefined
          // Perhaps taken (a timeout after sending): it stays `sending` until its retry time, when
          // settleExpired asks the provider before anything is sent again, as after a crash.
          // With no retry left it is asked about at once: a text the provider took is never called failed.
          if (e.retryable && e.maybeSent) {
            outcomes.push(() => this.q(`UPDATE texts SET error = ?, next_attempt_at = ?, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(e.message, later + (wait ?? 0), later, t.id, lease))
            if (wait === undefined) this.again = true
          }
          else if (wait !== undefined) outcomes.push(() => this.q(`UPDATE texts SET status = 'queued', error = ?, next_attempt_at = ?, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(e.message, later + wait, later, t.id, lease))
          else outcomes.push(() => this.q(`UPDATE texts SET status = 'failed', error = ?, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(e.message, later, t.id, lease))
          this.deps.logger.warn({ text_id: t.id, error: e.message, retry: wait !== undefined, maybe_sent: e.maybeSent }, 'text not sent')
          if (wait !== undefined || (e.retryable && e.maybeSent)) { i++; break }
        }
        // A slow provider (Twilio: a tenth of a second and more a text) has each outcome written at once.
        if (performance.now() - recordedAt >= RECORD_MS) record()
      }
    } finally {
      // What was not sent goes back, due as it was, behind any text that now waits for a retry.
      const rest = claimed.slice(i)
      outcomes.push(() => { for (const t of rest) this.q(`UPDATE texts SET status = 'queued', next_attempt_at = ?, lease_owner = NULL WHERE ${mine}`).run(t.next_attempt_at, t.id, lease) })
      record()
    }
  }

  /** Stops the loop and waits (up to `graceMs`) for the pass in flight. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await Promise.race([this.current, Bun.sleep(graceMs)])
  }
}

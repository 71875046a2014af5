import { inTransaction, type Db } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { isGoneLocalOwner, LEASE_OWNER } from '../platform/lease-owner'
import { isOptedOut, recordOptOut } from './consent'
import { ProviderError, type SmsProvider } from './providers'
import { openLinksIn, type JobLinks } from '../jobs/job-links'

/** Twilio's "Attempt to send to unsubscribed recipient": the number texted STOP to Twilio. */
const UNSUBSCRIBED = '21610'
/** Texts handed to the provider in one pass. */
const BATCH = 50

type TextRow = { id: string; account_id: string; recipient: string; to_phone: string; from_number: string | null; body: string; attempts: number; sending_at: number | null; created_at: number; next_attempt_at: number | null; lease_owner: string | null }

export interface TextSenderDeps {
  db: Db
  clock: Clock
  logger: Logger
  provider: SmsProvider
  retryMs: number[]
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
  private stopped = false
  private current: Promise<void> = Promise.resolve()

  constructor(private deps: TextSenderDeps) {}

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
      if (found) this.q("UPDATE texts SET status = 'sent', provider_message_id = ?, error = NULL, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'sending' AND next_attempt_at = ?").run(found.id, later, t.id, t.next_attempt_at)
      else this.q("UPDATE texts SET status = 'queued', next_attempt_at = ?, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'sending' AND next_attempt_at = ?").run(later, later, t.id, t.next_attempt_at)
      this.deps.logger.info({ text_id: t.id, found: !!found }, 'settled a text caught mid-send')
    }
  }

  private async pass(): Promise<void> {
    this.running = true
    try {
      await this.settleExpired(this.deps.clock.now())
      const now = this.deps.clock.now()
      // The oldest open text of each number, when it is due: later ones to that number wait their turn.
      const due = this.q<TextRow>(
        `SELECT t.* FROM texts t WHERE t.status = 'queued' AND t.next_attempt_at <= ?
            AND NOT EXISTS (SELECT 1 FROM texts o WHERE o.to_phone = t.to_phone AND o.next_attempt_at IS NOT NULL
                              AND (o.created_at < t.created_at OR (o.created_at = t.created_at AND o.id < t.id)))
          ORDER BY t.next_attempt_at, t.rowid LIMIT ?`,
      ).all(now, BATCH)
      const width = this.deps.concurrency ?? 4
      for (let i = 0; i < due.length && !this.stopped; i += width) await Promise.all(due.slice(i, i + width).map((t) => this.sendOne(t)))
      if (due.length === BATCH) this.again = true
      const next = this.q<{ at: number | null }>('SELECT min(next_attempt_at) AS at FROM texts WHERE next_attempt_at IS NOT NULL').get()
      if (next?.at && !this.stopped && !this.again) this.timer = setTimeout(() => this.wake(), Math.max(0, Math.min(next.at - this.deps.clock.now(), 60_000)))
    } catch (err) {
      this.deps.logger.error({ err }, 'text sender pass failed; trying again in 5 s')
      if (!this.stopped) this.timer = setTimeout(() => this.wake(), 5_000)
    } finally {
      this.running = false
      if (this.again) { this.again = false; this.wake() }
    }
  }

  private async sendOne(t: TextRow): Promise<void> {
    const now = this.deps.clock.now()
    // Consent is checked again at send time: a STOP may have arrived after the text was queued.
    if (t.recipient === 'customer' && isOptedOut(this.deps.db, t.account_id, t.to_phone)) {
      this.q("UPDATE texts SET status = 'skipped', skip_reason = 'opted_out', next_attempt_at = NULL, updated_at = ? WHERE id = ? AND status = 'queued'").run(now, t.id)
      return
    }
    const from = this.q<{ sms_from: string | null }>('SELECT sms_from FROM accounts WHERE id = ?').get(t.account_id)?.sms_from ?? null
    const lease = now + this.leaseMs
    const claimed = this.q(
      "UPDATE texts SET status = 'sending', sending_at = ?, next_attempt_at = ?, lease_owner = ?, attempts = attempts + 1, provider = ?, from_number = ?, updated_at = ? WHERE id = ? AND status = 'queued' AND next_attempt_at = ?",
    ).run(now, lease, this.owner, this.deps.provider.name, from ?? this.deps.provider.defaultFrom, now, t.id, t.next_attempt_at)
    if (claimed.changes === 0) return
    // Every update below holds only while the lease does (next_attempt_at = lease, sending_at = now).
    const mine = 'id = ? AND status = \'sending\' AND next_attempt_at = ?'
    try {
      const sent = await this.deps.provider.send({ textId: t.id, to: t.to_phone, body: openLinksIn(this.deps.links, t.body), from })
      this.q(`UPDATE texts SET status = 'sent', provider_message_id = ?, error = NULL, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(sent.id, this.deps.clock.now(), t.id, lease)
    } catch (err) {
      const e = err instanceof ProviderError ? err : new ProviderError((err as Error).message, true)
      const later = this.deps.clock.now()
      if (e.code === UNSUBSCRIBED && t.recipient === 'customer') {
        // The number texted STOP to Twilio directly (Twilio's own opt-out handling, e.g. before
        // our inbound webhook was set up): keep the opt-out here too so later texts are skipped.
        inTransaction(this.deps.db, () => {
          recordOptOut(this.deps.db, t.account_id, t.to_phone, 'twilio:21610', later)
          this.q(`UPDATE texts SET status = 'skipped', skip_reason = 'opted_out', error = ?, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(e.message, later, t.id, lease)
        })
        this.deps.logger.info({ text_id: t.id }, 'the number unsubscribed at the provider; recorded as opted out')
        return
      }
      // t.attempts counts those before this one: after the first failure wait retryMs[0], and so on; then give up.
      const wait = e.retryable ? this.deps.retryMs[t.attempts] : undefined
      if (wait !== undefined) this.q(`UPDATE texts SET status = 'queued', error = ?, next_attempt_at = ?, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(e.message, later + wait, later, t.id, lease)
      else this.q(`UPDATE texts SET status = 'failed', error = ?, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE ${mine}`).run(e.message, later, t.id, lease)
      this.deps.logger.warn({ text_id: t.id, error: e.message, retry: wait !== undefined }, 'text not sent')
    }
  }

  /** Stops the loop and waits (up to `graceMs`) for the pass in flight. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await Promise.race([this.current, Bun.sleep(graceMs)])
  }
}

import { inTransaction, type Db } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { isOptedOut, recordOptOut } from './consent'
import { ProviderError, type SmsProvider } from './providers'

/** Twilio's "Attempt to send to unsubscribed recipient": the number texted STOP to Twilio. */
const UNSUBSCRIBED = '21610'

type TextRow = { id: string; account_id: string; recipient: string; to_phone: string; body: string; attempts: number; sending_at: number | null; created_at: number }

/**
 * Sends queued texts in the background of `towline serve`. A text is marked `sending` (with
 * the time) in its own commit before the provider is called; after a crash, a text caught in
 * `sending` is looked up at the provider (Twilio lists messages by recipient and date) and
 * settled from what it says before anything is resent, so a text is neither lost nor sent twice.
 */
export class TextSender {
  private timer: ReturnType<typeof setTimeout> | null = null
  private running = false
  private again = false
  private stopped = false
  private current: Promise<void> = Promise.resolve()

  constructor(private deps: { db: Db; clock: Clock; logger: Logger; provider: SmsProvider; retryMs: number[]; concurrency?: number }) {}

  /** Settles texts a crash left in `sending`, then starts the loop. */
  async start(): Promise<void> {
    await this.recover()
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

  async recover(): Promise<void> {
    const stuck = this.q<TextRow>("SELECT * FROM texts WHERE status = 'sending'").all()
    for (const t of stuck) {
      let found = null
      try {
        found = await this.deps.provider.findSent({ textId: t.id, to: t.to_phone, body: t.body }, t.sending_at ?? t.created_at)
      } catch (err) {
        this.deps.logger.warn({ err, text_id: t.id }, 'could not ask the provider about a text caught mid-send; will ask again')
        continue
      }
      const now = this.deps.clock.now()
      if (found) this.q("UPDATE texts SET status = 'sent', provider_message_id = ?, error = NULL, updated_at = ? WHERE id = ? AND status = 'sending'").run(found.id, now, t.id)
      else this.q("UPDATE texts SET status = 'queued', next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'sending'").run(now, now, t.id)
      this.deps.logger.info({ text_id: t.id, found: !!found }, 'settled a text caught mid-send')
    }
  }

  private async pass(): Promise<void> {
    this.running = true
    try {
      const now = this.deps.clock.now()
      const due = this.q<TextRow>("SELECT * FROM texts WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, rowid LIMIT ?").all(now, 50)
      const width = this.deps.concurrency ?? 4
      for (let i = 0; i < due.length && !this.stopped; i += width) await Promise.all(due.slice(i, i + width).map((t) => this.sendOne(t)))
      if (due.length === 50) this.again = true
      const next = this.q<{ at: number | null }>("SELECT min(next_attempt_at) AS at FROM texts WHERE status = 'queued'").get()
      if (next?.at && !this.stopped && !this.again) this.timer = setTimeout(() => this.wake(), Math.max(0, Math.min(next.at - this.deps.clock.now(), 60_000)))
    } catch (err) {
      this.deps.logger.error({ err }, 'text sender pass failed')
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
      this.q("UPDATE texts SET status = 'skipped', skip_reason = 'opted_out', next_attempt_at = NULL, updated_at = ? WHERE id = ?").run(now, t.id)
      return
    }
    const claimed = this.q("UPDATE texts SET status = 'sending', sending_at = ?, attempts = attempts + 1, provider = ?, updated_at = ? WHERE id = ? AND status = 'queued'")
      .run(now, this.deps.provider.name, now, t.id)
    if (claimed.changes === 0) return
    try {
      const sent = await this.deps.provider.send({ textId: t.id, to: t.to_phone, body: t.body })
      this.q("UPDATE texts SET status = 'sent', provider_message_id = ?, error = NULL, next_attempt_at = NULL, updated_at = ? WHERE id = ?").run(sent.id, this.deps.clock.now(), t.id)
    } catch (err) {
      const e = err instanceof ProviderError ? err : new ProviderError((err as Error).message, true)
      if (e.code === UNSUBSCRIBED && t.recipient === 'customer') {
        // The number texted STOP to Twilio directly (Twilio's own opt-out handling, e.g. before
        // our inbound webhook was set up): keep the opt-out here too so later texts are skipped.
        const later = this.deps.clock.now()
        inTransaction(this.deps.db, () => {
          recordOptOut(this.deps.db, t.account_id, t.to_phone, 'twilio:21610', later)
          this.q("UPDATE texts SET status = 'skipped', skip_reason = 'opted_out', error = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?").run(e.message, later, t.id)
        })
        this.deps.logger.info({ text_id: t.id }, 'the number unsubscribed at the provider; recorded as opted out')
        return
      }
      // attempts counts this one: after the first failure wait retryMs[0], and so on; then give up.
      const wait = e.retryable ? this.deps.retryMs[t.attempts] : undefined
      const later = this.deps.clock.now()
      if (wait !== undefined) this.q("UPDATE texts SET status = 'queued', error = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?").run(e.message, later + wait, later, t.id)
      else this.q("UPDATE texts SET status = 'failed', error = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?").run(e.message, later, t.id)
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

import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { onDeliveriesQueued } from './fan-out'
import { signingSecrets } from './manage-endpoints'
import { recordAttempt } from './record-attempt'
import { envelope, sendAttempt, type SendSettings } from './send-attempt'
import { toEndpointRow } from './webhook.queries'

export interface SchedulerDeps {
  db: Db
  clock: Clock
  logger: Logger
  schedule: number[]
  send: Omit<SendSettings, 'signal'>
  /** Deliveries in flight to one endpoint at once (1 keeps each endpoint's deliveries in order). */
  perEndpoint?: number
  /** Deliveries in flight overall. */
  global?: number
}

type DueRow = Record<string, any>

/**
 * Sends webhook deliveries in the background of `towline serve`. A single-flight timer loop
 * (woken at once when deliveries are written) picks due deliveries of active endpoints oldest
 * first, at most `perEndpoint` in flight per endpoint and `global` overall, so one slow or dead
 * endpoint never holds up the others. Everything it needs is in the database: after a crash,
 * every unfinished delivery goes out again with the same id.
 */
export class DeliveryScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private inflight = new Map<string, Promise<void>>()
  private perEndpoint = new Map<string, number>()
  private stopped = false
  private abort = new AbortController()
  private due
  private nextDue

  constructor(private deps: SchedulerDeps) {
    this.due = deps.db.$client.query<DueRow, [number, number]>(
      `SELECT d.id AS d_id, d.endpoint_id, d.event_type, d.data, d.attempts, d.first_attempt_at, d.status AS d_status, d.created_at AS d_created_at,
              d.account_id AS d_account_id, e.*
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND e.status = 'active' AND e.deleted_at IS NULL
        ORDER BY d.rowid LIMIT ?`,
    )
    this.nextDue = deps.db.$client.query<{ at: number | null }, []>(
      `SELECT min(d.next_attempt_at) AS at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND e.status = 'active' AND e.deleted_at IS NULL`,
    )
  }

  /** Starts the loop (and sends whatever a previous run left unfinished). */
  start(): void {
    onDeliveriesQueued(() => this.wake())
    this.wake()
  }

  /** Runs a pass soon. */
  wake(): void {
    if (this.stopped) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => this.tick(), 0)
  }

  private tick(): void {
    this.timer = null
    if (this.stopped) return
    const cap = this.deps.global ?? 64
    const per = this.deps.perEndpoint ?? 1
    try {
      const now = this.deps.clock.now()
      for (const row of this.due.all(now, 500)) {
        if (this.inflight.size >= cap) break
        if (this.inflight.has(row.d_id) || (this.perEndpoint.get(row.endpoint_id) ?? 0) >= per) continue
        this.launch(row)
      }
      // Sleep until the next retry falls due; deliveries finishing or being written wake us sooner.
      const { at } = this.nextDue.get()!
      if (at !== null && at > now) this.timer = setTimeout(() => this.tick(), Math.min(at - now, 60_000))
      else if (at !== null && this.inflight.size === 0) this.timer = setTimeout(() => this.tick(), 50)
    } catch (err) {
      this.deps.logger.error({ err }, 'webhook scheduler pass failed')
      this.timer = setTimeout(() => this.tick(), 1000)
    }
  }

  private launch(row: DueRow): void {
    const endpoint = toEndpointRow(row)
    const attempt = row.attempts + 1
    this.perEndpoint.set(endpoint.id, (this.perEndpoint.get(endpoint.id) ?? 0) + 1)
    const body = envelope({ id: row.d_id, type: row.event_type, accountId: row.d_account_id, attempt, createdAt: row.d_created_at, data: row.data })
    const work = (async () => {
      const result = await sendAttempt({ url: endpoint.url, secrets: signingSecrets(endpoint, this.deps.clock.now()) }, body,
        { deliveryId: row.d_id, eventType: row.event_type, attempt }, { ...this.deps.send, signal: this.abort.signal })
      if (this.abort.signal.aborted) return // shutting down: the delivery stays pending and goes out after restart
      const outcome = recordAttempt(this.deps.db, { id: row.d_id, endpointId: endpoint.id, eventType: row.event_type, attempts: row.attempts, firstAttemptAt: row.first_attempt_at, status: row.d_status },
        result, { nowMs: this.deps.clock.now(), schedule: this.deps.schedule, countsTowardPause: true, retries: true })
      if (outcome.paused) this.deps.logger.warn({ endpoint_id: endpoint.id }, 'webhook endpoint paused after repeated failures')
    })()
      .catch((err) => this.deps.logger.error({ err, delivery_id: row.d_id }, 'webhook delivery failed to record'))
      .finally(() => {
        this.inflight.delete(row.d_id)
        const n = (this.perEndpoint.get(endpoint.id) ?? 1) - 1
        if (n <= 0) this.perEndpoint.delete(endpoint.id)
        else this.perEndpoint.set(endpoint.id, n)
        this.wake()
      })
    this.inflight.set(row.d_id, work)
  }

  /** Stops the loop: waits up to `graceMs` for deliveries in flight, then abandons them (they stay pending). */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    onDeliveriesQueued(() => {})
    const all = Promise.allSettled([...this.inflight.values()])
    await Promise.race([all, Bun.sleep(graceMs)])
    this.abort.abort()
    await Promise.race([all, Bun.sleep(200)])
  }
}

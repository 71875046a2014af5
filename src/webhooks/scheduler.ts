import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { onDeliveriesQueued } from './fan-out'
import { signingSecrets } from './manage-endpoints'
import { recordAttempt } from './record-attempt'
import { envelope, sendAttempt, type SendSettings } from './send-attempt'
import { toEndpointRow, type EndpointRow } from './webhook.queries'

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
 * (woken at once when deliveries are written) picks each active endpoint's due deliveries
 * oldest first, at most `perEndpoint` in flight per endpoint and `global` overall, so one slow
 * or dead endpoint never holds up the others. Everything it needs is in the database: after a crash,
 * every unfinished delivery goes out again with the same id.
 */
export class DeliveryScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private inflight = new Map<string, Promise<void>>()
  private perEndpoint = new Map<string, number>()
  private stopped = false
  private abort = new AbortController()
  private wakePending = false
  private turn = 0
  private activeEndpoints
  private dueFor
  private nextDueFor

  constructor(private deps: SchedulerDeps) {
    this.activeEndpoints = deps.db.$client.query<Record<string, any>, []>("SELECT * FROM webhook_endpoints WHERE status = 'active' AND deleted_at IS NULL")
    this.dueFor = deps.db.$client.query<DueRow, [string, number, number]>(
      `SELECT id AS d_id, endpoint_id, event_type, data, attempts, first_attempt_at, status AS d_status, created_at AS d_created_at, account_id AS d_account_id
         FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ?
        ORDER BY next_attempt_at, rowid LIMIT ?`,
    )
    this.nextDueFor = deps.db.$client.query<{ at: number | null }, [string]>(
      "SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending'",
    )
  }

  /** Starts the loop (and sends whatever a previous run left unfinished). */
  start(): void {
    onDeliveriesQueued(() => this.wake())
    this.wake()
  }

  /** Runs a pass soon (passes asked for in the same turn run once). */
  wake(): void {
    if (this.stopped || this.wakePending) return
    this.wakePending = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.wakePending = false; this.tick() }, 0)
  }

  /**
   * One pass: each active endpoint in turn gets its oldest due deliveries up to its own cap,
   * so an endpoint with a long backlog never starves the others; then sleep until the next
   * retry falls due (deliveries finishing or being written wake the loop sooner).
   */
  private tick(): void {
    this.timer = null
    if (this.stopped) return
    const cap = this.deps.global ?? 64
    const per = this.deps.perEndpoint ?? 1
    try {
      const now = this.deps.clock.now()
      let next: number | null = null
      const endpoints = this.activeEndpoints.all()
      // Start each pass at another endpoint, so under the global cap none is always served last.
      this.turn = (this.turn + 1) % Math.max(1, endpoints.length)
      for (const raw of [...endpoints.slice(this.turn), ...endpoints.slice(0, this.turn)]) {
        const endpoint = toEndpointRow(raw)
        const room = Math.min(per - (this.perEndpoint.get(endpoint.id) ?? 0), cap - this.inflight.size)
        if (room > 0) for (const row of this.dueFor.all(endpoint.id, now, room)) if (!this.inflight.has(row.d_id)) this.launch(endpoint, row)
        const { at } = this.nextDueFor.get(endpoint.id)!
        if (at !== null && at > now && (next === null || at < next)) next = at
      }
      if (next !== null) this.timer = setTimeout(() => this.tick(), Math.min(next - now, 60_000))
    } catch (err) {
      this.deps.logger.error({ err }, 'webhook scheduler pass failed')
      this.timer = setTimeout(() => this.tick(), 1000)
    }
  }

  private launch(endpoint: EndpointRow, row: DueRow): void {
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

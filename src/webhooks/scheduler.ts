import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { onDeliveriesQueued } from './fan-out'
import { recordAttempt } from './record-attempt'
import { attemptDelivery, type AttemptResult, type SendSettings } from './send-attempt'
import { DELIVERIES_WITH_DATA, DELIVERY_DATA, toEndpointRow, type EndpointRow } from './webhook.queries'

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
interface Finished { endpoint: EndpointRow; row: DueRow; result: AttemptResult }

/**
 * Sends webhook deliveries in the background of `towline serve`.
 * - A full pass (on start, when deliveries are written, when a retry falls due, on resume)
 *   serves each active endpoint in turn with its oldest due deliveries: at most `perEndpoint`
 *   in flight per endpoint and `global` overall, so one slow or dead endpoint never holds up
 *   the others.
 * - Finished attempts are recorded in batches, one transaction per turn of the event loop; a
 *   delivery counts as in flight until its record is written, so it is never sent twice by
 *   one process. The endpoint whose slot freed is refilled at once.
 * - Everything lives in the database: after a crash, every unfinished delivery goes out again
 *   with the same id (at least once).
 */
export class DeliveryScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private timerAt: number | null = null
  private passPending = false
  private flushPending = false
  private stopped = false
  private turn = 0
  private abort = new AbortController()
  private endpoints = new Map<string, EndpointRow>()
  private inflight = new Map<string, Promise<void>>()
  private perEndpoint = new Map<string, number>()
  private finished: Finished[] = []
  private activeEndpoints
  private dueFor
  private nextDue

  constructor(private deps: SchedulerDeps) {
    this.activeEndpoints = deps.db.$client.query<Record<string, any>, []>("SELECT * FROM webhook_endpoints WHERE status = 'active' AND deleted_at IS NULL")
    this.dueFor = deps.db.$client.query<DueRow, [string, number, number]>(
      `SELECT d.id AS d_id, d.endpoint_id, d.event_type, ${DELIVERY_DATA}, d.attempts, d.first_attempt_at, d.status AS d_status,
              d.created_at AS d_created_at, d.account_id AS d_account_id
         FROM ${DELIVERIES_WITH_DATA}
        WHERE d.endpoint_id = ? AND d.status = 'pending' AND d.next_attempt_at <= ?
        ORDER BY d.next_attempt_at, d.rowid LIMIT ?`,
    )
    // The first future retry of an active endpoint, walking the due index in order.
    this.nextDue = deps.db.$client.query<{ at: number }, [number]>(
      `SELECT d.next_attempt_at AS at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND d.next_attempt_at > ? AND e.status = 'active' AND e.deleted_at IS NULL
        ORDER BY d.next_attempt_at LIMIT 1`,
    )
  }

  /** Starts the loop (and sends whatever a previous run left unfinished). */
  start(): void {
    onDeliveriesQueued(() => this.wake())
    this.wake()
  }

  /** Asks for a full pass soon; asks made in the same turn run one pass. */
  wake(): void {
    if (this.stopped || this.passPending) return
    this.passPending = true
    setTimeout(() => { this.passPending = false; this.pass() }, 0)
  }

  private room(endpointId: string): number {
    return Math.min((this.deps.perEndpoint ?? 1) - (this.perEndpoint.get(endpointId) ?? 0), (this.deps.global ?? 64) - this.inflight.size)
  }

  /** Launches an endpoint's oldest due deliveries while it has room. */
  private fill(endpoint: EndpointRow, now: number): void {
    const room = this.room(endpoint.id)
    if (room <= 0) return
    for (const row of this.dueFor.all(endpoint.id, now, room)) if (!this.inflight.has(row.d_id)) this.launch(endpoint, row)
  }

  private pass(): void {
    if (this.stopped) return
    try {
      const now = this.deps.clock.now()
      this.endpoints = new Map(this.activeEndpoints.all().map((raw) => [raw.id as string, toEndpointRow(raw)]))
      const list = [...this.endpoints.values()]
      // Start each pass at another endpoint, so under the global cap none is always served last.
      this.turn = (this.turn + 1) % Math.max(1, list.length)
      for (const endpoint of [...list.slice(this.turn), ...list.slice(0, this.turn)]) this.fill(endpoint, now)
      const next = this.nextDue.get(now)
      if (next) this.armTimer(next.at)
    } catch (err) {
      this.deps.logger.error({ err }, 'webhook scheduler pass failed')
      this.armTimer(this.deps.clock.now() + 1000)
    }
  }

  /** Makes sure a full pass runs by `at` (the earliest asked for wins). */
  private armTimer(at: number): void {
    if (this.stopped || (this.timerAt !== null && this.timerAt <= at)) return
    if (this.timer) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => { this.timer = null; this.timerAt = null; this.pass() }, Math.max(0, Math.min(at - this.deps.clock.now(), 60_000)))
  }

  private launch(endpoint: EndpointRow, row: DueRow): void {
    this.perEndpoint.set(endpoint.id, (this.perEndpoint.get(endpoint.id) ?? 0) + 1)
    const delivery = { id: row.d_id, type: row.event_type, accountId: row.d_account_id, attempts: row.attempts, createdAt: row.d_created_at, data: row.data }
    const work = attemptDelivery(endpoint, delivery, this.deps.clock.now(), { ...this.deps.send, signal: this.abort.signal })
      .then((result) => {
        // Shutting down: the delivery stays pending and goes out after restart.
        if (this.abort.signal.aborted) return this.release(endpoint.id, row.d_id)
        this.finished.push({ endpoint, row, result })
        this.scheduleFlush()
      })
      .catch((err) => {
        this.deps.logger.error({ err, delivery_id: row.d_id }, 'webhook attempt crashed')
        this.release(endpoint.id, row.d_id)
      })
    this.inflight.set(row.d_id, work)
  }

  private release(endpointId: string, deliveryId: string): void {
    this.inflight.delete(deliveryId)
    const n = (this.perEndpoint.get(endpointId) ?? 1) - 1
    if (n <= 0) this.perEndpoint.delete(endpointId)
    else this.perEndpoint.set(endpointId, n)
  }

  private scheduleFlush(): void {
    if (this.flushPending) return
    this.flushPending = true
    setTimeout(() => { this.flushPending = false; this.flush() }, 0)
  }

  /** Records every finished attempt in one transaction, then refills the endpoints that have room again. */
  private flush(): void {
    const batch = this.finished.splice(0)
    if (!batch.length) return
    const capped = this.inflight.size >= (this.deps.global ?? 64)
    const now = this.deps.clock.now()
    const outcomes = inTransaction(this.deps.db, () => batch.map(({ endpoint, row, result }) => recordAttempt(this.deps.db,
      { id: row.d_id, endpointId: endpoint.id, eventType: row.event_type, attempts: row.attempts, firstAttemptAt: row.first_attempt_at, status: row.d_status },
      result, { nowMs: now, schedule: this.deps.schedule, countsTowardPause: true, retries: true })))
    const touched = new Map<string, EndpointRow>()
    batch.forEach(({ endpoint, row }, i) => {
      this.release(endpoint.id, row.d_id)
      const outcome = outcomes[i]!
      if (outcome.nextAttemptAt !== null) this.armTimer(outcome.nextAttemptAt)
      if (outcome.paused) {
        this.endpoints.delete(endpoint.id)
        this.deps.logger.warn({ endpoint_id: endpoint.id }, 'webhook endpoint paused after repeated failures')
      } else if (this.endpoints.has(endpoint.id)) touched.set(endpoint.id, this.endpoints.get(endpoint.id)!)
    })
    if (this.stopped) return
    // A freed global slot may belong to any endpoint; otherwise only the ones that finished need refilling.
    if (capped) this.wake()
    else for (const endpoint of touched.values()) this.fill(endpoint, now)
  }

  /** Stops the loop: waits up to `graceMs` for attempts in flight and records them; the rest stay pending. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    onDeliveriesQueued(() => {})
    const all = Promise.allSettled([...this.inflight.values()])
    await Promise.race([all, Bun.sleep(graceMs)])
    this.abort.abort()
    await Promise.race([all, Bun.sleep(200)])
    this.flush()
  }
}

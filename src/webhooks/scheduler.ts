import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { onDeliveriesQueued } from './fan-out'
import { claimDelivery, recordAttempt, type LeasedDelivery } from './record-attempt'
import { attemptDelivery, type AttemptResult, type SendSettings } from './send-attempt'
import { refreshEndpointDue, toEndpointRow, type EndpointRow } from './webhook.queries'
import { isGoneLocalOwner, LEASE_OWNER } from '../platform/lease-owner'
import { openLinksIn, type JobLinks } from '../jobs/job-links'

export interface SchedulerDeps {
  db: Db
  clock: Clock
  logger: Logger
  schedule: number[]
  send: Omit<SendSettings, 'signal'>
  /** Opens the job links stored sealed in event payloads. */
  links: JobLinks
  /** Deliveries in flight overall (64). */
  global?: number
  /** Deliveries in flight for one account (48): the rest stay free for the others. */
  perAccount?: number
  /** How long a claimed delivery stays leased (the send timeout + 5 s). */
  leaseMs?: number
  /** Who this scheduler is as a lease holder (LEASE_OWNER; tests run two in one process). */
  owner?: string
}

interface InFlight { delivery: LeasedDelivery; endpoint: EndpointRow; accountId: string; createdAt: number; data: string }
interface Finished { flight: InFlight; result: AttemptResult }
type DueRow = Record<string, any>

/**
 * Sends webhook deliveries in the background of `towline serve`.
 * - One query finds the active endpoints that have a delivery due (`next_due_at`, kept with
 *   the deliveries in the same transactions), with the oldest due delivery of each. Nothing is
 *   read per endpoint, so 50,000 quiet endpoints cost nothing.
 * - Each delivery is claimed before it is sent: `sending` with a lease in the database. An
 *   endpoint with a delivery in flight (in any process) gets no other, so each endpoint's
 *   deliveries go out one at a time, in order, and never twice at once; a lease left by a crash
 *   runs out and the delivery is taken again (same id: at least once).
 * - Slots are shared fairly: at most `global` in flight, at most `perAccount` for one account,
 *   and free slots go round the accounts that wait, so one tenant's black-holed endpoints never
 *   hold up another's deliveries.
 * - Finished attempts are recorded in one transaction per turn of the event loop, which also
 *   claims what comes next. Nothing thrown in a timer escapes (Bun would exit): a failed turn is
 *   logged, its results kept, and retried.
 */
export class DeliveryScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private timerAt: number | null = null
  private turnPending = false
  private stopped = false
  private abort = new AbortController()
  private inflight = new Map<string, InFlight>()
  private work = new Set<Promise<void>>()
  private perAccount = new Map<string, number>()
  private finished: Finished[] = []
  private dueEndpoints
  private nextWake

  constructor(private deps: SchedulerDeps) {
    // Per due endpoint, one delivery: a lease that ran out first (a crash), else the oldest due
    // one; none while another delivery to it is in flight anywhere (a lease still running).
    this.dueEndpoints = deps.db.$client.query<DueRow, [number, string, number]>(
      `SELECT e.*, d.id AS d_id, d.event_type AS d_event_type, d.status AS d_status, d.next_attempt_at AS d_next, d.attempts AS d_attempts,
              d.first_attempt_at AS d_first, d.created_at AS d_created_at, coalesce(d.data, p.data) AS d_data
         FROM webhook_endpoints e
         LEFT JOIN webhook_deliveries d ON d.id = (
              SELECT coalesce(
                (SELECT x.id FROM webhook_deliveries x WHERE x.endpoint_id = e.id AND x.status = 'sending' AND x.next_attempt_at <= ?1 ORDER BY x.next_attempt_at, x.rowid LIMIT 1),
                (SELECT x.id FROM webhook_deliveries x WHERE x.endpoint_id = e.id AND x.status = 'pending' AND x.next_attempt_at <= ?1 ORDER BY x.next_attempt_at, x.rowid LIMIT 1))
               WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries y WHERE y.endpoint_id = e.id AND y.status = 'sending' AND y.next_attempt_at > ?1))
         LEFT JOIN webhook_event_payloads p ON p.event_id = d.event_id
        WHERE e.status = 'active' AND e.deleted_at IS NULL AND e.next_due_at IS NOT NULL AND e.next_due_at <= ?1
          AND e.account_id NOT IN (SELECT value FROM json_each(?2))
        ORDER BY e.next_due_at LIMIT ?3`,
    )
    this.nextWake = deps.db.$client.query<{ at: number | null }, [number]>(
      "SELECT min(next_due_at) AS at FROM webhook_endpoints WHERE status = 'active' AND deleted_at IS NULL AND next_due_at IS NOT NULL AND next_due_at > ?",
    )
  }

  private get global() { return this.deps.global ?? 64 }
  private get accountCap() { return Math.min(this.deps.perAccount ?? 48, this.global) }
  private get leaseMs() { return this.deps.leaseMs ?? this.deps.send.timeoutMs + 5_000 }
  private get owner() { return this.deps.owner ?? LEASE_OWNER }

  /**
   * Starts the loop and sends whatever a previous run left unfinished: leases held by a process
   * of this machine that is gone (a crash, a kill -9) are taken back at once; others run out.
   */
  start(): void {
    try { this.takeBackLeasesOfGoneProcesses() } catch (err) { this.deps.logger.error({ err }, 'could not take back leases of a stopped process; they run out by themselves') }
    onDeliveriesQueued(() => this.wake())
    this.wake()
  }

  private takeBackLeasesOfGoneProcesses(): void {
    const now = this.deps.clock.now()
    const owners = this.deps.db.$client.query<{ owner: string | null }, []>("SELECT DISTINCT lease_owner AS owner FROM webhook_deliveries WHERE status = 'sending'").all()
    const gone = owners.map((o) => o.owner).filter((o) => isGoneLocalOwner(o, this.owner))
    if (!gone.length) return
    inTransaction(this.deps.db, () => {
      for (const owner of gone) {
        const endpoints = this.deps.db.$client.query<{ endpoint_id: string }, [number, string | null]>(
          "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, lease_owner = NULL WHERE status = 'sending' AND lease_owner IS ? RETURNING endpoint_id",
        ).all(now, owner)
        for (const id of new Set(endpoints.map((e) => e.endpoint_id))) refreshEndpointDue(this.deps.db, id, now)
      }
    })
    this.deps.logger.info({ owners: gone }, 'took back webhook deliveries a stopped process was sending')
  }

  /** Asks for a turn soon; asks made in the same turn of the event loop run one. */
  wake(): void {
    if (this.stopped || this.turnPending) return
    this.turnPending = true
    setTimeout(() => { this.turnPending = false; this.turn() }, 0)
  }

  /** Deliveries in flight now (for tests and the shutdown log). */
  get inFlight(): number { return this.inflight.size }

  /** One turn: records finished attempts, claims what is due, launches it. Never throws. */
  private turn(): void {
    if (this.stopped && !this.finished.length) return
    const batch = this.finished.splice(0)
    let launch: InFlight[] = []
    let more = false
    try {
      const now = this.deps.clock.now()
      launch = inTransaction(this.deps.db, () => {
        for (const f of batch) this.record(f, now)
        if (this.stopped) return []
        const picked = this.claimDue(now)
        more = picked.more
        return picked.claimed
      })
    } catch (err) {
      // Keep the results (their deliveries stay leased) and try again shortly.
      this.finished.unshift(...batch)
      this.deps.logger.error({ err }, 'webhook scheduler turn failed; retrying in 1 s')
      this.armTimer(this.deps.clock.now() + 1000)
      return
    }
    for (const f of batch) this.release(f.flight)
    for (const flight of launch) this.launch(flight)
    if (more) this.wake()
    this.armNext()
  }

  /** Records one finished attempt (inside the turn's transaction). */
  private record({ flight, result }: Finished, now: number): void {
    const outcome = recordAttempt(this.deps.db, flight.delivery, result, { nowMs: now, schedule: this.deps.schedule, countsTowardPause: true, retries: true })
    if (outcome.paused) this.deps.logger.warn({ endpoint_id: flight.endpoint.id }, 'webhook endpoint paused after repeated failures')
    if (!outcome.leaseHeld) this.deps.logger.warn({ delivery_id: flight.delivery.id }, 'a webhook attempt outlived its lease; the attempt is logged, the delivery left to whoever took it over')
  }

  /** Picks due deliveries fairly and claims them (inside the turn's transaction). */
  private claimDue(now: number): { claimed: InFlight[]; more: boolean } {
    const free = this.global - this.inflight.size
    if (free <= 0) return { claimed: [], more: false }
    const full = [...this.perAccount].filter(([, n]) => n >= this.accountCap).map(([a]) => a)
    const limit = free * 2 + 16
    const rows = this.dueEndpoints.all(now, JSON.stringify(full), limit)
    // Endpoints listed as due with nothing to send (in flight, or a stale hint): set the hint right.
    for (const r of rows) if (r.d_id === null) refreshEndpointDue(this.deps.db, r.id, now)
    // Round the waiting accounts, oldest due first within each.
    const byAccount = new Map<string, DueRow[]>()
    for (const r of rows) if (r.d_id !== null && !this.inflight.has(r.d_id)) byAccount.set(r.account_id, [...(byAccount.get(r.account_id) ?? []), r])
    const claimed: InFlight[] = []
    const taken = new Map<string, number>()
    let progress = true
    while (claimed.length < free && progress) {
      progress = false
      for (const [accountId, queue] of byAccount) {
        if (claimed.length >= free) break
        if ((this.perAccount.get(accountId) ?? 0) + (taken.get(accountId) ?? 0) >= this.accountCap) continue
        const r = queue.shift()
        if (!r) continue
        progress = true
        const lease = now + this.leaseMs
        const got = claimDelivery(this.deps.db, r.d_id, now, lease, true, this.owner)
        if (!got) continue
        refreshEndpointDue(this.deps.db, r.id, now)
        taken.set(accountId, (taken.get(accountId) ?? 0) + 1)
        claimed.push({
          accountId, endpoint: toEndpointRow(r), createdAt: r.d_created_at, data: openLinksIn(this.deps.links, r.d_data),
          delivery: { id: r.d_id, endpointId: r.id, eventType: r.d_event_type, attempts: got.attempts, firstAttemptAt: got.firstAttemptAt, lease },
        })
      }
    }
    return { claimed, more: rows.length === limit && claimed.length < free }
  }

  private launch(flight: InFlight): void {
    this.inflight.set(flight.delivery.id, flight)
    this.perAccount.set(flight.accountId, (this.perAccount.get(flight.accountId) ?? 0) + 1)
    const d = flight.delivery
    const work = attemptDelivery(flight.endpoint, { id: d.id, type: d.eventType, accountId: flight.accountId, attempts: d.attempts, createdAt: flight.createdAt, data: flight.data },
      this.deps.clock.now(), { ...this.deps.send, signal: this.abort.signal })
      .catch((err): AttemptResult => ({
        ok: false, requestHeaders: {}, requestBody: '', responseStatus: null, responseHeaders: null, responseBody: null, durationMs: 0,
        error: 'connect', errorMessage: `the attempt failed inside towline: ${(err as Error)?.message ?? err}`, retryAfterMs: null,
      }))
      .then((result) => {
        // Shut down mid-flight: the lease is handed back at stop, and the delivery goes out after restart.
        if (this.abort.signal.aborted) return
        this.finished.push({ flight, result })
        this.wake()
      })
    this.work.add(work)
    void work.finally(() => this.work.delete(work))
  }

  private release(flight: InFlight): void {
    if (!this.inflight.delete(flight.delivery.id)) return
    const n = (this.perAccount.get(flight.accountId) ?? 1) - 1
    if (n <= 0) this.perAccount.delete(flight.accountId)
    else this.perAccount.set(flight.accountId, n)
  }

  /** Arms the timer for the next time something falls due (a retry, a lease running out). */
  private armNext(): void {
    try {
      const next = this.nextWake.get(this.deps.clock.now())
      if (next?.at) this.armTimer(next.at)
    } catch (err) {
      this.deps.logger.error({ err }, 'webhook scheduler could not read its next due time')
      this.armTimer(this.deps.clock.now() + 1000)
    }
  }

  /** Makes sure a turn runs by `at` (the earliest asked for wins; at most a minute away, as a safety net). */
  private armTimer(at: number): void {
    if (this.stopped || (this.timerAt !== null && this.timerAt <= at)) return
    if (this.timer) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => { this.timer = null; this.timerAt = null; this.turn() }, Math.max(0, Math.min(at - this.deps.clock.now(), 60_000)))
  }

  /**
   * Stops the loop: waits up to `graceMs` for attempts in flight and records them; the others
   * are cut, and their leases handed back so a restart sends them at once.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    onDeliveriesQueued(() => {})
    const all = Promise.allSettled([...this.work])
    await Promise.race([all, Bun.sleep(graceMs)])
    this.abort.abort()
    await Promise.race([Promise.allSettled([...this.work]), Bun.sleep(200)])
    this.turn()
    try {
      const now = this.deps.clock.now()
      inTransaction(this.deps.db, () => {
        for (const flight of this.inflight.values()) {
          this.deps.db.$client.query("UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, lease_owner = NULL WHERE id = ? AND status = 'sending' AND next_attempt_at = ?")
            .run(now, flight.delivery.id, flight.delivery.lease)
          refreshEndpointDue(this.deps.db, flight.endpoint.id, now)
        }
      })
    } catch (err) {
      this.deps.logger.error({ err }, 'could not hand back webhook leases at shutdown; they run out by themselves')
    }
  }
}

import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { onDeliveriesQueued } from './fan-out'
import { claimDelivery, recordAttempt, type LeasedDelivery } from './record-attempt'
import { attemptDelivery, type AttemptResult, type SendSettings } from './send-attempt'
import { DELIVERIES_WITH_DATA, DELIVERY_DATA, refreshEndpointDue, toEndpointRow, type EndpointRow } from './webhook.queries'
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

/** A delivery this scheduler holds the lease on, with what its envelope needs. */
interface Claimed { delivery: LeasedDelivery; createdAt: number; data: string; restore: { status: string; nextAttemptAt: number | null } }
/** One endpoint being served: its claimed deliveries, sent one after the other, in order. */
interface Lane { endpoint: EndpointRow; accountId: string; queue: Claimed[]; current: Claimed | null; failed: boolean }
interface Finished { lane: Lane; claimed: Claimed; result: AttemptResult }
type DueRow = Record<string, any>

/**
 * The scheduler's one query: active endpoints whose next_due_at has come (?1 = now), oldest
 * first, leaving out accounts at their cap (?2, a JSON array), each with one delivery: a lease
 * that ran out (a crash) first, else the oldest due one; none while another delivery to it is
 * in flight anywhere (a lease still running). ?3 limits the rows.
 */
export const DUE_ENDPOINTS_SQL = `SELECT e.*, d.id AS d_id, d.event_type AS d_event_type, d.status AS d_status, d.next_attempt_at AS d_next, d.attempts AS d_attempts,
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
    ORDER BY e.next_due_at LIMIT ?3`

/** Deliveries claimed for one endpoint at a time: sent back to back, recorded together. */
const LANE_BATCH = 32
/** Finished attempts are recorded at least this often while they come in. */
const FLUSH_MS = 25

/**
 * Sends webhook deliveries in the background of `towline serve`.
 * - One query finds the active endpoints that have a delivery due (`next_due_at`, kept with
 *   the deliveries in the same transactions). Nothing is read per quiet endpoint, so 50,000 of
 *   them cost nothing.
 * - A slot serves one endpoint (a lane): up to 32 of its oldest due deliveries are claimed at
 *   once (`sending`, with a lease and its owner, in the database) and sent one after the other,
 *   so each endpoint gets its deliveries in order and never two at once, from any process.
 *   Attempts are recorded in one transaction every few milliseconds, which also refills lanes
 *   and opens new ones: the disk sees a few pages per batch, not per delivery. A failure stops
 *   the lane until it is recorded (the streak that pauses an endpoint counts every attempt), and
 *   its unsent deliveries go back to the queue.
 * - Slots are shared fairly: at most `global` lanes, at most `perAccount` for one account, and
 *   free slots go round the accounts that wait, so one tenant's black-holed endpoints never
 *   hold up another's deliveries.
 * - A lease left by a crash runs out and the delivery is taken again (same id: at least once);
 *   a restart on the same machine takes back a dead predecessor's leases at once.
 * - Nothing thrown in a timer escapes (Bun would exit): a failed turn is logged, its results
 *   kept, and retried.
 */
export class DeliveryScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private timerAt: number | null = null
  private turnPending = false
  private flushTimer: ReturnType<typeof setTimeout> | null = null
  private stopped = false
  private abort = new AbortController()
  private lanes = new Map<string, Lane>()
  private work = new Set<Promise<void>>()
  private finished: Finished[] = []
  private dueEndpoints
  private nextWake
  private expiredOf
  private pendingOf
  private endpointById

  constructor(private deps: SchedulerDeps) {
    this.dueEndpoints = deps.db.$client.query<DueRow, [number, string, number]>(DUE_ENDPOINTS_SQL)
    this.nextWake = deps.db.$client.query<{ at: number | null }, [number]>(
      "SELECT min(next_due_at) AS at FROM webhook_endpoints WHERE status = 'active' AND deleted_at IS NULL AND next_due_at IS NOT NULL AND next_due_at > ?",
    )
    const due = (status: string) => deps.db.$client.query<DueRow, [string, number, number]>(
      `SELECT d.id, d.event_type, d.attempts, d.first_attempt_at, d.status, d.next_attempt_at, d.created_at, ${DELIVERY_DATA} FROM ${DELIVERIES_WITH_DATA}
        WHERE d.endpoint_id = ? AND d.status = '${status}' AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at, d.rowid LIMIT ?`,
    )
    this.endpointById = deps.db.$client.query<Record<string, any>, [string]>('SELECT * FROM webhook_endpoints WHERE id = ?')
    this.expiredOf = due('sending')
    this.pendingOf = due('pending')
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
    onDeliveriesQueued((ids) => this.queued(ids))
    this.wake()
  }

  /**
   * New deliveries were written: an endpoint already being served gets them at its lane's next
   * refill (within FLUSH_MS), so under load job writes do not each cost a turn; work for an idle
   * endpoint is claimed at once.
   */
  private queued(endpointIds: string[] | undefined): void {
    if (endpointIds && endpointIds.every((id) => this.lanes.has(id))) this.flushSoon()
    else this.wake()
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

  /** Deliveries being sent right now (for tests and the shutdown log). */
  get inFlight(): number {
    let n = 0
    for (const lane of this.lanes.values()) if (lane.current) n++
    return n
  }

  /** One turn: records finished attempts, refills and opens lanes, launches. Never throws. */
  private turn(): void {
    if (this.flushTimer) { clearTimeout(this.flushTimer); this.flushTimer = null }
    const batch = this.finished.splice(0)
    let more = false
    try {
      const now = this.deps.clock.now()
      inTransaction(this.deps.db, () => {
        for (const f of batch) this.record(f, now)
        more = this.fillLanes(now)
      })
    } catch (err) {
      // Keep the results (their deliveries stay leased) and try again shortly.
      this.finished.unshift(...batch)
      this.deps.logger.error({ err }, 'webhook scheduler turn failed; retrying in 1 s')
      this.armTimer(this.deps.clock.now() + 1000)
      return
    }
    for (const lane of this.lanes.values()) this.next(lane)
    if (more) this.wake()
    this.armNext()
  }

  /** Records one finished attempt (inside the turn's transaction). */
  private record({ claimed, result }: Finished, now: number): void {
    const outcome = recordAttempt(this.deps.db, claimed.delivery, result, { nowMs: now, schedule: this.deps.schedule, countsTowardPause: true, retries: true })
    if (outcome.paused) this.deps.logger.warn({ endpoint_id: claimed.delivery.endpointId }, 'webhook endpoint paused after repeated failures')
    if (!outcome.leaseHeld) this.deps.logger.warn({ delivery_id: claimed.delivery.id }, 'a webhook attempt outlived its lease; the attempt is logged, the delivery left to whoever took it over')
  }

  /** Hands unsent claimed deliveries back: due again as they were, for anyone (inside a transaction). */
  private handBack(claims: Claimed[], now: number): void {
    const back = this.deps.db.$client.query("UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, lease_owner = NULL WHERE id = ? AND status = 'sending' AND next_attempt_at = ?")
    for (const c of claims) back.run(c.restore.status, c.restore.nextAttemptAt, c.delivery.id, c.delivery.lease)
    if (claims.length) refreshEndpointDue(this.deps.db, claims[0]!.delivery.endpointId, now)
  }

  /** Claims up to LANE_BATCH due deliveries of an endpoint, oldest first (a lease run out before all). */
  private claimFor(endpointId: string, now: number): Claimed[] {
    const rows = this.expiredOf.all(endpointId, now, LANE_BATCH)
    if (rows.length < LANE_BATCH) rows.push(...this.pendingOf.all(endpointId, now, LANE_BATCH - rows.length))
    // A lease long enough for the whole batch to go out one after the other.
    const lease = now + this.leaseMs * Math.max(1, rows.length)
    const claimed: Claimed[] = []
    for (const r of rows) {
      const got = claimDelivery(this.deps.db, r.id, now, lease, true, this.owner)
      if (!got) break // someone else is serving this endpoint now: keep the order, stop here
      claimed.push({
        delivery: { id: r.id, endpointId, eventType: r.event_type, attempts: got.attempts, firstAttemptAt: got.firstAttemptAt, lease },
        createdAt: r.created_at, data: openLinksIn(this.deps.links, r.data),
        // A lease that ran out (a crash) is due again now if handed back.
        restore: got.status === 'sending' ? { status: 'pending', nextAttemptAt: now } : { status: got.status, nextAttemptAt: got.nextAttemptAt },
      })
    }
    if (claimed.length) refreshEndpointDue(this.deps.db, endpointId, now)
    return claimed
  }

  /** Refills lanes that ran dry, closes idle ones, and opens lanes for due endpoints fairly (inside the turn's transaction). */
  private fillLanes(now: number): boolean {
    for (const [id, lane] of this.lanes) {
      if (lane.current) continue
      if (lane.failed || this.stopped) { this.handBack(lane.queue.splice(0), now); lane.failed = false }
      if (!lane.queue.length && !this.stopped && this.liveEndpoint(lane)) lane.queue = this.claimFor(id, now)
      if (!lane.queue.length) { this.lanes.delete(id); refreshEndpointDue(this.deps.db, id, now) }
    }
    if (this.stopped) return false
    const free = this.global - this.lanes.size
    if (free <= 0) return false
    const perAccount = new Map<string, number>()
    for (const lane of this.lanes.values()) perAccount.set(lane.accountId, (perAccount.get(lane.accountId) ?? 0) + 1)
    const full = [...perAccount].filter(([, n]) => n >= this.accountCap).map(([a]) => a)
    const limit = free * 2 + 16
    const rows = this.dueEndpoints.all(now, JSON.stringify(full), limit)
    // Endpoints listed as due with nothing to send (in flight, or a stale hint): set the hint right.
    for (const r of rows) if (r.d_id === null) refreshEndpointDue(this.deps.db, r.id, now)
    // Round the waiting accounts, oldest due first within each.
    const byAccount = new Map<string, DueRow[]>()
    for (const r of rows) if (r.d_id !== null && !this.lanes.has(r.id)) byAccount.set(r.account_id, [...(byAccount.get(r.account_id) ?? []), r])
    let opened = 0
    let progress = true
    while (opened < free && progress) {
      progress = false
      for (const [accountId, queue] of byAccount) {
        if (opened >= free) break
        if ((perAccount.get(accountId) ?? 0) >= this.accountCap) continue
        const r = queue.shift()
        if (!r) continue
        progress = true
        const claimed = this.claimFor(r.id, now)
        if (!claimed.length) continue
        this.lanes.set(r.id, { endpoint: toEndpointRow(r), accountId, queue: claimed, current: null, failed: false })
        perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + 1)
        opened++
      }
    }
    return rows.length === limit && opened < free
  }

  /** Re-reads a lane's endpoint (a new URL or secret applies from the next send); false when it is no longer active. */
  private liveEndpoint(lane: Lane): boolean {
    const raw = this.endpointById.get(lane.endpoint.id)
    if (raw) lane.endpoint = toEndpointRow(raw)
    return !!raw && lane.endpoint.status === 'active' && lane.endpoint.deletedAt === null
  }

  /** Sends a lane's next claimed delivery, if it is free to. */
  private next(lane: Lane): void {
    if (lane.current || lane.failed || this.stopped || !lane.queue.length) return
    // Paused or deleted meanwhile: what is left goes back at the next turn.
    if (!this.liveEndpoint(lane)) { lane.failed = true; this.wake(); return }
    const claimed = lane.queue.shift()!
    lane.current = claimed
    const d = claimed.delivery
    const work = attemptDelivery(lane.endpoint, { id: d.id, type: d.eventType, accountId: lane.accountId, attempts: d.attempts, createdAt: claimed.createdAt, data: claimed.data },
      this.deps.clock.now(), { ...this.deps.send, signal: this.abort.signal })
      .catch((err): AttemptResult => ({
        ok: false, requestHeaders: {}, requestBody: '', responseStatus: null, responseHeaders: null, responseBody: null, durationMs: 0,
        error: 'connect', errorMessage: `the attempt failed inside towline: ${(err as Error)?.message ?? err}`, retryAfterMs: null,
      }))
      .then((result) => {
        // Shut down mid-flight: the lease is handed back at stop, and the delivery goes out after restart.
        if (this.abort.signal.aborted) return
        lane.current = null
        this.finished.push({ lane, claimed, result })
        if (!result.ok) lane.failed = true
        this.next(lane)
        // Results are recorded, and lanes that ran dry refilled, in batches every few milliseconds:
        // one transaction then covers many endpoints' pages. A big batch goes at once.
        if (this.finished.length >= 256) this.wake()
        else this.flushSoon()
      })
    this.work.add(work)
    void work.finally(() => this.work.delete(work))
  }

  private flushSoon(): void {
    if (this.flushTimer || this.stopped) return
    this.flushTimer = setTimeout(() => { this.flushTimer = null; this.turn() }, FLUSH_MS)
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
   * are cut, and every lease this scheduler holds is handed back so a restart sends at once.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    if (this.flushTimer) clearTimeout(this.flushTimer)
    onDeliveriesQueued(() => {})
    const all = Promise.allSettled([...this.work])
    await Promise.race([all, Bun.sleep(graceMs)])
    this.abort.abort()
    await Promise.race([Promise.allSettled([...this.work]), Bun.sleep(200)])
    try {
      const now = this.deps.clock.now()
      inTransaction(this.deps.db, () => {
        for (const f of this.finished.splice(0)) this.record(f, now)
        for (const lane of this.lanes.values()) this.handBack([...(lane.current ? [lane.current] : []), ...lane.queue], now)
      })
      this.lanes.clear()
    } catch (err) {
      this.deps.logger.error({ err }, 'could not record or hand back webhook work at shutdown; leases run out by themselves')
    }
  }
}

import type { Db } from '../db/client'
import { inClaimTransaction, inTransaction, rowLock } from '../db/client'
import type { Clock } from '../platform/clock'
import type { Logger } from '../platform/log'
import { endpointsSeen, onDeliveriesQueued, takesEvent } from './fan-out'
import { newId } from '../platform/ids'
import { claimDelivery, recordAttempt, type LeasedDelivery } from './record-attempt'
import { attemptDelivery, type AttemptResult, type SendSettings } from './send-attempt'
import { DELIVERIES_WITH_DATA, DELIVERY_DATA, lockEndpoints, refreshEndpointDue, toEndpointRow, tryLockEndpoint, type EndpointRow } from './webhook.queries'
import { LEASE_OWNER } from '../platform/lease-owner'
import { LeaseHolders } from '../platform/lease-holders'
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
  /** How often to beat and look for leases of gone processes (5 s): of this machine, and on PostgreSQL of any whose heartbeat stopped. */
  reapEveryMs?: number
  /** Who this scheduler is as a lease holder (LEASE_OWNER; tests run two in one process). */
  owner?: string
}

/** A delivery this scheduler holds the lease on, with what its envelope needs. */
interface Claimed { delivery: LeasedDelivery; createdAt: number; data: string; restore: { status: string; nextAttemptAt: number | null } }
/** One endpoint being served: its claimed deliveries, sent one after the other, in order. */
interface Lane {
  endpoint: EndpointRow
  accountId: string
  queue: Claimed[]
  current: Claimed | null
  /** endpointsSeen() when the endpoint was last read. */
  seen: number
  /** An attempt failed: the lane sends nothing more until that is recorded (the failure streak counts every attempt). */
  failed: boolean
  /** Finished attempts not recorded yet. */
  unrecorded: number
  idleSince: number | null
}
interface Finished { lane: Lane; claimed: Claimed; result: AttemptResult; startedAt: number }
type DueRow = Record<string, any>

/**
 * The scheduler's one query: active endpoints whose next_due_at has come (?1 = now), oldest
 * first, leaving out accounts at their cap (?2, a JSON array) and endpoints with a delivery in
 * flight anywhere (a lease still running). ?3 limits the rows. On PostgreSQL it ends with
 * `FOR UPDATE SKIP LOCKED` (rowLock): the rows it gives are locked, endpoints another
 * transaction holds are left out.
 */
export const DUE_ENDPOINTS_SQL = `SELECT e.* FROM webhook_endpoints e
    WHERE e.status = 'active' AND e.deleted_at IS NULL AND e.next_due_at IS NOT NULL AND e.next_due_at <= ?1
      AND e.account_id NOT IN (SELECT value FROM json_each(?2))
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries y WHERE y.endpoint_id = e.id AND y.status = 'sending' AND y.next_attempt_at > ?1)
    ORDER BY e.consecutive_failures > 0, e.next_due_at LIMIT ?3`

/** Events read from the log per lane refill at most, LANE_BATCH at a time (those an endpoint does not take are skipped by its cursor). */
const EVENTS_READ = 256

/** Deliveries claimed for one endpoint at a time: sent back to back, recorded together. */
const LANE_BATCH = 32
/** New work for endpoints being served is taken up, and dry lanes refilled, this often. */
const FLUSH_MS = 25
/** Finished attempts are recorded this often (or once this many wait, or at once after a failure). */
const RECORD_MS = 100
const RECORD_AT = 512
/** A lane with nothing to send stays open this long (real time), so a busy endpoint's next events are batched too. */
const LANE_IDLE_MS = 1_000

/**
 * Sends webhook deliveries in the background of `towline serve`.
 * - One query finds the active endpoints with something due (`next_due_at`, kept in the same
 *   transactions as what makes it due): events after the endpoint's cursor in the event log,
 *   retries whose time has come, leases that ran out. Nothing is read per quiet endpoint, so
 *   50,000 of them cost nothing.
 * - A slot serves one endpoint (a lane): up to 32 of its oldest due deliveries are claimed at
 *   once (`sending`, with a lease and its owner; deliveries for new events are made here, and
 *   the cursor moves past them, in the same transaction) and sent one after the other, so each
 *   endpoint gets its deliveries in order and never two at once, from any process. Lanes are
 *   refilled every 25 ms and attempts recorded every 100 ms (at once after a failure): the disk
 *   sees a few pages per batch, not per delivery. A failure stops the lane until it is recorded
 *   (the streak that pauses an endpoint counts every attempt), and its unsent deliveries go back.
 * - Slots are shared fairly: at most `global` busy lanes, at most `perAccount` for one account,
 *   and free slots go round the accounts that wait, so one tenant's black-holed endpoints never
 *   hold up another's deliveries. Within an account, endpoints that answer come first: one whose
 *   last attempt failed is not refilled in place (its lane closes after the failure) and gets at
 *   most half the account's lanes, so 48 dead endpoints never hold up the account's live one.
 * - A lease left by a crash runs out and the delivery is taken again (same id: at least once);
 *   a restart on the same machine takes back a dead predecessor's leases at once.
 * - Nothing thrown in a timer escapes (Bun would exit): a failed turn is logged, its results
 *   kept, and retried.
 */
export class DeliveryScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private timerAt: number | null = null
  private soonTimer: ReturnType<typeof setTimeout> | null = null
  private soonAt: number | null = null
  private lastRecordAt = -Infinity
  private lastTurnAt = -Infinity
  private stopped = false
  private abort = new AbortController()
  private lanes = new Map<string, Lane>()
  private work = new Set<Promise<void>>()
  private finished: Finished[] = []
  private dueEndpoints
  private nextWake
  private expiredOf
  private pendingOf
  private leasedElsewhere
  private endpointById
  private eventsAfter
  private insertDelivery
  private moveCursor
  private holders
  /** The due query without row locks: whether a turn has anything to claim. */
  private anyDue
  /** On PostgreSQL claims run in their own transaction, under row locks, not the write lock (inClaimTransaction). */
  private readonly claimApart: boolean

  constructor(private deps: SchedulerDeps) {
    this.holders = new LeaseHolders(deps.db, deps.clock, deps.owner ?? LEASE_OWNER)
    this.claimApart = deps.db.engine === 'postgres'
    this.dueEndpoints = deps.db.$client.query<DueRow, [number, string, number]>(DUE_ENDPOINTS_SQL + rowLock(deps.db, 'skip'))
    this.anyDue = deps.db.$client.query<DueRow, [number, string, number]>(DUE_ENDPOINTS_SQL)
    this.nextWake = deps.db.$client.query<{ at: number | null }, [number]>(
      "SELECT min(next_due_at) AS at FROM webhook_endpoints WHERE status = 'active' AND deleted_at IS NULL AND next_due_at IS NOT NULL AND next_due_at > ?",
    )
    const due = (status: string) => deps.db.$client.query<DueRow, [string, number, number]>(
      `SELECT d.id, d.event_type, d.attempts, d.first_attempt_at, d.status, d.next_attempt_at, d.created_at, ${DELIVERY_DATA} FROM ${DELIVERIES_WITH_DATA}
        WHERE d.endpoint_id = ? AND d.status = '${status}' AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at, d.rowid LIMIT ?`,
    )
    this.endpointById = deps.db.$client.query<Record<string, any>, [string]>('SELECT * FROM webhook_endpoints WHERE id = ?')
    this.eventsAfter = deps.db.$client.query<DueRow, [string, number, number]>('SELECT seq, event_id, type, site_id, data, created_at FROM webhook_events WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?')
    this.insertDelivery = deps.db.$client.query<unknown, [string, string, string, string, string, number, string, number, number]>(
      `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, lease_owner, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'sending', 0, ?, ?, ?, ?)`,
    )
    this.moveCursor = deps.db.$client.query<unknown, [number, string]>('UPDATE webhook_endpoints SET cursor = ? WHERE id = ?')
    this.expiredOf = due('sending')
    this.pendingOf = due('pending')
    this.leasedElsewhere = deps.db.$client.query<{ one: number }, [string, number, string]>(
      "SELECT 1 AS one FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'sending' AND next_attempt_at > ? AND lease_owner IS NOT ? LIMIT 1",
    )
  }

  private get global() { return this.deps.global ?? 64 }
  private get accountCap() { return Math.min(this.deps.perAccount ?? 48, this.global) }
  /** Lanes one account may give to endpoints whose last attempt failed: half its share, the rest kept for those that answer. */
  private get strugglingCap() { return Math.max(1, Math.floor(this.accountCap / 2)) }
  private get leaseMs() { return this.deps.leaseMs ?? this.deps.send.timeoutMs + 5_000 }
  private get owner() { return this.deps.owner ?? LEASE_OWNER }

  /**
   * Starts the loop and sends whatever a previous run left unfinished: leases held by a process
   * of this machine that is gone (a crash, a kill -9) are taken back at once; others run out.
   * While it runs it beats (LeaseHolders) and looks again every few seconds: another instance
   * that dies mid-batch, on this machine or (PostgreSQL) on another whose heartbeat stopped, has
   * its deliveries finished within seconds, not when its batch's lease runs out.
   */
  start(): void {
    this.takeBack(true)
    this.reaper = setInterval(() => this.takeBack(false), this.deps.reapEveryMs ?? 5_000)
    ;(this.reaper as unknown as { unref?: () => void }).unref?.()
    onDeliveriesQueued((ids) => this.queued(ids))
    this.wake()
  }

  private reaper: ReturnType<typeof setInterval> | null = null

  private takeBack(atStart: boolean): void {
    if (this.stopped) return
    try {
      // At start an old beat under this name is a dead predecessor's (the same host and pid), not a silence of its own.
      if (this.holders.beat() && !atStart) this.silentTooLong()
      if (this.takeBackLeasesOfGoneProcesses(atStart)) this.wake()
    } catch (err) {
      this.deps.logger.error({ err }, 'could not take back leases of a stopped process; they run out by themselves')
    }
  }

  /**
   * This process was silent longer than a heartbeat may be (its event loop or database held up):
   * others may have taken its leases back. What its lanes claimed and have not sent goes back
   * where it is still its own (handBack changes only rows under this very lease), so nothing is
   * sent by two instances in turn; a send in flight is recorded only if its lease held.
   */
  private silentTooLong(): void {
    const now = this.deps.clock.now()
    inTransaction(this.deps.db, () => {
      lockEndpoints(this.deps.db, [...this.lanes.values()].filter((l) => l.queue.length).map((l) => l.endpoint.id))
      for (const lane of this.lanes.values()) this.handBack(lane.queue.splice(0), now)
    })
    this.deps.logger.warn('this process was silent longer than a lease holder may be; its unsent webhook deliveries went back to the queue')
  }

  /** Lanes with something claimed or in flight (idle ones give their slot up to any endpoint that needs it). */
  private busy(lane: Lane): boolean {
    return lane.current !== null || lane.queue.length > 0
  }

  /**
   * Takes back the deliveries of lease holders that are gone (LeaseHolders); says whether there
   * were any. At start, leases under this process's own name are a dead predecessor's (its pid
   * reused); later they are this scheduler's own, in flight, and are left alone.
   */
  private takeBackLeasesOfGoneProcesses(atStart: boolean): boolean {
    const now = this.deps.clock.now()
    const owners = this.deps.db.$client.query<{ owner: string | null }, []>("SELECT DISTINCT lease_owner AS owner FROM webhook_deliveries WHERE status = 'sending'").all()
    const gone = this.holders.gone(owners.map((o) => o.owner), atStart)
    if (!gone.length) return false
    inTransaction(this.deps.db, () => {
      for (const owner of gone) {
        // Each endpoint's row lock before its deliveries (the order every writer keeps).
        const endpoints = this.deps.db.$client.query<{ endpoint_id: string }, [string | null]>(
          "SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE status = 'sending' AND lease_owner IS ?",
        ).all(owner).map((e) => e.endpoint_id)
        lockEndpoints(this.deps.db, endpoints)
        const back = this.deps.db.$client.query<unknown, [number, string | null, string]>(
          "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, lease_owner = NULL WHERE status = 'sending' AND lease_owner IS ? AND endpoint_id = ?",
        )
        for (const id of endpoints) { back.run(now, owner, id); refreshEndpointDue(this.deps.db, id, now) }
      }
    })
    this.deps.logger.info({ owners: gone }, 'took back webhook deliveries a stopped process was sending')
    return true
  }

  /** Asks for a turn soon; asks made in the same turn of the event loop run one. */
  wake(): void {
    this.soon(0)
  }

  /**
   * New events were written. An endpoint with a lane open (busy or idle for under a second)
   * takes them up at the lane's next batch, within FLUSH_MS, so under load job writes do not
   * each cost a transaction; an endpoint without one is served at once.
   */
  private queued(endpointIds: string[] | undefined): void {
    // At most one turn every FLUSH_MS for work the open lanes take up: at once when the last turn
    // was longer ago (a quiet endpoint's event goes out immediately), else at the end of it.
    if (endpointIds && endpointIds.every((id) => this.lanes.has(id))) this.soon(Math.max(0, this.lastTurnAt + FLUSH_MS - performance.now()))
    else this.wake()
  }

  /** Makes sure a turn runs within `ms` (the earliest asked for wins). */
  private soon(ms: number): void {
    if (this.stopped) return
    const at = performance.now() + ms
    if (this.soonAt !== null && this.soonAt <= at) return
    if (this.soonTimer) clearTimeout(this.soonTimer)
    this.soonAt = at
    this.soonTimer = setTimeout(() => { this.soonTimer = null; this.soonAt = null; this.turn() }, ms)
  }

  /** Deliveries being sent right now (for tests and the shutdown log). */
  get inFlight(): number {
    let n = 0
    for (const lane of this.lanes.values()) if (lane.current) n++
    return n
  }

  /** One turn: records finished attempts, refills and opens lanes, launches. Never throws. */
  private turn(): void {
    if (this.soonTimer) { clearTimeout(this.soonTimer); this.soonTimer = null; this.soonAt = null }
    this.lastTurnAt = performance.now()
    // Attempts are recorded less often than lanes are refilled: each endpoint's history index
    // gets one page written per record, however many of its attempts it holds. A failure, a big
    // batch or a stop records at once.
    const tick = performance.now()
    const recordNow = this.stopped || this.finished.length >= RECORD_AT || tick - this.lastRecordAt >= RECORD_MS || this.finished.some((f) => !f.result.ok)
    const batch = recordNow ? this.finished.splice(0) : []
    if (recordNow) this.lastRecordAt = tick
    let more = false
    let counted = false
    let recorded = false
    try {
      const now = this.deps.clock.now()
      // Nothing to record (now or soon), no lane open, nothing due (a wake for another process's commit, the
      // safety-net timer): no write transaction. It would wait for the write lock, on this
      // thread, while a long write elsewhere holds it (an import): every request would wait.
      if (!batch.length && !this.finished.length && !this.lanes.size && !this.anyDue.all(now, '[]', 1).length) {
        this.armNext()
        return
      }
      // SQLite: one transaction records and claims. PostgreSQL: attempts are recorded under the
      // write lock (they pause endpoints, as other writers do), and claims are made apart, under
      // row locks, so instances claim side by side and beside the job writes.
      if (batch.length || !this.claimApart) {
        inTransaction(this.deps.db, () => {
          const endpoints = new Set(batch.map((f) => f.claimed.delivery.endpointId))
          lockEndpoints(this.deps.db, endpoints)
          for (const f of batch) this.record(f, now)
          for (const id of endpoints) refreshEndpointDue(this.deps.db, id, now)
          // Recorded (if the transaction commits): a lane stopped by a failure may go on.
          for (const f of batch) f.lane.unrecorded--
          counted = true
          if (!this.claimApart) more = this.fillLanes(now)
        })
      }
      recorded = true
      if (this.claimApart) more = inClaimTransaction(this.deps.db, () => this.fillLanes(now))
    } catch (err) {
      // Keep the results not recorded (their deliveries stay leased) and try again shortly.
      if (!recorded) {
        if (counted) for (const f of batch) f.lane.unrecorded++
        this.finished.unshift(...batch)
      }
      this.deps.logger.error({ err }, 'webhook scheduler turn failed; retrying in 1 s')
      this.armTimer(this.deps.clock.now() + 1000)
      return
    }
    for (const lane of this.lanes.values()) this.next(lane)
    if (more) this.wake()
    else if (this.finished.length) this.soon(Math.max(0, this.lastRecordAt + RECORD_MS - performance.now()))
    this.armNext()
  }

  /** Records one finished attempt (inside the turn's transaction). */
  private record({ claimed, result, startedAt }: Finished, now: number): void {
    const outcome = recordAttempt(this.deps.db, claimed.delivery, result, { nowMs: now, startedAtMs: startedAt, schedule: this.deps.schedule, countsTowardPause: true, retries: true, refreshDue: false, endpointLocked: true })
    if (outcome.paused) this.deps.logger.warn({ endpoint_id: claimed.delivery.endpointId }, 'webhook endpoint paused after repeated failures')
    if (!outcome.leaseHeld) this.deps.logger.warn({ delivery_id: claimed.delivery.id }, 'a webhook attempt outlived its lease; the attempt is logged, the delivery left to whoever took it over')
  }

  /** Hands unsent claimed deliveries back: due again as they were, for anyone (inside a transaction holding their endpoint's row lock). */
  private handBack(claims: Claimed[], now: number): void {
    const back = this.deps.db.$client.query("UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, lease_owner = NULL WHERE id = ? AND status = 'sending' AND next_attempt_at = ?")
    for (const c of claims) back.run(c.restore.status, c.restore.nextAttemptAt, c.delivery.id, c.delivery.lease)
    if (claims.length) refreshEndpointDue(this.deps.db, claims[0]!.delivery.endpointId, now)
  }

  /**
   * Claims up to LANE_BATCH deliveries of an endpoint, oldest first: leases that ran out (a
   * crash), then retries that are due, then the events after its cursor that it subscribes to
   * (as new deliveries, the cursor moving past what it read). Inside the claim transaction,
   * holding the endpoint's row lock, so two processes never take the same event or delivery.
   */
  private claimFor(endpoint: EndpointRow, now: number): Claimed[] {
    // Another instance is sending to this endpoint under a lease still running: it serves the
    // endpoint now (one delivery in flight per endpoint across instances, so they arrive in order).
    // A lane of this one that stayed open would otherwise claim the next events beside it.
    if (this.leasedElsewhere.get(endpoint.id, now, this.owner)) return []
    const rows = this.expiredOf.all(endpoint.id, now, LANE_BATCH)
    if (rows.length < LANE_BATCH) rows.push(...this.pendingOf.all(endpoint.id, now, LANE_BATCH - rows.length))
    const fresh = this.endpointById.get(endpoint.id)
    const cursor: number = fresh?.cursor ?? endpoint.cursor
    const taken: DueRow[] = []
    let moved = cursor
    // The log is read a batch at a time, data and all: an endpoint that takes every event reads
    // only what it sends; one that takes few reads on, up to EVENTS_READ.
    for (let read = 0, more = true; more && read < EVENTS_READ && rows.length + taken.length < LANE_BATCH;) {
      const limit = Math.min(LANE_BATCH, EVENTS_READ - read)
      const events = this.eventsAfter.all(endpoint.accountId, moved, limit)
      read += events.length
      more = events.length === limit
      for (const ev of events) {
        if (rows.length + taken.length >= LANE_BATCH) break
        moved = ev.seq
        if (takesEvent(endpoint, ev.type, ev.site_id)) taken.push(ev)
      }
    }
    // A lease long enough for the whole batch to go out one after the other.
    const lease = now + this.leaseMs * Math.max(1, rows.length + taken.length)
    const claimed: Claimed[] = []
    for (const r of rows) {
      const got = claimDelivery(this.deps.db, r.id, now, lease, true, this.owner)
      // Someone else is serving this endpoint now: keep the order, stop here.
      if (!got) { refreshEndpointDue(this.deps.db, endpoint.id, now); return claimed }
      claimed.push({
        delivery: { id: r.id, endpointId: endpoint.id, eventType: r.event_type, attempts: got.attempts, firstAttemptAt: got.firstAttemptAt, lease },
        createdAt: r.created_at, data: openLinksIn(this.deps.links, r.data),
        // A lease that ran out (a crash) is due again now if handed back.
        restore: got.status === 'sending' ? { status: 'pending', nextAttemptAt: now } : { status: got.status, nextAttemptAt: got.nextAttemptAt },
      })
    }
    for (const ev of taken) {
      const id = newId('dlv', now)
      this.insertDelivery.run(id, endpoint.accountId, endpoint.id, ev.event_id, ev.type, lease, this.owner, ev.created_at, now)
      claimed.push({
        delivery: { id, endpointId: endpoint.id, eventType: ev.type, attempts: 0, firstAttemptAt: null, lease },
        createdAt: ev.created_at, data: openLinksIn(this.deps.links, ev.data),
        // Handed back unsent, it waits as an ordinary due delivery.
        restore: { status: 'pending', nextAttemptAt: now },
      })
    }
    if (moved !== cursor) this.moveCursor.run(moved, endpoint.id)
    refreshEndpointDue(this.deps.db, endpoint.id, now)
    return claimed
  }

  /**
   * Refills lanes that ran dry, closes idle ones, and opens lanes for due endpoints fairly (inside
   * the claim transaction). Each endpoint is changed only under its row lock (tryLockEndpoint);
   * one held elsewhere waits for a later turn (its holder's commit wakes this one: background.ts).
   */
  private fillLanes(now: number): boolean {
    const tick = performance.now()
    for (const [id, lane] of this.lanes) {
      if (lane.current || (lane.failed && lane.unrecorded > 0)) continue
      // The endpoint's row lock, taken before the first change made to it here.
      let held: boolean | undefined
      const hold = () => (held ??= tryLockEndpoint(this.deps.db, id))
      if (lane.failed || this.stopped) {
        if (lane.queue.length && !hold()) continue
        this.handBack(lane.queue.splice(0), now)
        lane.failed = false
      }
      // Only an endpoint with something due is asked for more (its hint is read fresh).
      const live = !this.stopped && this.liveEndpoint(lane)
      // An endpoint that is failing is not refilled in place: its lane closes, and it waits its
      // turn with the others, behind the endpoints that answer (see below).
      const struggling = lane.endpoint.consecutiveFailures > 0
      if (!lane.queue.length && live && !struggling && lane.endpoint.nextDueAt !== null && lane.endpoint.nextDueAt <= now) {
        if (!hold()) continue
        lane.queue = this.claimFor(lane.endpoint, now)
      }
      if (lane.queue.length) { lane.idleSince = null; continue }
      lane.idleSince ??= tick
      if (!live || struggling || tick - lane.idleSince >= LANE_IDLE_MS) {
        if (!hold()) continue
        this.lanes.delete(id)
        refreshEndpointDue(this.deps.db, id, now)
      }
    }
    if (this.stopped) return false
    const working = [...this.lanes.values()].filter((l) => this.busy(l))
    const free = this.global - working.length
    if (free <= 0) return false
    const perAccount = new Map<string, number>()
    const failingOf = new Map<string, number>()
    for (const lane of working) {
      perAccount.set(lane.accountId, (perAccount.get(lane.accountId) ?? 0) + 1)
      if (lane.endpoint.consecutiveFailures > 0) failingOf.set(lane.accountId, (failingOf.get(lane.accountId) ?? 0) + 1)
    }
    const full = [...perAccount].filter(([, n]) => n >= this.accountCap).map(([a]) => a)
    const limit = free * 2 + 16
    const rows = this.dueEndpoints.all(now, JSON.stringify(full), limit)
    // Round the waiting accounts, oldest due first within each.
    const byAccount = new Map<string, DueRow[]>()
    for (const r of rows) if (!this.lanes.has(r.id)) byAccount.set(r.account_id, [...(byAccount.get(r.account_id) ?? []), r])
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
        // Endpoints that answer come first (the query's order); failing ones get at most half the
        // account's lanes: 48 endpoints that never answer do not hold up the one that does.
        const failing = r.consecutive_failures > 0
        if (failing && (failingOf.get(accountId) ?? 0) >= this.strugglingCap) continue
        const endpoint = toEndpointRow(r)
        // Nothing to send after all (a stale hint, events it does not take): claimFor set the hint right.
        const claimed = this.claimFor(endpoint, now)
        if (!claimed.length) continue
        // No slot left: an idle lane gives its slot up.
        if (this.lanes.size >= this.global) {
          const idle = [...this.lanes].find(([idleId, l]) => !this.busy(l) && tryLockEndpoint(this.deps.db, idleId))
          if (idle) { this.lanes.delete(idle[0]); refreshEndpointDue(this.deps.db, idle[0], now) }
        }
        this.lanes.set(r.id, { endpoint, accountId, queue: claimed, current: null, seen: endpointsSeen(), failed: false, unrecorded: 0, idleSince: null })
        perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + 1)
        if (failing) failingOf.set(accountId, (failingOf.get(accountId) ?? 0) + 1)
        opened++
      }
    }
    return rows.length === limit && opened < free
  }

  /** Re-reads a lane's endpoint (a new URL or secret applies from the next send); false when it is no longer active. */
  private liveEndpoint(lane: Lane): boolean {
    lane.seen = endpointsSeen()
    const raw = this.endpointById.get(lane.endpoint.id)
    if (raw) lane.endpoint = toEndpointRow(raw)
    return !!raw && lane.endpoint.status === 'active' && lane.endpoint.deletedAt === null
  }

  /** Sends a lane's next claimed delivery, if it is free to. */
  private next(lane: Lane): void {
    if (lane.current || lane.failed || this.stopped || !lane.queue.length) return
    // Paused or deleted meanwhile: what is left goes back at the next turn.
    if (lane.seen !== endpointsSeen() && !this.liveEndpoint(lane)) { lane.failed = true; this.wake(); return }
    const claimed = lane.queue.shift()!
    lane.current = claimed
    const d = claimed.delivery
    const startedAt = this.deps.clock.now()
    const work = attemptDelivery(lane.endpoint, { id: d.id, type: d.eventType, accountId: lane.accountId, attempts: d.attempts, createdAt: claimed.createdAt, data: claimed.data },
      startedAt, { ...this.deps.send, signal: this.abort.signal })
      .catch((err): AttemptResult => ({
        ok: false, requestHeaders: {}, requestBody: '', responseStatus: null, responseHeaders: null, responseBody: null, durationMs: 0,
        error: 'connect', errorMessage: `the attempt failed inside towline: ${(err as Error)?.message ?? err}`, retryAfterMs: null,
      }))
      .then((result) => {
        // Shut down mid-flight: the lease is handed back at stop, and the delivery goes out after restart.
        if (this.abort.signal.aborted) return
        lane.current = null
        this.finished.push({ lane, claimed, result, startedAt })
        lane.unrecorded++
        if (!result.ok) lane.failed = true
        this.next(lane)
        // A failure is recorded at once (it stops the lane); otherwise results wait for a batch,
        // and a lane that ran dry is refilled within FLUSH_MS.
        this.soon(!result.ok || this.finished.length >= RECORD_AT ? 0 : FLUSH_MS)
      })
    this.work.add(work)
    void work.finally(() => this.work.delete(work))
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
    if (this.soonTimer) clearTimeout(this.soonTimer)
    if (this.reaper) clearInterval(this.reaper)
    onDeliveriesQueued(() => {})
    const all = Promise.allSettled([...this.work])
    await Promise.race([all, Bun.sleep(graceMs)])
    this.abort.abort()
    await Promise.race([Promise.allSettled([...this.work]), Bun.sleep(200)])
    try {
      const now = this.deps.clock.now()
      inTransaction(this.deps.db, () => {
        const last = this.finished.splice(0)
        const endpoints = new Set(last.map((f) => f.claimed.delivery.endpointId))
        lockEndpoints(this.deps.db, [...endpoints, ...this.lanes.keys()])
        for (const f of last) this.record(f, now)
        for (const id of endpoints) refreshEndpointDue(this.deps.db, id, now)
        for (const lane of this.lanes.values()) this.handBack([...(lane.current ? [lane.current] : []), ...lane.queue], now)
      })
      this.lanes.clear()
      this.holders.leave()
    } catch (err) {
      this.deps.logger.error({ err }, 'could not record or hand back webhook work at shutdown; leases run out by themselves')
    }
  }
}

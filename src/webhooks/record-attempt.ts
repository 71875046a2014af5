import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import { newId } from '../platform/ids'
import type { AttemptResult } from './send-attempt'
import { lockEndpoints, refreshEndpointDue } from './webhook.queries'

/** Failed attempts in a row after which an endpoint is paused. */
export const PAUSE_AFTER_FAILURES = 25

/**
 * When the next attempt falls, or null when the retries are spent. `schedule` holds the
 * offsets of the retries from the first attempt; jitter (up to 10% of the gap before a retry)
 * only adds time and never pushes a retry past the last offset. Retry-After waits at least that long.
 */
export function nextAttemptAt(schedule: number[], firstAttemptAt: number, attemptsMade: number, nowMs: number, retryAfterMs: number | null, random = Math.random): number | null {
  const k = attemptsMade - 1 // retries already made
  if (k >= schedule.length) return null
  const offset = schedule[k]!
  const gap = offset - (k > 0 ? schedule[k - 1]! : 0)
  const jittered = Math.min(firstAttemptAt + offset + Math.floor(random() * gap * 0.1), firstAttemptAt + schedule[schedule.length - 1]!)
  return Math.max(jittered, nowMs, retryAfterMs !== null ? nowMs + retryAfterMs : 0)
}

/** A delivery this process holds the lease on, as it was when claimed. */
export interface LeasedDelivery {
  id: string
  endpointId: string
  eventType: string
  /** Attempts made before this one. */
  attempts: number
  firstAttemptAt: number | null
  /** The lease expiry the claim wrote (next_attempt_at while sending): the record only applies while it still holds. */
  lease: number
  /** Where a delivery goes back to when the attempt is not part of its schedule (ping, manual resend) and fails. */
  restore?: { status: string; nextAttemptAt: number | null }
}

/**
 * Records an attempt and moves the delivery and its endpoint on, in one transaction: success
 * settles the delivery and resets the endpoint's failure streak; a failure schedules the next
 * retry (or gives up), and the 25th failure in a row pauses the endpoint. Test pings and manual
 * resends never count toward the streak and keep the delivery's own schedule. Counters move in
 * SQL, and the delivery only changes while this process still holds its lease (an attempt that
 * outlived its lease is logged, and whoever took the delivery over decides its fate).
 */
export function recordAttempt(
  db: Db,
  d: LeasedDelivery,
  r: AttemptResult,
  opts: {
    nowMs: number; schedule: number[]; countsTowardPause: boolean; retries: boolean; refreshDue?: boolean; endpointLocked?: boolean
    /** When this attempt began (the retry schedule counts from the first attempt's start, not from when it ended); nowMs if not given. */
    startedAtMs?: number
  },
): { status: string; nextAttemptAt: number | null; paused: boolean; leaseHeld: boolean } {
  return inTransaction(db, () => {
    // The endpoint's row lock before its delivery (the order every writer keeps); the scheduler takes it once per endpoint for a batch.
    if (!opts.endpointLocked) lockEndpoints(db, [d.endpointId])
    const attempt = d.attempts + 1
    const first = d.firstAttemptAt ?? opts.startedAtMs ?? opts.nowMs
    let status: string
    let next: number | null
    if (r.ok) { status = 'succeeded'; next = null }
    else if (opts.retries) { next = nextAttemptAt(opts.schedule, first, attempt, opts.nowMs, r.retryAfterMs); status = next !== null ? 'pending' : 'failed' }
    else { status = d.restore?.status ?? 'failed'; next = d.restore?.nextAttemptAt ?? null }
    db.$client.query(
      `INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_type, attempt, status, request_headers, response_status,
         response_headers, response_body, duration_ms, error, error_message, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(newId('att', opts.nowMs), d.id, d.endpointId, d.eventType, attempt, r.ok ? 'succeeded' : 'failed', JSON.stringify(r.requestHeaders),
      r.responseStatus, r.responseHeaders ? JSON.stringify(r.responseHeaders) : null, r.responseBody, r.durationMs, r.error, r.errorMessage,
      status === 'pending' ? next : null, opts.nowMs)
    const held = db.$client.query(
      `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, ?),
         next_attempt_at = ?, lease_owner = NULL, last_error = ?, updated_at = ? WHERE id = ? AND status = 'sending' AND next_attempt_at = ?`,
    ).run(status, first, status === 'pending' ? next : null, r.errorMessage, opts.nowMs, d.id, d.lease).changes > 0
    let paused = false
    if (opts.countsTowardPause) {
      if (r.ok) {
        db.$client.query('UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = ? AND consecutive_failures <> 0').run(d.endpointId)
      } else {
        const row = db.$client.query<{ n: number; status: string }, [string]>(
          'UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1 WHERE id = ? RETURNING consecutive_failures AS n, status',
        ).get(d.endpointId)
        if (row && row.n >= PAUSE_AFTER_FAILURES && row.status === 'active') {
          db.$client.query("UPDATE webhook_endpoints SET status = 'paused', paused_reason = 'failures', updated_at = ? WHERE id = ?").run(opts.nowMs, d.endpointId)
          paused = true
        }
      }
    }
    // The scheduler sets the hint once per endpoint for a whole batch (refreshDue: false).
    if (opts.refreshDue !== false) refreshEndpointDue(db, d.endpointId, opts.nowMs)
    return { status, nextAttemptAt: next, paused, leaseHeld: held }
  })
}

/**
 * Takes the lease on a delivery for one attempt: it becomes `sending` until `lease`, unless it is
 * already in flight (a lease still running) or no longer open. Returns what the attempt needs,
 * or null when someone else holds it. `onlyIfDue` keeps to deliveries that are due now.
 */
export function claimDelivery(db: Db, id: string, nowMs: number, lease: number, onlyIfDue: boolean, owner: string): { attempts: number; firstAttemptAt: number | null; status: string; nextAttemptAt: number | null } | null {
  const row = db.$client.query<{ status: string; next_attempt_at: number | null; attempts: number; first_attempt_at: number | null }, [string]>(
    'SELECT status, next_attempt_at, attempts, first_attempt_at FROM webhook_deliveries WHERE id = ?',
  ).get(id)
  if (!row) return null
  if (row.status === 'sending' && (row.next_attempt_at ?? 0) > nowMs) return null
  if (onlyIfDue && !((row.status === 'pending' || row.status === 'sending') && (row.next_attempt_at ?? Infinity) <= nowMs)) return null
  const taken = db.$client.query(
    "UPDATE webhook_deliveries SET status = 'sending', next_attempt_at = ?, lease_owner = ?, updated_at = ? WHERE id = ? AND status = ? AND next_attempt_at IS ?",
  ).run(lease, owner, nowMs, id, row.status, row.next_attempt_at).changes > 0
  if (!taken) return null
  return { attempts: row.attempts, firstAttemptAt: row.first_attempt_at, status: row.status, nextAttemptAt: row.next_attempt_at }
}

import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import { newId } from '../platform/ids'
import type { AttemptResult } from './send-attempt'

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

export interface DeliveryState { id: string; endpointId: string; eventType: string; attempts: number; firstAttemptAt: number | null; status: string }

/**
 * Records an attempt and moves the delivery and its endpoint on, in one transaction: success
 * settles the delivery and resets the endpoint's failure streak; a failure schedules the next
 * retry (or gives up), and the 25th failure in a row pauses the endpoint. Test pings never
 * count toward the streak.
 */
export function recordAttempt(
  db: Db,
  d: DeliveryState,
  r: AttemptResult,
  opts: { nowMs: number; schedule: number[]; countsTowardPause: boolean; retries: boolean },
): { status: string; nextAttemptAt: number | null; paused: boolean } {
  return inTransaction(db, () => {
    const attempt = d.attempts + 1
    const first = d.firstAttemptAt ?? opts.nowMs
    const next = r.ok || !opts.retries ? null : nextAttemptAt(opts.schedule, first, attempt, opts.nowMs, r.retryAfterMs)
    // Without retries (pings, manual resends) a failure leaves a delivery as it was; a ping is then failed.
    const status = r.ok ? 'succeeded' : next !== null ? 'pending' : opts.retries || d.status === 'sending' ? 'failed' : d.status
    db.$client.query(
      `INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_type, attempt, status, request_headers, request_body, response_status,
         response_headers, response_body, duration_ms, error, error_message, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(newId('att', opts.nowMs), d.id, d.endpointId, d.eventType, attempt, r.ok ? 'succeeded' : 'failed', JSON.stringify(r.requestHeaders), r.requestBody,
      r.responseStatus, r.responseHeaders ? JSON.stringify(r.responseHeaders) : null, r.responseBody, r.durationMs, r.error, r.errorMessage, next, opts.nowMs)
    db.$client.query(
      `UPDATE webhook_deliveries SET status = ?, attempts = ?, first_attempt_at = ?, next_attempt_at = CASE WHEN ? = 'pending' THEN coalesce(?, next_attempt_at) ELSE NULL END,
         last_error = ?, updated_at = ? WHERE id = ?`,
    ).run(status, attempt, first, status, next, r.errorMessage, opts.nowMs, d.id)
    let paused = false
    if (opts.countsTowardPause) {
      if (r.ok) {
        db.$client.query('UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = ?').run(d.endpointId)
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
    return { status, nextAttemptAt: next, paused }
  })
}

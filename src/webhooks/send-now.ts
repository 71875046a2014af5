import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { notFound } from '../platform/errors'
import { newId } from '../platform/ids'
import { recordAttempt } from './record-attempt'
import { attemptDelivery, type AttemptResult, type SendSettings } from './send-attempt'
import { DELIVERIES_WITH_DATA, DELIVERY_DATA, findEndpointOrThrow } from './webhook.queries'

export interface SendNowDeps { db: Db; clock: Clock; schedule: number[]; send: Omit<SendSettings, 'signal'> }

/** What POST /webhooks/{id}/test and a resend answer: what the endpoint said. */
export function attemptView(r: AttemptResult, deliveryId: string) {
  return { delivery_id: deliveryId, delivered: r.ok, response_status: r.responseStatus, response_body: r.responseBody, duration_ms: r.durationMs, error: r.error, error_message: r.errorMessage }
}

/** Sends a `ping` to one endpoint now (paused or not) and records it; pings never count toward pausing. */
export async function pingEndpoint(deps: SendNowDeps, accountId: string, endpointId: string) {
  const e = findEndpointOrThrow(deps.db, accountId, endpointId)
  const now = deps.clock.now()
  const id = newId('dlv', now)
  const data = JSON.stringify({ job: null, event: { type: 'ping', from: null, to: null, actor: 'system', detail: { endpoint_id: e.id }, sequence: 0, created_at: new Date(now).toISOString() } })
  deps.db.$client.query(
    `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_type, data, status, attempts, created_at, updated_at) VALUES (?, ?, ?, 'ping', ?, 'sending', 0, ?, ?)`,
  ).run(id, accountId, e.id, data, now, now)
  const result = await attemptDelivery(e, { id, type: 'ping', accountId, attempts: 0, createdAt: now, data }, deps.clock.now(), deps.send)
  recordAttempt(deps.db, { id, endpointId: e.id, eventType: 'ping', attempts: 0, firstAttemptAt: null, status: 'sending' }, result,
    { nowMs: deps.clock.now(), schedule: deps.schedule, countsTowardPause: false, retries: false })
  return attemptView(result, id)
}

/** Sends one delivery again now, with the same id and the next attempt number (resend, as Stripe and Svix offer). */
export async function resendDelivery(deps: SendNowDeps, accountId: string, endpointId: string, deliveryId: string) {
  const e = findEndpointOrThrow(deps.db, accountId, endpointId)
  const d = deps.db.$client.query<Record<string, any>, [string, string]>(`SELECT d.*, ${DELIVERY_DATA} FROM ${DELIVERIES_WITH_DATA} WHERE d.id = ? AND d.endpoint_id = ?`).get(deliveryId, e.id)
  if (!d) throw notFound('delivery', deliveryId)
  const result = await attemptDelivery(e, { id: d.id, type: d.event_type, accountId, attempts: d.attempts, createdAt: d.created_at, data: d.data }, deps.clock.now(), deps.send)
  // A manual resend settles the delivery on success; on failure a pending delivery keeps its schedule.
  recordAttempt(deps.db, { id: d.id, endpointId: e.id, eventType: d.event_type, attempts: d.attempts, firstAttemptAt: d.first_attempt_at, status: d.status === 'sending' ? 'failed' : d.status }, result,
    { nowMs: deps.clock.now(), schedule: deps.schedule, countsTowardPause: false, retries: false })
  return attemptView(result, d.id)
}

/** The last attempts to an endpoint, newest first (at most 100). */
export function listAttempts(db: Db, accountId: string, endpointId: string, limit: number) {
  const e = findEndpointOrThrow(db, accountId, endpointId)
  const rows = db.$client.query<Record<string, any>, [string, number]>('SELECT * FROM webhook_attempts WHERE endpoint_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(e.id, limit)
  return {
    object: 'list' as const,
    has_more: false,
    next_cursor: null,
    data: rows.map((r) => ({
      object: 'delivery_attempt' as const,
      id: r.id,
      delivery_id: r.delivery_id,
      event_type: r.event_type,
      attempt: r.attempt,
      status: r.status as 'succeeded' | 'failed',
      request_headers: JSON.parse(r.request_headers) as Record<string, string>,
      request_body: r.request_body as string,
      response_status: r.response_status as number | null,
      response_headers: r.response_headers ? (JSON.parse(r.response_headers) as Record<string, string>) : null,
      response_body: r.response_body as string | null,
      duration_ms: r.duration_ms as number,
      error: r.error as string | null,
      error_message: r.error_message as string | null,
      created_at: new Date(r.created_at).toISOString(),
      next_attempt_at: r.next_attempt_at ? new Date(r.next_attempt_at).toISOString() : null,
    })),
  }
}

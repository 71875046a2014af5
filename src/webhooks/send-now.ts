import type { Db } from '../db/client'
import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import type { Clock } from '../platform/clock'
import { AppError, notFound } from '../platform/errors'
import { decodeCursor, encodeCursor } from '../platform/paging'
import { newId } from '../platform/ids'
import { LEASE_OWNER } from '../platform/lease-owner'
import { claimDelivery, recordAttempt } from './record-attempt'
import { attemptDelivery, envelope, type AttemptResult, type SendSettings } from './send-attempt'
import { DELIVERIES_WITH_DATA, DELIVERY_DATA, findEndpointOrThrow } from './webhook.queries'
import { openLinksIn, type JobLinks } from '../jobs/job-links'

export interface SendNowDeps { db: Db; clock: Clock; schedule: number[]; send: Omit<SendSettings, 'signal'>; links: JobLinks }

/** How long a ping or a manual resend holds its delivery (the send timeout + 5 s). */
const leaseFor = (deps: SendNowDeps) => deps.clock.now() + deps.send.timeoutMs + 5_000

/** What POST /webhooks/{id}/test and a resend answer: what the endpoint said. */
export function attemptView(r: AttemptResult, deliveryId: string) {
  return { delivery_id: deliveryId, delivered: r.ok, response_status: r.responseStatus, response_body: r.responseBody, duration_ms: r.durationMs, error: r.error, error_message: r.errorMessage }
}

/** Sends a `ping` to one endpoint now (paused or not) and records it; pings never count toward pausing. */
export async function pingEndpoint(deps: SendNowDeps, ctx: OperationContext, endpointId: string) {
  requirePermission(ctx.actor, 'webhooks:manage')
  const e = findEndpointOrThrow(deps.db, ctx.scope, endpointId)
  const now = deps.clock.now()
  const id = newId('dlv', now)
  const lease = leaseFor(deps)
  const data = JSON.stringify({ job: null, event: { type: 'ping', from: null, to: null, actor: 'system', detail: { endpoint_id: e.id }, sequence: 0, created_at: new Date(now).toISOString() } })
  deps.db.$client.query(
    `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_type, data, status, attempts, next_attempt_at, lease_owner, created_at, updated_at) VALUES (?, ?, ?, 'ping', ?, 'sending', 0, ?, ?, ?, ?)`,
  ).run(id, e.accountId, e.id, data, lease, LEASE_OWNER, now, now)
  const startedAt = deps.clock.now()
  const result = await attemptDelivery(e, { id, type: 'ping', accountId: e.accountId, attempts: 0, createdAt: now, data }, startedAt, deps.send)
  recordAttempt(deps.db, { id, endpointId: e.id, eventType: 'ping', attempts: 0, firstAttemptAt: null, lease, restore: { status: 'failed', nextAttemptAt: null } }, result,
    { nowMs: deps.clock.now(), startedAtMs: startedAt, schedule: deps.schedule, countsTowardPause: false, retries: false })
  return attemptView(result, id)
}

/**
 * Sends one delivery again now, with the same id and the next attempt number (resend, as Stripe
 * and Svix offer). It takes the delivery's lease like the scheduler, so the two never send it at
 * once: a delivery in flight answers 409 delivery_in_flight. A failed resend leaves the
 * delivery's own schedule as it was.
 */
export async function resendDelivery(deps: SendNowDeps, ctx: OperationContext, endpointId: string, deliveryId: string) {
  requirePermission(ctx.actor, 'webhooks:manage')
  const e = findEndpointOrThrow(deps.db, ctx.scope, endpointId)
  const d = deps.db.$client.query<Record<string, any>, [string, string]>(`SELECT d.*, ${DELIVERY_DATA} FROM ${DELIVERIES_WITH_DATA} WHERE d.id = ? AND d.endpoint_id = ?`).get(deliveryId, e.id)
  if (!d) throw notFound('delivery', deliveryId)
  const now = deps.clock.now()
  const lease = leaseFor(deps)
  const claimed = claimDelivery(deps.db, d.id, now, lease, false, LEASE_OWNER)
  if (!claimed) throw new AppError('delivery_in_flight', 'That delivery is being attempted right now; its attempts show the outcome in a moment.', { delivery_id: d.id })
  // A lease a crash left behind counts as due now; the scheduler's retries carry on after a failed resend.
  const restore = claimed.status === 'sending' ? { status: 'pending', nextAttemptAt: now } : { status: claimed.status, nextAttemptAt: claimed.nextAttemptAt }
  const startedAt = deps.clock.now()
  const result = await attemptDelivery(e, { id: d.id, type: d.event_type, accountId: e.accountId, attempts: claimed.attempts, createdAt: d.created_at, data: openLinksIn(deps.links, d.data) }, startedAt, deps.send)
  recordAttempt(deps.db, { id: d.id, endpointId: e.id, eventType: d.event_type, attempts: claimed.attempts, firstAttemptAt: claimed.firstAttemptAt, lease, restore }, result,
    { nowMs: deps.clock.now(), startedAtMs: startedAt, schedule: deps.schedule, countsTowardPause: false, retries: false })
  return attemptView(result, d.id)
}

/** How many of an endpoint's attempts GET /webhooks/{id}/deliveries lists, newest first. */
const LISTED_ATTEMPTS = 100

/**
 * The last attempts to an endpoint, newest first: the last 100, in pages of `limit` (a cursor
 * names the last attempt listed and how many of the 100 came before it). Each request body is
 * rebuilt from the delivery and its event's payload: the envelope is a pure function of them
 * and the attempt number, so it is not stored once per attempt.
 */
export function listAttempts(ctx: OperationContext, endpointId: string, limit: number, cursor?: string) {
  requirePermission(ctx.actor, 'webhooks:manage')
  const { db, links } = ctx
  const e = findEndpointOrThrow(db, ctx.scope, endpointId)
  const [beforeAt, beforeRow, listed] = cursor ? decodeCursor<[number, number, number]>(cursor, ['number', 'number', 'number'], { owner: `attempts of ${e.id}` }) : [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 0]
  const room = Math.max(0, Math.min(limit, LISTED_ATTEMPTS - listed))
  const rows = db.$client.query<Record<string, any>, [string, number, number, number, number]>(
    `SELECT a.*, a.rowid AS row_number, d.account_id AS d_account_id, d.created_at AS d_created_at, ${DELIVERY_DATA}
       FROM webhook_attempts a LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id LEFT JOIN webhook_events p ON p.event_id = d.event_id
      WHERE a.endpoint_id = ? AND (a.created_at < ? OR (a.created_at = ? AND a.rowid < ?)) ORDER BY a.created_at DESC, a.rowid DESC LIMIT ?`,
  ).all(e.id, beforeAt, beforeAt, beforeRow, room + 1)
  const has_more = rows.length > room && listed + room < LISTED_ATTEMPTS
  const shown = rows.slice(0, room)
  const last = shown.at(-1)
  return {
    object: 'list' as const,
    has_more,
    next_cursor: has_more && last ? encodeCursor([last.created_at as number, last.row_number as number, listed + shown.length, `attempts of ${e.id}`]) : null,
    data: shown.map((r) => ({
      object: 'delivery_attempt' as const,
      id: r.id,
      delivery_id: r.delivery_id,
      event_type: r.event_type,
      attempt: r.attempt,
      status: r.status as 'succeeded' | 'failed',
      request_headers: JSON.parse(r.request_headers) as Record<string, string>,
      request_body: r.data === null || r.data === undefined ? '' : envelope({ id: r.delivery_id, type: r.event_type, accountId: r.d_account_id, attempt: r.attempt, createdAt: r.d_created_at, data: openLinksIn(links, r.data) }),
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

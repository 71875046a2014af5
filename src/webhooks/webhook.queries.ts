import { rowLock, type Db } from '../db/client'
import type { AccountScope } from '../accounts/account-scope'
import { notFound } from '../platform/errors'
import { decodeCursor, page } from '../platform/paging'
import type { webhookEndpoints } from './webhook.table'

export type EndpointRow = typeof webhookEndpoints.$inferSelect

/**
 * Deliveries (`d`) with the envelope data each one sends (`data`): a ping keeps its own, a job
 * event's is in the event log (`webhook_events`). Use as `SELECT ${DELIVERY_DATA} FROM ${DELIVERIES_WITH_DATA}`.
 */
export const DELIVERIES_WITH_DATA = 'webhook_deliveries d LEFT JOIN webhook_events p ON p.event_id = d.event_id'
export const DELIVERY_DATA = 'coalesce(d.data, p.data) AS data'

/** Maps a raw webhook_endpoints row. */
export function toEndpointRow(r: Record<string, any>): EndpointRow {
  return {
    id: r.id, accountId: r.account_id, url: r.url, description: r.description, events: JSON.parse(r.events), status: r.status,
    pausedReason: r.paused_reason, secret: r.secret, previousSecret: r.previous_secret, previousSecretExpiresAt: r.previous_secret_expires_at,
    olderSecrets: r.older_secrets ? JSON.parse(r.older_secrets) : null,
    consecutiveFailures: r.consecutive_failures, siteIds: r.site_ids ? JSON.parse(r.site_ids) : null, nextDueAt: r.next_due_at, cursor: r.cursor,
    createdAt: r.created_at, updatedAt: r.updated_at, deletedAt: r.deleted_at,
  }
}

/**
 * Tells whether a caller manages an endpoint: a key for every site manages them all; a key
 * limited to sites manages the endpoints made for those sites only (never one that receives
 * jobs of a site it cannot see).
 */
export function managesEndpoint(scope: AccountScope, e: Pick<EndpointRow, 'accountId' | 'siteIds'>): boolean {
  if (e.accountId !== scope.accountId) return false
  if (scope.siteIds === null) return true
  return e.siteIds !== null && e.siteIds.every((s) => scope.siteIds!.includes(s))
}

/** Finds a live endpoint the caller manages, or throws 404 (other accounts' and sites' answer as unknown ones). */
export function findEndpointOrThrow(db: Db, scope: AccountScope, id: string): EndpointRow {
  const raw = db.$client.query<Record<string, any>, [string, string]>('SELECT * FROM webhook_endpoints WHERE id = ? AND account_id = ? AND deleted_at IS NULL').get(id, scope.accountId)
  const row = raw ? toEndpointRow(raw) : undefined
  if (!row || !managesEndpoint(scope, row)) throw notFound('webhook endpoint', id)
  return row
}

/** Counts an account's live endpoints. */
export function countEndpoints(db: Db, accountId: string): number {
  return db.$client.query<{ n: number }, [string]>('SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = ? AND deleted_at IS NULL').get(accountId)!.n
}

/** Lists the live endpoints a caller manages, oldest first, cursor-paged like every list. */
export function listEndpointsPage(db: Db, scope: AccountScope, limit: number, cursor: string | undefined) {
  const [afterAt, afterId] = cursor ? decodeCursor<[number, string]>(cursor, ['number', 'string'], { idPrefix: 'whk' }) : [-1, '']
  const rows: EndpointRow[] = []
  // Site filtering is done here (endpoints per account are capped), so read on until the page is full.
  let at = afterAt
  let id = afterId
  for (;;) {
    const batch = db.$client.query<Record<string, any>, [string, number, number, string, number]>(
      'SELECT * FROM webhook_endpoints WHERE account_id = ? AND deleted_at IS NULL AND (created_at > ? OR (created_at = ? AND id > ?)) ORDER BY created_at, id LIMIT ?',
    ).all(scope.accountId, at, at, id, 200).map(toEndpointRow)
    for (const e of batch) if (managesEndpoint(scope, e)) rows.push(e)
    if (batch.length < 200 || rows.length > limit) break
    at = batch.at(-1)!.createdAt
    id = batch.at(-1)!.id
  }
  return page(rows, limit, endpointView, (e) => [e.createdAt, e.id])
}

/** The endpoint as the API shows it (never its secret). */
export function endpointView(e: EndpointRow) {
  return {
    object: 'webhook_endpoint' as const,
    id: e.id,
    url: e.url,
    events: e.events,
    status: e.status as 'active' | 'paused',
    paused_reason: e.pausedReason as 'manual' | 'failures' | null,
    description: e.description,
    consecutive_failures: e.consecutiveFailures,
    site_ids: e.siteIds,
    created_at: new Date(e.createdAt).toISOString(),
    updated_at: new Date(e.updatedAt).toISOString(),
  }
}

/**
 * Sets an endpoint's `next_due_at`: the lease expiry of a delivery in flight (nothing more goes
 * there before it ends), else the earliest of its open deliveries' due times and, when events
 * wait after its cursor, now; else null.
 */
export function refreshEndpointDue(db: Db, endpointId: string, nowMs: number): void {
  db.$client.query<unknown, [string, number]>(
    `UPDATE webhook_endpoints SET next_due_at = coalesce(
       (SELECT min(next_attempt_at) FROM webhook_deliveries WHERE endpoint_id = ?1 AND status = 'sending' AND next_attempt_at > ?2),
       (SELECT min(v) FROM (
          SELECT min(next_attempt_at) AS v FROM webhook_deliveries WHERE endpoint_id = ?1 AND status = 'sending' AND next_attempt_at IS NOT NULL
          UNION ALL SELECT min(next_attempt_at) FROM webhook_deliveries WHERE endpoint_id = ?1 AND status = 'pending' AND next_attempt_at IS NOT NULL
          UNION ALL SELECT ?2 WHERE EXISTS (SELECT 1 FROM webhook_events v WHERE v.account_id = webhook_endpoints.account_id AND v.seq > webhook_endpoints.cursor)) AS due))
     WHERE id = ?1`,
  ).run(endpointId, nowMs)
}

/** The newest event's position in the log: where a new endpoint starts reading. */
export function lastEventSeq(db: Db): number {
  return db.$client.query<{ seq: number }, []>('SELECT coalesce(max(seq), 0) AS seq FROM webhook_events').get()!.seq
}

/**
 * Lowers endpoints' `next_due_at` to `atMs` (new deliveries are due then); never raises it.
 * On PostgreSQL every row is locked (and written) even when its hint is already that low: a
 * scheduler claims an endpoint under its row lock (scheduler.ts), so it either waits for this
 * transaction's events to commit or has committed before this lowers the hint it set.
 */
export function markEndpointsDue(db: Db, endpointIds: string[], atMs: number): void {
  const lower = db.$client.query<unknown, [number, string]>(db.engine === 'postgres'
    ? 'UPDATE webhook_endpoints SET next_due_at = CASE WHEN next_due_at IS NULL OR next_due_at > ?1 THEN ?1 ELSE next_due_at END WHERE id = ?2'
    : 'UPDATE webhook_endpoints SET next_due_at = ?1 WHERE id = ?2 AND (next_due_at IS NULL OR next_due_at > ?1)')
  for (const id of endpointIds) lower.run(atMs, id)
}

/**
 * Holds endpoints' row locks until the transaction ends (PostgreSQL; SQLite has one writer and
 * needs none), waiting for whoever holds them. An endpoint's row lock guards its deliveries and
 * cursor: every transaction that changes them takes it first (in id order when several), and a
 * scheduler's claim transaction takes it without waiting (`FOR UPDATE SKIP LOCKED`), so no two
 * can deadlock.
 */
export function lockEndpoints(db: Db, endpointIds: Iterable<string>): void {
  if (db.engine !== 'postgres') return
  const lock = db.$client.query<unknown, [string]>(`SELECT id FROM webhook_endpoints WHERE id = ?${rowLock(db, 'wait')}`)
  for (const id of [...new Set(endpointIds)].sort()) lock.get(id)
}

/**
 * Takes an endpoint's row lock without waiting, in a claim transaction (always true on SQLite):
 * false when another transaction holds it (it records, hands back or claims there).
 */
export function tryLockEndpoint(db: Db, endpointId: string): boolean {
  if (db.engine !== 'postgres') return true
  return db.$client.query<{ id: string }, [string]>(`SELECT id FROM webhook_endpoints WHERE id = ?${rowLock(db, 'skip')}`).get(endpointId) !== null
}

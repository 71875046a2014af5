import type { Db } from '../db/client'
import { notFound } from '../platform/errors'
import type { webhookEndpoints } from './webhook.table'

export type EndpointRow = typeof webhookEndpoints.$inferSelect

/**
 * Deliveries (`d`) with the envelope data each one sends (`data`): a ping keeps its own, a job
 * event's is stored once in webhook_event_payloads. Use as `SELECT ${DELIVERY_DATA} FROM ${DELIVERIES_WITH_DATA}`.
 */
export const DELIVERIES_WITH_DATA = 'webhook_deliveries d LEFT JOIN webhook_event_payloads p ON p.event_id = d.event_id'
export const DELIVERY_DATA = 'coalesce(d.data, p.data) AS data'

/** Maps a raw webhook_endpoints row. */
export function toEndpointRow(r: Record<string, any>): EndpointRow {
  return {
    id: r.id, accountId: r.account_id, url: r.url, description: r.description, events: JSON.parse(r.events), status: r.status,
    pausedReason: r.paused_reason, secret: r.secret, previousSecret: r.previous_secret, previousSecretExpiresAt: r.previous_secret_expires_at,
    consecutiveFailures: r.consecutive_failures, createdAt: r.created_at, updatedAt: r.updated_at, deletedAt: r.deleted_at,
  }
}

/** Finds a live endpoint of the account, or throws 404. */
export function findEndpointOrThrow(db: Db, accountId: string, id: string): EndpointRow {
  const raw = db.$client.query<Record<string, any>, [string, string]>('SELECT * FROM webhook_endpoints WHERE id = ? AND account_id = ? AND deleted_at IS NULL').get(id, accountId)
  if (!raw) throw notFound('webhook endpoint', id)
  return toEndpointRow(raw)
}

/** Lists an account's live endpoints, oldest first. */
export function listEndpointRows(db: Db, accountId: string): EndpointRow[] {
  return db.$client.query<Record<string, any>, [string]>('SELECT * FROM webhook_endpoints WHERE account_id = ? AND deleted_at IS NULL ORDER BY created_at, id').all(accountId).map(toEndpointRow)
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
    created_at: new Date(e.createdAt).toISOString(),
    updated_at: new Date(e.updatedAt).toISOString(),
  }
}

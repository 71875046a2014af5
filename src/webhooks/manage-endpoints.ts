import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import type { Clock } from '../platform/clock'
import { validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import { checkHost, describeRefused, type AddressPolicy } from '../platform/net'
import { WEBHOOK_EVENT_TYPES } from '../jobs/job-events'
import { mintSecret } from './signature'
import { wakeDeliveries } from './fan-out'
import { findEndpointOrThrow, type EndpointRow } from './webhook.queries'

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000

/** `resolve` and `isAllowedAddress` replace the system resolver and the public-address policy (tests). */
export interface EndpointDeps extends AddressPolicy { db: Db; clock: Clock; allowPrivate: boolean }

/**
 * Checks a target URL: https only, no credentials, and unless the operator allows private
 * targets, no address of its host that is not public, however the host is written (URL
 * parsing has already turned decimal, hex, octal and short IPv4 into dotted form).
 */
export async function checkTargetUrl(raw: string, allowPrivate: boolean, policy: AddressPolicy = {}): Promise<string> {
  let url: URL
  try { url = new URL(raw) } catch { throw validationFailed([{ path: 'url', message: 'is not an absolute URL' }]) }
  if (url.protocol !== 'https:') throw validationFailed([{ path: 'url', message: 'must use https' }])
  if (url.username || url.password) throw validationFailed([{ path: 'url', message: 'must not carry credentials' }])
  if (!allowPrivate) {
    // A name that does not resolve yet is accepted: every attempt resolves and checks it again.
    const refused = await checkHost(url.hostname, policy).then((c) => c.refused, () => [])
    if (refused.length) {
      throw validationFailed([{ path: 'url', message: `points to a loopback, private or other non-public address (${describeRefused(refused)}); the operator can allow these with TOWLINE_WEBHOOK_ALLOW_PRIVATE=1` }])
    }
  }
  return url.toString()
}

/** Checks a list of event types: known types, or ["*"] for all. */
export function checkEvents(events: string[]): string[] {
  if (!events.length) throw validationFailed([{ path: 'events', message: 'must name at least one event type, or "*"' }])
  if (events.includes('*')) return ['*']
  const fields = events.flatMap((e, i) => ((WEBHOOK_EVENT_TYPES as readonly string[]).includes(e) ? [] : [{ path: `events.${i}`, message: `"${e}" is not an event type` }]))
  if (fields.length) throw validationFailed(fields)
  return [...new Set(events)]
}

/** Adds an endpoint; the secret is returned here and on rotation only. */
export async function createEndpoint(deps: EndpointDeps, accountId: string, input: { url: string; events: string[]; description?: string | null }) {
  const url = await checkTargetUrl(input.url, deps.allowPrivate, deps)
  const events = checkEvents(input.events)
  const now = deps.clock.now()
  const row: EndpointRow = {
    id: newId('whk', now), accountId, url, description: input.description?.trim() || null, events, status: 'active', pausedReason: null,
    secret: mintSecret(), previousSecret: null, previousSecretExpiresAt: null, consecutiveFailures: 0, createdAt: now, updatedAt: now, deletedAt: null,
  }
  deps.db.$client.query(
    `INSERT INTO webhook_endpoints (id, account_id, url, description, events, status, paused_reason, secret, consecutive_failures, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'active', NULL, ?, 0, ?, ?)`,
  ).run(row.id, accountId, url, row.description, JSON.stringify(events), row.secret, now, now)
  return row
}

/** Changes an endpoint: URL, events, description, pause/resume, secret rotation. Returns it and, on rotation, the new secret. */
export async function updateEndpoint(
  deps: EndpointDeps,
  accountId: string,
  id: string,
  input: { url?: string; events?: string[]; description?: string | null; status?: 'active' | 'paused'; rotate_secret?: boolean },
): Promise<{ endpoint: EndpointRow; secret?: string }> {
  findEndpointOrThrow(deps.db, accountId, id)
  const url = input.url !== undefined ? await checkTargetUrl(input.url, deps.allowPrivate, deps) : undefined
  const events = input.events !== undefined ? checkEvents(input.events) : undefined
  const result = inTransaction(deps.db, () => {
    const e = findEndpointOrThrow(deps.db, accountId, id)
    const now = deps.clock.now()
    const next: EndpointRow = { ...e, updatedAt: now }
    if (url !== undefined) next.url = url
    if (events !== undefined) next.events = events
    if (input.description !== undefined) next.description = input.description?.trim() || null
    if (input.status === 'paused' && e.status !== 'paused') { next.status = 'paused'; next.pausedReason = 'manual' }
    // Resuming clears the failure streak; held deliveries then go out oldest first.
    if (input.status === 'active' && e.status !== 'active') { next.status = 'active'; next.pausedReason = null; next.consecutiveFailures = 0 }
    let secret: string | undefined
    if (input.rotate_secret) {
      secret = mintSecret()
      next.previousSecret = e.secret
      next.previousSecretExpiresAt = now + ROTATION_OVERLAP_MS
      next.secret = secret
    }
    deps.db.$client.query(
      `UPDATE webhook_endpoints SET url = ?, events = ?, description = ?, status = ?, paused_reason = ?, consecutive_failures = ?,
         secret = ?, previous_secret = ?, previous_secret_expires_at = ?, updated_at = ? WHERE id = ?`,
    ).run(next.url, JSON.stringify(next.events), next.description, next.status, next.pausedReason, next.consecutiveFailures,
      next.secret, next.previousSecret, next.previousSecretExpiresAt, now, id)
    return { endpoint: next, secret }
  })
  wakeDeliveries() // a resume sends held deliveries now; other changes take effect from the next pass
  return result
}

/** Deletes an endpoint: it disappears from the API and its undelivered deliveries are cancelled. */
export function deleteEndpoint(deps: EndpointDeps, accountId: string, id: string): EndpointRow {
  return inTransaction(deps.db, () => {
    const e = findEndpointOrThrow(deps.db, accountId, id)
    const now = deps.clock.now()
    deps.db.$client.query('UPDATE webhook_endpoints SET deleted_at = ?, updated_at = ? WHERE id = ?').run(now, now, id)
    deps.db.$client.query("UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = ? WHERE endpoint_id = ? AND status = 'pending'").run(now, id)
    queueMicrotask(wakeDeliveries)
    return { ...e, deletedAt: now }
  })
}

/** The secrets that sign a delivery now: the current one, and the previous one during the overlap. */
export function signingSecrets(e: EndpointRow, nowMs: number): string[] {
  return e.previousSecret && (e.previousSecretExpiresAt ?? 0) > nowMs ? [e.secret, e.previousSecret] : [e.secret]
}

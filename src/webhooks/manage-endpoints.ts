import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import type { Clock } from '../platform/clock'
import { AppError, validationFailed, validationProblemsOf } from '../platform/errors'
import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { newId } from '../platform/ids'
import { checkHost, describeRefused, type AddressPolicy } from '../platform/net'
import { WEBHOOK_EVENT_TYPES } from '../jobs/job-events'
import { mintSecret } from './signature'
import { endpointsChanged, takesEvent } from './fan-out'
import { countEndpoints, endpointView, findEndpointOrThrow, lastEventSeq, listEndpointsPage, lockEndpoints, refreshEndpointDue, type EndpointRow } from './webhook.queries'
import { pageLimit } from '../platform/paging'

/** Live endpoints one account may have: enough for any integration, few enough that no tenant can weigh on the others. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 100

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000
/** Secrets rotated out before the previous one kept signing at most (rotations within one day beyond this end the oldest overlap). */
export const MAX_OLDER_SECRETS = 4

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
  const fields = events.flatMap((e, i) => ((WEBHOOK_EVENT_TYPES as readonly string[]).includes(e) ? [] : [{ path: `events.${i}`, message: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}, or "*" for all` }]))
  if (fields.length) throw validationFailed(fields)
  return [...new Set(events)]
}

/** Checks the event types and the URL given (either may be absent), naming every field at fault at once. */
async function checkTarget(deps: EndpointDeps, input: { url?: string; events?: string[] }): Promise<{ url?: string; events?: string[] }> {
  let events: string[] | undefined
  let url: string | undefined
  const problems = validationProblemsOf(() => { if (input.events !== undefined) events = checkEvents(input.events) })
  try {
    if (input.url !== undefined) url = await checkTargetUrl(input.url, deps.allowPrivate, deps)
  } catch (err) {
    problems.push(...validationProblemsOf(() => { throw err })) // its fields, or the error itself rethrown
  }
  if (problems.length) throw validationFailed(problems)
  return { url, events }
}

/**
 * Adds an endpoint; the secret is returned here and on rotation only. An endpoint made by a key
 * limited to sites receives the jobs of those sites only, and only such keys (or unlimited ones)
 * manage it.
 */
export async function createEndpoint(deps: EndpointDeps, ctx: OperationContext, input: { url: string; events: string[]; description?: string | null }) {
  requirePermission(ctx.actor, 'webhooks:manage')
  const scope = ctx.scope
  const checked = await checkTarget(deps, input)
  const events = checked.events!
  const url = checked.url!
  const now = deps.clock.now()
  const row: EndpointRow = {
    id: newId('whk', now), accountId: scope.accountId, url, description: input.description?.trim() || null, events, status: 'active', pausedReason: null,
    secret: mintSecret(), previousSecret: null, previousSecretExpiresAt: null, olderSecrets: null, consecutiveFailures: 0, siteIds: scope.siteIds, nextDueAt: null,
    cursor: 0, createdAt: now, updatedAt: now, deletedAt: null,
  }
  inTransaction(deps.db, () => {
    // Counted in the insert's transaction, so concurrent creates cannot pass the cap together.
    if (countEndpoints(deps.db, scope.accountId) >= MAX_ENDPOINTS_PER_ACCOUNT) {
      throw new AppError('limit_exceeded', `This account already has ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints, the most it may have. Delete one first, or subscribe one endpoint to more event types.`, { limit: MAX_ENDPOINTS_PER_ACCOUNT })
    }
    deps.db.$client.query(
      `INSERT INTO webhook_endpoints (id, account_id, url, description, events, status, paused_reason, secret, consecutive_failures, site_ids, cursor, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'active', NULL, ?, 0, ?, ?, ?, ?)`,
    ).run(row.id, scope.accountId, url, row.description, JSON.stringify(events), row.secret, scope.siteIds ? JSON.stringify(scope.siteIds) : null, (row.cursor = lastEventSeq(deps.db)), now, now)
  })
  return row
}

/** Changes an endpoint: URL, events, description, pause/resume, secret rotation. Returns it and, on rotation, the new secret. */
export async function updateEndpoint(
  deps: EndpointDeps,
  ctx: OperationContext,
  id: string,
  input: { url?: string; events?: string[]; description?: string | null; status?: 'active' | 'paused'; rotate_secret?: boolean },
): Promise<{ endpoint: EndpointRow; secret?: string }> {
  requirePermission(ctx.actor, 'webhooks:manage')
  const scope = ctx.scope
  findEndpointOrThrow(deps.db, scope, id)
  const { events, url } = await checkTarget(deps, input)
  const result = inTransaction(deps.db, () => {
    // The endpoint's row lock first (PostgreSQL): its cursor and deliveries may change here.
    lockEndpoints(deps.db, [id])
    const e = findEndpointOrThrow(deps.db, scope, id)
    const now = deps.clock.now()
    const next: EndpointRow = { ...e, updatedAt: now }
    if (url !== undefined) next.url = url
    if (events !== undefined && !sameTypes(events, e.events)) {
      // What happened under the old list is decided by it: held, never dropped, nor sent under the new one.
      holdWhatItTook(deps.db, e, now)
      next.events = events
    }
    if (input.description !== undefined) next.description = input.description?.trim() || null
    if (input.status === 'paused' && e.status !== 'paused') { next.status = 'paused'; next.pausedReason = 'manual' }
    // Resuming clears the failure streak; held deliveries then go out oldest first.
    if (input.status === 'active' && e.status !== 'active') { next.status = 'active'; next.pausedReason = null; next.consecutiveFailures = 0 }
    let secret: string | undefined
    if (input.rotate_secret) {
      secret = mintSecret()
      // Every secret rotated out keeps signing for its own 24 hours, a second rotation within them included.
      const older = [...(e.previousSecret && (e.previousSecretExpiresAt ?? 0) > now ? [{ secret: e.previousSecret, expires_at: e.previousSecretExpiresAt! }] : []), ...(e.olderSecrets ?? [])]
        .filter((o) => o.expires_at > now).slice(0, MAX_OLDER_SECRETS)
      next.olderSecrets = older.length ? older : null
      next.previousSecret = e.secret
      next.previousSecretExpiresAt = now + ROTATION_OVERLAP_MS
      next.secret = secret
    }
    deps.db.$client.query(
      `UPDATE webhook_endpoints SET url = ?, events = ?, description = ?, status = ?, paused_reason = ?, consecutive_failures = ?,
         secret = ?, previous_secret = ?, previous_secret_expires_at = ?, older_secrets = ?, updated_at = ? WHERE id = ?`,
    ).run(next.url, JSON.stringify(next.events), next.description, next.status, next.pausedReason, next.consecutiveFailures,
      next.secret, next.previousSecret, next.previousSecretExpiresAt, next.olderSecrets ? JSON.stringify(next.olderSecrets) : null, now, id)
    // A resumed endpoint is due again from its oldest held delivery.
    if (next.status === 'active') refreshEndpointDue(deps.db, id, now)
    return { endpoint: next, secret }
  })
  endpointsChanged() // the next send uses the new URL and secret; a resume sends what was held
  return result
}

const sameTypes = (a: string[], b: string[]) => a.length === b.length && a.every((t) => b.includes(t))

/**
 * Makes a pending delivery of every event in the log after an endpoint's cursor that its
 * current `events` (and sites) take, oldest first, and moves the cursor to the end of the log:
 * before its list changes, what happened under the old list is held for it as the old list
 * decided (a paused endpoint sends it when it resumes), and what it did not take then is never
 * sent. Inside the caller's transaction, holding the endpoint's row lock.
 */
function holdWhatItTook(db: Db, e: EndpointRow, nowMs: number): void {
  const last = lastEventSeq(db)
  const events = db.$client.query<{ event_id: string; type: string; site_id: string; created_at: number }, [string, number, number]>(
    'SELECT event_id, type, site_id, created_at FROM webhook_events WHERE account_id = ? AND seq > ? AND seq <= ? ORDER BY seq',
  ).all(e.accountId, e.cursor, last)
  const insert = db.$client.query<unknown, [string, string, string, string, string, number, number, number]>(
    `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
  )
  for (const ev of events) {
    if (takesEvent(e, ev.type, ev.site_id)) insert.run(newId('dlv', nowMs), e.accountId, e.id, ev.event_id, ev.type, nowMs, ev.created_at, nowMs)
  }
  db.$client.query<unknown, [number, string]>('UPDATE webhook_endpoints SET cursor = ? WHERE id = ?').run(last, e.id)
}

/** Deletes an endpoint: it disappears from the API and its undelivered deliveries are cancelled. */
export function deleteEndpoint(deps: EndpointDeps, ctx: OperationContext, id: string): EndpointRow {
  requirePermission(ctx.actor, 'webhooks:manage')
  const scope = ctx.scope
  return inTransaction(deps.db, () => {
    const e = findEndpointOrThrow(deps.db, scope, id)
    const now = deps.clock.now()
    deps.db.$client.query('UPDATE webhook_endpoints SET deleted_at = ?, next_due_at = NULL, updated_at = ? WHERE id = ?').run(now, now, id)
    // Open deliveries are cancelled; one in flight finishes, is logged, and stays cancelled.
    deps.db.$client.query("UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = ? WHERE endpoint_id = ? AND next_attempt_at IS NOT NULL").run(now, id)
    queueMicrotask(endpointsChanged)
    return { ...e, deletedAt: now }
  })
}

/** The secrets that sign a delivery now: the current one, then each rotated out within the last 24 hours, newest first. */
export function signingSecrets(e: EndpointRow, nowMs: number): string[] {
  const out = [e.secret]
  if (e.previousSecret && (e.previousSecretExpiresAt ?? 0) > nowMs) out.push(e.previousSecret)
  for (const o of e.olderSecrets ?? []) if (o.expires_at > nowMs) out.push(o.secret)
  return out
}

/** GET /webhooks: the endpoints the actor manages, oldest first, cursor-paged. */
export function listEndpoints(ctx: OperationContext, query: { limit?: string; cursor?: string }) {
  requirePermission(ctx.actor, 'webhooks:manage')
  return listEndpointsPage(ctx.db, ctx.scope, pageLimit(query.limit), query.cursor)
}

/** GET /webhooks/{id}: one endpoint the actor manages. */
export function getEndpoint(ctx: OperationContext, id: string) {
  requirePermission(ctx.actor, 'webhooks:manage')
  return endpointView(findEndpointOrThrow(ctx.db, ctx.scope, id))
}

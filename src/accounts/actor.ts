import { AppError } from '../platform/errors'
import { SCOPES, type Scope } from './scopes'

/**
 * Who acts in an operation. The timeline's `actor` is `kind`; API keys and the service itself
 * (the console, the demo loader, background work) are both `system`.
 */
export type Actor =
  | { kind: 'system'; via: 'key'; keyId: string; scopes: readonly Scope[] }
  | { kind: 'system'; via: 'operator' | 'service' }
  | { kind: 'dispatcher'; userId: string; role: 'owner' | 'dispatcher' }
  | { kind: 'driver'; unitId: string; jobId: string }
  | { kind: 'customer'; jobId: string }

/** The kinds the timeline names. */
export type ActorKind = Actor['kind']

/**
 * What an operation may require. The API scopes, plus what only a dashboard owner may do, plus
 * what a job's links allow: `jobs:drive` (the driver's page of that job) and `jobs:track`
 * (the customer's tracking page of that job). `commercial_accounts:manage` (editing the commercial
 * accounts directory) is no API scope: owners and dispatchers edit it in the dashboard.
 */
export type Permission = Scope | 'keys:manage' | 'users:manage' | 'settings:manage' | 'commercial_accounts:manage' | 'jobs:drive' | 'jobs:track'

const OWNER_ONLY: readonly Permission[] = ['webhooks:manage', 'keys:manage', 'users:manage', 'settings:manage']
const EVERYTHING: readonly Permission[] = [...SCOPES, 'keys:manage', 'users:manage', 'settings:manage', 'commercial_accounts:manage']

/** Tells whether an actor holds a permission (a driver's or customer's only on their own job, which their scope enforces). */
export function can(actor: Actor, permission: Permission): boolean {
  switch (actor.kind) {
    case 'system': return actor.via === 'key' ? (actor.scopes as readonly string[]).includes(permission) : EVERYTHING.includes(permission)
    case 'dispatcher': return EVERYTHING.includes(permission) && (actor.role === 'owner' || !OWNER_ONLY.includes(permission))
    case 'driver': return permission === 'jobs:drive'
    case 'customer': return permission === 'jobs:track'
  }
}

const WHO: Record<ActorKind, string> = { system: 'This key', dispatcher: 'A dispatcher', driver: "A driver's link", customer: "A customer's tracking link" }

/** Throws unless the actor holds the permission: 403 insufficient_scope for a key, 403 forbidden for anyone else. */
export function requirePermission(actor: Actor, permission: Permission): void {
  if (can(actor, permission)) return
  if (actor.kind === 'system' && actor.via === 'key') {
    throw new AppError('insufficient_scope', `This key does not have the ${permission} scope that this request needs.`, { required_scope: permission, key_scopes: actor.scopes },
      { 'WWW-Authenticate': `Bearer realm="towline", error="insufficient_scope", scope="${permission}"` })
  }
  throw new AppError('forbidden', `${WHO[actor.kind]} may not do this.`, { actor: actor.kind, required_permission: permission })
}

/** The `detail` fields that name who acted (`key_id`, `user_id`, `unit_id`), merged into each event the actor causes. */
export function actorDetail(actor: Actor): Record<string, string> {
  switch (actor.kind) {
    case 'system': return actor.via === 'key' ? { key_id: actor.keyId } : {}
    case 'dispatcher': return { user_id: actor.userId }
    case 'driver': return { unit_id: actor.unitId }
    case 'customer': return {}
  }
}

/** Where consent or a change came from, as the consent record names it (`api:<key id>`, `dispatcher:<user id>`, `cli`...). */
export function actorSource(actor: Actor): string {
  switch (actor.kind) {
    case 'system': return actor.via === 'key' ? `api:${actor.keyId}` : actor.via === 'operator' ? 'cli' : 'system'
    case 'dispatcher': return `dispatcher:${actor.userId}`
    case 'driver': return `driver:${actor.unitId}`
    case 'customer': return 'customer'
  }
}

import { Elysia } from 'elysia'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { AppError } from '../platform/errors'
import { RateLimiter, type Limiter } from '../platform/rate-limit'
import { requestInfo } from '../platform/request-info'
import type { ContextFactory } from '../operations/context-factory'
import type { OperationContext } from '../operations/operation-context'
import { createAuthenticator, type Principal } from './authenticate'
import type { Scope } from './scopes'

/**
 * Returns `authorize(request, route, scope)`: authenticates the bearer key (401), counts the
 * request against the key's per-minute limit (429) and checks the scope (403). It runs once
 * per request, before the body is read or validated, so auth errors always come first.
 */
export function createAuthorizer(deps: { db: Db; clock: Clock; limiter: Limiter }) {
  const authenticate = createAuthenticator(deps.db, () => deps.clock.now())
  return function authorize(request: Request, route: string, scope: Scope): Principal {
    const info = requestInfo(request)
    if (info.principal) return info.principal as Principal
    info.route = route
    const principal = authenticate(request.headers.get('authorization'))
    info.keyId = principal.keyId
    info.accountId = principal.accountId
    const kind = request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write'
    const decision = deps.limiter.take(principal.keyId, kind)
    info.headers = RateLimiter.headers(decision, deps.clock.now())
    if (!decision.allowed) {
      throw new AppError('rate_limited', `Too many ${kind} requests for this key; retry in ${decision.retryAfterS} seconds.`, {
        retry_after_seconds: decision.retryAfterS, limit: decision.limit, kind,
      })
    }
    if (!principal.scopes.includes(scope)) {
      throw new AppError('insufficient_scope', `This key does not have the ${scope} scope that this request needs.`, {
        required_scope: scope, key_scopes: principal.scopes,
      }, { 'WWW-Authenticate': `Bearer realm="towline", error="insufficient_scope", scope="${scope}"` })
    }
    info.principal = principal
    return principal
  }
}

export type Authorizer = ReturnType<typeof createAuthorizer>

/**
 * The `scope` macro: `{ scope: 'jobs:read' }` on a route requires that scope, hands the route
 * its `principal` and the operation context the key acts in (`ctx`), and names the scope in the
 * route's detail (x-required-scope), where the OpenAPI document and the request path's scope
 * check read it.
 */
export function authPlugin(authorize: Authorizer, contexts: ContextFactory) {
  return new Elysia({ name: 'towline.auth' }).macro({
    scope: (scope: Scope) => ({
      detail: { 'x-required-scope': scope } as Record<string, unknown>,
      // No transform of its own: httpPlugin authorizes every route that names a scope (its
      // x-required-scope) before the body is read or an input checked, so auth errors come first.
      resolve({ request, route }): { principal: Principal; ctx: OperationContext } {
        const info = requestInfo(request)
        const principal = (info.principal as Principal | undefined) ?? authorize(request, route, scope)
        return { principal, ctx: contexts.forKey(principal, info.requestId) }
      },
    }),
  })
}

export type AuthPlugin = ReturnType<typeof authPlugin>

import { Elysia } from 'elysia'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { AppError } from '../platform/errors'
import { RateLimiter } from '../platform/rate-limit'
import { requestInfo } from '../platform/request-info'
import { createAuthenticator, type Principal } from './authenticate'
import type { Scope } from './scopes'

/**
 * The `scope` macro: `{ scope: 'jobs:read' }` on a route authenticates the bearer key (401),
 * counts it against the key's per-minute limit (429), checks the scope (403) and hands the
 * route a `principal`. It also documents the route's security in the OpenAPI document.
 */
export function authPlugin(deps: { db: Db; clock: Clock; limiter: RateLimiter }) {
  const authenticate = createAuthenticator(deps.db, () => deps.clock.now())
  return new Elysia({ name: 'towline.auth' }).macro({
    scope: (scope: Scope) => ({
      detail: { security: [{ bearerAuth: [scope] }], 'x-required-scope': scope } as Record<string, unknown>,
      resolve({ request, route, set }): { principal: Principal } {
        const info = requestInfo(request)
        info.route = route
        const principal = authenticate(request.headers.get('authorization'))
        info.keyId = principal.keyId
        info.accountId = principal.accountId
        const kind = request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write'
        const decision = deps.limiter.take(principal.keyId, kind)
        const headers = RateLimiter.headers(decision, deps.clock.now())
        if (!decision.allowed) {
          throw new AppError('rate_limited', `Too many ${kind} requests for this key; retry in ${decision.retryAfterS} seconds.`, {
            retry_after_seconds: decision.retryAfterS, limit: decision.limit, kind,
          }, headers)
        }
        Object.assign(set.headers, headers)
        if (!principal.scopes.includes(scope)) {
          throw new AppError('insufficient_scope', `This key does not have the ${scope} scope that this request needs.`, {
            required_scope: scope, key_scopes: principal.scopes,
          }, { 'WWW-Authenticate': `Bearer realm="towline", error="insufficient_scope", scope="${scope}"` })
        }
        return { principal }
      },
    }),
  })
}

export type AuthPlugin = ReturnType<typeof authPlugin>

import { Elysia } from 'elysia'
import type { AppDeps } from '../app'
import type { AuthPlugin, Authorizer } from './auth.plugin'
import type { Principal } from './authenticate'
import { describeKey } from './describe-key'
import { KeyDescription } from './account.model'
import { preRoutedJson } from '../platform/pre-routed'

/** GET /api/v1/me, and the same answer pre-routed (see `preRoutedMe`). */
export function accountRoutes(auth: AuthPlugin, deps: AppDeps, authorize: Authorizer) {
  const limits = { reads: deps.config.rateLimitReads, writes: deps.config.rateLimitWrites }
  // Described once per resolved principal: a change to the key, its account or its sites makes a new one.
  const described = new WeakMap<Principal, { object: ReturnType<typeof describeKey>; json: string }>()
  const describe = (principal: Principal) => {
    let d = described.get(principal)
    if (!d) {
      const object = describeKey(principal, limits)
      described.set(principal, d = { object, json: JSON.stringify(object) })
    }
    return d
  }
  const answer = preRoutedJson(deps.config.publicUrl)
  /**
   * GET /api/v1/me without a query, answered before Elysia routes it: the call integrators'
   * health checks make most. The same authorization (401, 429, 403 are thrown and answered as
   * on every route), the same body and headers as the route below (a test compares the two
   * byte for byte); what it skips is the router and the hooks, which cost more than the answer.
   */
  const preRouted = (request: Request): Response => {
    const principal = authorize(request, '/api/v1/me', 'jobs:read')
    return answer(request, describe(principal).json)
  }
  const routes = new Elysia({ prefix: '/api/v1' })
    .use(auth)
    .get('/me', ({ principal }) => describe(principal).object, {
      scope: 'jobs:read',
      response: { 200: KeyDescription },
      detail: { operationId: 'getMe', summary: 'Who the key is', description: 'Returns the key, its account, the sites it can see and its scopes.', tags: ['Account'] },
    })
  return { routes, preRouted }
}

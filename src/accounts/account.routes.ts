import { Elysia } from 'elysia'
import type { AppDeps } from '../app'
import type { AuthPlugin } from './auth.plugin'
import type { Principal } from './authenticate'
import { describeKey } from './describe-key'
import { KeyDescription } from './account.model'

/** GET /api/v1/me. */
export function accountRoutes(auth: AuthPlugin, deps: AppDeps) {
  const limits = { reads: deps.config.rateLimitReads, writes: deps.config.rateLimitWrites }
  // Described once per resolved principal: a change to the key, its account or its sites makes a new one.
  const described = new WeakMap<Principal, ReturnType<typeof describeKey>>()
  const describe = (principal: Principal) => {
    let d = described.get(principal)
    if (!d) described.set(principal, d = describeKey(principal, limits))
    return d
  }
  return new Elysia({ prefix: '/api/v1' })
    .use(auth)
    .get('/me', ({ principal }) => describe(principal), {
      scope: 'jobs:read',
      response: { 200: KeyDescription },
      detail: { operationId: 'getMe', summary: 'Who the key is', description: 'Returns the key, its account, the sites it can see and its scopes.', tags: ['Account'] },
    })
}

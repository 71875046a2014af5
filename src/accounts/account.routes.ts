import { Elysia } from 'elysia'
import type { AppDeps } from '../app'
import type { AuthPlugin } from './auth.plugin'
import { describeKey } from './describe-key'
import { KeyDescription } from './account.model'

/** GET /api/v1/me. */
export function accountRoutes(auth: AuthPlugin, deps: AppDeps) {
  const limits = { reads: deps.config.rateLimitReads, writes: deps.config.rateLimitWrites }
  return new Elysia({ prefix: '/api/v1' })
    .use(auth)
    .get('/me', ({ principal }) => describeKey(principal, limits), {
      scope: 'jobs:read',
      response: { 200: KeyDescription },
      detail: { operationId: 'getMe', summary: 'Who the key is', description: 'Returns the key, its account, the sites it can see and its scopes.', tags: ['Account'] },
    })
}

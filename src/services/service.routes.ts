import { Elysia, t } from 'elysia'
import type { AppDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { ListOf, PageQuery } from '../jobs/job.model'
import { oneOf } from '../platform/schema'
import { listServicesPage } from './list-services'

const Service = t.Object({
  object: t.Literal('service'),
  id: t.String(),
  name: t.String(),
  service_type: t.String({ examples: ['flatbed'] }),
  rates: t.Array(t.Object({
    kind: oneOf(['hook', 'per_mile', 'per_hour', 'storage_per_day', 'flat']),
    amount_cents: t.Integer(),
    unit: oneOf(['job', 'mile', 'hour', 'day']),
  })),
})

/** GET /api/v1/services. */
export function serviceRoutes(auth: AuthPlugin, deps: AppDeps) {
  return new Elysia({ prefix: '/api/v1' }).use(auth)
    .get('/services', ({ ctx, query }) => listServicesPage(ctx, query), {
      scope: 'services:read',
      query: PageQuery,
      response: { 200: ListOf(Service) },
      detail: { summary: 'List services and the rate card', tags: ['Services'] },
    })
}

import { Elysia, t } from 'elysia'
import type { AppDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { ListOf, PageQuery } from '../jobs/job.model'
import { named, oneOf, wholeNumber } from '../platform/schema'
import { listServicesPage } from './list-services'

const Rate = named('Rate', t.Object({
  kind: oneOf(['hook', 'per_mile', 'per_hour', 'storage_per_day', 'flat']),
  amount_cents: wholeNumber({ minimum: 0 }),
  unit: oneOf(['job', 'mile', 'hour', 'day']),
}, { description: 'One line of a rate card: amount_cents per unit.' }))
const Service = named('Service', t.Object({
  object: t.Literal('service'),
  id: t.String(),
  name: t.String(),
  service_type: t.String({ examples: ['flatbed'] }),
  rates: t.Array(Rate),
}, { description: 'A service the company offers, with its rate card.' }))

/** GET /api/v1/services. */
export function serviceRoutes(auth: AuthPlugin, deps: AppDeps) {
  return new Elysia({ prefix: '/api/v1' }).use(auth)
    .get('/services', ({ ctx, query }) => listServicesPage(ctx, query), {
      scope: 'services:read',
      query: PageQuery,
      response: { 200: ListOf(Service) },
      detail: { operationId: 'listServices', summary: 'List services and the rate card', description: 'The services the company offers, by name (withdrawn ones left out), each with its rate card; cursor-paged.', tags: ['Services'] },
    })
}

import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { dashboardPage } from '../dashboard/shell'
import type { SessionPlugin } from '../users/session.plugin'
import { readGoaEvidence } from './goa-evidence'
import { goaPackBody } from './goa.page'

/**
 * `/jobs/{id}/goa`: the GOA evidence pack of a job that ended GOA, for a session of the job's
 * account. Another account's job answers 404 as an unknown id does; a job that did not end GOA
 * answers 404 saying so.
 */
export function goaRoutes(session: SessionPlugin, deps: RouteDeps) {
  return new Elysia({ name: 'towline.goa' }).use(session)
    .get('/jobs/:id/goa', ({ ctx, user, params }) => {
      const evidence = readGoaEvidence(ctx, params.id)
      const preparedAt = new Date(deps.clock.now()).toISOString()
      return dashboardPage({ title: `GOA evidence · ${evidence.job.customer.name}`, user, active: 'jobs', body: goaPackBody(evidence, preparedAt).text })
    }, { signedIn: 'dispatcher' })
}

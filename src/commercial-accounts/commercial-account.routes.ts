import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { ListOf, PageQuery } from '../jobs/job.model'
import type { SessionPlugin } from '../users/session.plugin'
import { CommercialAccount, CommercialAccountIdParams } from './commercial-account.model'
import { directoryRoutes } from './directory.routes'
import { getCommercialAccount } from './get-commercial-account'
import { listCommercialAccounts } from './list-commercial-accounts'

const PRIVATE = 'Rates, billing addresses and internal notes are kept in the dashboard only and are never in any API response.'

/** GET /api/v1/accounts and /accounts/{id}: the commercial accounts directory, read-only (it is edited in the dashboard). */
export function commercialAccountApiRoutes(auth: AuthPlugin) {
  return new Elysia({ prefix: '/api/v1' })
    .use(auth)
    .get('/accounts', ({ ctx, query }) => listCommercialAccounts(ctx, query), {
      scope: 'accounts:read',
      query: PageQuery,
      response: { 200: ListOf(CommercialAccount) },
      detail: {
        operationId: 'listCommercialAccounts', summary: 'List commercial accounts',
        description: `The commercial accounts directory (motor clubs, police agencies, fleets, body shops...): names, kinds and contacts. Newest first (created time, then id), cursor-paged like GET /jobs. The directory belongs to the whole account: a key limited to some sites reads all of it. ${PRIVATE}`,
        tags: ['Commercial accounts'],
      },
    })
    .get('/accounts/:id', ({ ctx, params }) => getCommercialAccount(ctx, params.id), {
      scope: 'accounts:read',
      params: CommercialAccountIdParams,
      response: { 200: CommercialAccount },
      detail: {
        operationId: 'getCommercialAccount', summary: 'Get a commercial account',
        description: `One entry of the commercial accounts directory, with its contacts. Jobs name it in commercial_account. ${PRIVATE}`,
        tags: ['Commercial accounts'],
      },
    })
}

/** The commercial accounts directory's routes: the API's reads and the dashboard's /accounts pages. */
export function commercialAccountRoutes(auth: AuthPlugin, session: SessionPlugin, deps: RouteDeps) {
  return new Elysia({ name: 'towline.commercial-accounts' }).use(commercialAccountApiRoutes(auth)).use(directoryRoutes(session, deps))
}

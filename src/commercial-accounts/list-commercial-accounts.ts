import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { decodeCursor, page, pageLimit } from '../platform/paging'
import { listCommercialAccountRows } from './commercial-account.queries'
import { commercialAccountView } from './commercial-account.view'

/**
 * GET /accounts: the directory, newest first by (created_at, id), cursor-paged like GET /jobs.
 * The directory belongs to the whole account: a key limited to some sites reads all of it.
 */
export function listCommercialAccounts(ctx: OperationContext, query: { limit?: string; cursor?: string }) {
  requirePermission(ctx.actor, 'accounts:read')
  const limit = pageLimit(query.limit)
  const after = query.cursor ? decodeCursor<[number, string]>(query.cursor, ['number', 'string'], { idPrefix: 'cac' }) : undefined
  return page(listCommercialAccountRows(ctx.db, ctx.scope.accountId, after, limit + 1), limit, commercialAccountView, (r) => [r.createdAt, r.id])
}

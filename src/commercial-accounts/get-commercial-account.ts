import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { notFound } from '../platform/errors'
import { findCommercialAccountRow } from './commercial-account.queries'
import { commercialAccountView } from './commercial-account.view'

/** GET /accounts/{id}: one commercial account of the caller's account; another account's id answers 404 as an unknown one. */
export function getCommercialAccount(ctx: OperationContext, id: string) {
  requirePermission(ctx.actor, 'accounts:read')
  const row = findCommercialAccountRow(ctx.db, ctx.scope.accountId, id)
  if (!row) throw notFound('commercial account', id)
  return commercialAccountView(row)
}

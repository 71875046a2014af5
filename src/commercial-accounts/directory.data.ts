import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { notFound } from '../platform/errors'
import type { CommercialAccountRef } from './commercial-account.model'
import { findCommercialAccountRow, listCommercialAccountRowsByName, type CommercialAccountRow } from './commercial-account.queries'

/** The most entries the dashboard lists (and offers in a select); a towing company works with dozens. */
export const DIRECTORY_PAGE = 500

/** The directory as the dashboard lists it: by name, private fields included (a signed-in user of the account). */
export function readDirectory(ctx: OperationContext): CommercialAccountRow[] {
  requirePermission(ctx.actor, 'commercial_accounts:manage')
  return listCommercialAccountRowsByName(ctx.db, ctx.scope.accountId, DIRECTORY_PAGE)
}

/** One commercial account with its private fields, for the dashboard's edit page; 404 for another account's id. */
export function readCommercialAccountForEdit(ctx: OperationContext, id: string): CommercialAccountRow {
  requirePermission(ctx.actor, 'commercial_accounts:manage')
  const row = findCommercialAccountRow(ctx.db, ctx.scope.accountId, id)
  if (!row) throw notFound('commercial account', id)
  return row
}

/** The choices of a job form's **Commercial account** select: id and name, by name. */
export function listCommercialAccountChoices(ctx: OperationContext): CommercialAccountRef[] {
  requirePermission(ctx.actor, 'accounts:read')
  return listCommercialAccountRowsByName(ctx.db, ctx.scope.accountId, DIRECTORY_PAGE).map((r) => ({ id: r.id, name: r.name }))
}

import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import type { OperationContext } from '../operations/operation-context'
import { AppError, notFound } from '../platform/errors'
import type { CommercialAccountInput } from './commercial-account.model'
import { takenName } from './commercial-account-name'
import { commercialAccountVersion, findCommercialAccountRow, type CommercialAccountRow } from './commercial-account.queries'
import { readCommercialAccountInput } from './read-commercial-account-input'

/**
 * Saves every field of a commercial account (the dashboard's edit form sends them all); 404 for an
 * id of another account, 409 conflict when the new name is another's. With `expectedVersion` (the
 * commercialAccountVersion the form was opened on) the save is refused, 409 conflict with
 * `details.changed_since_opened`, when someone saved the entry since: nothing is overwritten
 * silently. Jobs show the new name at once.
 */
export function updateCommercialAccount(ctx: OperationContext, id: string, input: CommercialAccountInput, expectedVersion?: string): CommercialAccountRow {
  requirePermission(ctx.actor, 'commercial_accounts:manage')
  if (!findCommercialAccountRow(ctx.db, ctx.scope.accountId, id)) throw notFound('commercial account', id)
  const v = readCommercialAccountInput(ctx, input)
  const now = ctx.clock.now()
  return inTransaction(ctx.db, (tx) => {
    const before = findCommercialAccountRow(tx, ctx.scope.accountId, id)
    if (!before) throw notFound('commercial account', id)
    const after: CommercialAccountRow = { ...before, ...v }
    const saved = commercialAccountVersion(before)
    // A save that changes nothing (the same form sent twice) writes nothing and is never stale.
    if (commercialAccountVersion(after) === saved) return before
    if (expectedVersion !== undefined && saved !== expectedVersion) {
      throw new AppError('conflict', 'Someone else saved this account after this page was opened; nothing was saved.', { changed_since_opened: true })
    }
    takenName(tx, ctx.scope.accountId, v.name, id)
    // updated_at never goes back, even when the clock does.
    const updatedAt = Math.max(now, before.updatedAt)
    tx.$client.query(`UPDATE commercial_accounts SET name = ?, kind = ?, contacts = ?, rates = ?, billing_address = ?, internal_notes = ?, updated_at = ?
      WHERE id = ? AND account_id = ?`).run(v.name, v.kind, JSON.stringify(v.contacts), v.rates, v.billingAddress, v.internalNotes, updatedAt, id, ctx.scope.accountId)
    return { ...after, updatedAt }
  })
}

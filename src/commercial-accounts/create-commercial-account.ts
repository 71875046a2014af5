import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import type { OperationContext } from '../operations/operation-context'
import { newId } from '../platform/ids'
import type { CommercialAccountInput } from './commercial-account.model'
import { takenName } from './commercial-account-name'
import type { CommercialAccountRow } from './commercial-account.queries'
import { readCommercialAccountInput } from './read-commercial-account-input'

/** Adds a commercial account to the directory (dashboard users, the console, the demo); 409 conflict when the name is taken. */
export function createCommercialAccount(ctx: OperationContext, input: CommercialAccountInput): CommercialAccountRow {
  requirePermission(ctx.actor, 'commercial_accounts:manage')
  const v = readCommercialAccountInput(ctx, input)
  const now = ctx.clock.now()
  const row: CommercialAccountRow = { id: newId('cac', now), accountId: ctx.scope.accountId, ...v, createdAt: now, updatedAt: now }
  return inTransaction(ctx.db, (tx) => {
    takenName(tx, ctx.scope.accountId, v.name, null)
    tx.$client.query(`INSERT INTO commercial_accounts (id, account_id, name, kind, contacts, rates, billing_address, internal_notes, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(row.id, row.accountId, row.name, row.kind, JSON.stringify(row.contacts), row.rates, row.billingAddress, row.internalNotes, now, now)
    return row
  })
}

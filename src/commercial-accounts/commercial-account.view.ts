import { iso } from '../platform/clock'
import { contactView, type CommercialAccount, type CommercialAccountKind } from './commercial-account.model'
import type { CommercialAccountRow } from './commercial-account.queries'

/**
 * A commercial account as the API returns it. Fields are picked one by one: rates, billing
 * address and internal notes are never copied into it, nor any key a contact might hold beyond
 * its four.
 */
export function commercialAccountView(row: CommercialAccountRow): CommercialAccount {
  return {
    object: 'commercial_account',
    id: row.id,
    name: row.name,
    kind: row.kind as CommercialAccountKind,
    contacts: row.contacts.map(contactView),
    created_at: iso(row.createdAt)!,
    updated_at: iso(row.updatedAt)!,
  }
}

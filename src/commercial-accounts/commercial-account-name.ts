import type { Db } from '../db/client'
import { AppError } from '../platform/errors'
import { findCommercialAccountRefByName } from './commercial-account.queries'

/** Throws 409 conflict when another commercial account of the tenant account has this name (case aside). */
export function takenName(db: Db, accountId: string, name: string, self: string | null): void {
  const other = findCommercialAccountRefByName(db, accountId, name)
  if (other && other.id !== self) {
    throw new AppError('conflict', `Another commercial account (${other.id}) is already named "${other.name}".`, {
      existing_commercial_account_id: other.id, name: other.name, fields: [{ path: 'name', message: `is already the name of another commercial account ("${other.name}")` }],
    })
  }
}

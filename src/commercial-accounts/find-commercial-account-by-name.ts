import type { Db } from '../db/client'
import { findCommercialAccountRefByName } from './commercial-account.queries'

/**
 * The commercial account a name stands for within one tenant account, compared without case
 * (as the directory's unique index compares names), or undefined: what the CSV import's
 * `commercial_account` column is read with.
 */
export function findCommercialAccountByName(db: Db, accountId: string, name: string): { id: string; name: string } | undefined {
  return findCommercialAccountRefByName(db, accountId, name)
}

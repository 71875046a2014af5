import { eq } from 'drizzle-orm'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { apiKeys } from './account.table'
import { findKey, type ApiKeyRow } from './account.queries'
import { keysChanged } from './authenticate'

/** Revokes a key by id or prefix; the next request with it gets 401. Returns the key, or undefined if unknown. */
export function revokeKey(db: Db, clock: Clock, idOrPrefix: string): { key: ApiKeyRow; alreadyRevoked: boolean } | undefined {
  const key = findKey(db, idOrPrefix)
  if (!key) return undefined
  if (key.revokedAt !== null) return { key, alreadyRevoked: true }
  const now = clock.now()
  db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, key.id)).run()
  keysChanged()
  return { key: { ...key, revokedAt: now }, alreadyRevoked: false }
}

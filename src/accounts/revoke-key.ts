import { eq } from 'drizzle-orm'
import { notFound } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { requirePermission } from './actor'
import { apiKeys } from './account.table'
import { findKey, type ApiKeyRow } from './account.queries'
import { keysChanged } from './authenticate'

/**
 * Revokes a key of the context's account by id or prefix (permission `keys:manage`); the next
 * request with it gets 401. Another account's key answers 404, as an unknown one does.
 */
export function revokeKey(ctx: OperationContext, idOrPrefix: string): { key: ApiKeyRow; alreadyRevoked: boolean } {
  requirePermission(ctx.actor, 'keys:manage')
  const key = findKey(ctx.db, idOrPrefix, ctx.account.id)
  if (!key) throw notFound('key', idOrPrefix)
  if (key.revokedAt !== null) return { key, alreadyRevoked: true }
  const now = ctx.clock.now()
  ctx.db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, key.id)).run()
  keysChanged()
  return { key: { ...key, revokedAt: now }, alreadyRevoked: false }
}

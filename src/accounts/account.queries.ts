import { and, asc, eq, inArray, isNull } from 'drizzle-orm'
import type { Db } from '../db/client'
import { accounts, apiKeys, sites } from './account.table'

export type AccountRow = typeof accounts.$inferSelect
export type SiteRow = typeof sites.$inferSelect
export type ApiKeyRow = typeof apiKeys.$inferSelect

/** Finds the account that `serve` created on first start, if any. */
export function findDefaultAccount(db: Db): AccountRow | undefined {
  return db.select().from(accounts).where(eq(accounts.isDefault, true)).get()
}

/** Finds an account by id. */
export function findAccountById(db: Db, id: string): AccountRow | undefined {
  return db.select().from(accounts).where(eq(accounts.id, id)).get()
}

/** Lists every account, oldest first. */
export function listAccounts(db: Db): AccountRow[] {
  return db.select().from(accounts).orderBy(asc(accounts.createdAt), asc(accounts.id)).all()
}

/** Lists an account's sites, oldest first; limited to `ids` when given. */
export function listSites(db: Db, accountId: string, ids?: string[] | null): SiteRow[] {
  const where = ids ? and(eq(sites.accountId, accountId), inArray(sites.id, ids)) : eq(sites.accountId, accountId)
  return db.select().from(sites).where(where).orderBy(asc(sites.createdAt), asc(sites.id)).all()
}

/** Lists an account's keys, newest first, revoked ones included. */
export function listKeys(db: Db, accountId?: string): ApiKeyRow[] {
  const q = db.select().from(apiKeys)
  return (accountId ? q.where(eq(apiKeys.accountId, accountId)) : q).orderBy(asc(apiKeys.createdAt)).all()
}

/** Finds a key by id, or by its display prefix (an unrevoked key's); within one account when `accountId` is given. */
export function findKey(db: Db, idOrPrefix: string, accountId?: string): ApiKeyRow | undefined {
  const ofAccount = accountId === undefined ? undefined : eq(apiKeys.accountId, accountId)
  return (
    db.select().from(apiKeys).where(and(eq(apiKeys.id, idOrPrefix), ofAccount)).get() ??
    db.select().from(apiKeys).where(and(eq(apiKeys.prefix, idOrPrefix), isNull(apiKeys.revokedAt), ofAccount)).get()
  )
}

import { and, asc, eq, isNull } from 'drizzle-orm'
import type { Db } from '../db/client'
import { accounts } from '../accounts/account.table'
import { users } from './user.table'

export type UserRow = typeof users.$inferSelect
export type Role = UserRow['role']
export const ROLES: readonly Role[] = ['owner', 'dispatcher']

/** An email as logins are kept: trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

/** What is wrong with an email typed for a new login, or null. */
export function emailProblem(email: string): string | null {
  if (!email) return 'is required'
  if (email.length > 254 || !/^[^\s@<>"]+@[^\s@<>".]+(\.[^\s@<>".]+)+$/.test(email)) return 'must be an email address such as dispatch@example.com'
  return null
}

/** The login with this email (any account, disabled or not). */
export function findUserByEmail(db: Db, email: string): UserRow | undefined {
  return db.select().from(users).where(eq(users.email, normalizeEmail(email))).get()
}

/** A user of an account by id. */
export function findUserById(db: Db, accountId: string, id: string): UserRow | undefined {
  return db.select().from(users).where(and(eq(users.id, id), eq(users.accountId, accountId))).get()
}

/** An account's logins (every account's when none is given), oldest first, with the account name. */
export function listUsers(db: Db, accountId?: string): (UserRow & { accountName: string })[] {
  const q = db.select({ user: users, accountName: accounts.name }).from(users).innerJoin(accounts, eq(accounts.id, users.accountId))
  return (accountId ? q.where(eq(users.accountId, accountId)) : q).orderBy(asc(users.createdAt), asc(users.id)).all().map((r) => ({ ...r.user, accountName: r.accountName }))
}

/** Whether an account has any login that can sign in. */
export function hasActiveUser(db: Db, accountId?: string): boolean {
  const q = db.select({ id: users.id }).from(users)
  return (accountId ? q.where(and(eq(users.accountId, accountId), isNull(users.disabledAt))) : q.where(isNull(users.disabledAt))).limit(1).get() !== undefined
}

import { and, eq, isNull, ne } from 'drizzle-orm'
import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { AppError, InputError } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { users } from './user.table'
import { findUserByEmail, findUserById, listUsers, type UserRow } from './user.queries'
import { generatePassword, hashPassword, passwordProblem } from './password'
import { endSessionsOf } from './sessions'

/** A login named by its email (the console) or its id (the dashboard). */
export type LoginRef = string | { id: string }

/** The account's login so named, else 404 (another account's login is not found either). */
function userOf(ctx: OperationContext, who: LoginRef): UserRow {
  const user = typeof who === 'string' ? findUserByEmail(ctx.db, who) : findUserById(ctx.db, ctx.account.id, who.id)
  const name = typeof who === 'string' ? who : who.id
  if (!user || user.accountId !== ctx.account.id) throw new AppError('not_found', `No login ${name} on this account.`, typeof who === 'string' ? { email: who } : { id: who.id })
  return user
}

/** Lists the context's account's logins, oldest first. */
export function listLogins(ctx: OperationContext): UserRow[] {
  requirePermission(ctx.actor, 'users:manage')
  return listUsers(ctx.db, ctx.account.id)
}

/** Sets a new password (generated when none is given) and ends the user's sessions. */
export async function setUserPassword(ctx: OperationContext, who: LoginRef, password?: string): Promise<{ user: UserRow; password: string; generated: boolean; sessionsEnded: number }> {
  requirePermission(ctx.actor, 'users:manage')
  const user = userOf(ctx, who)
  const generated = password === undefined || password === ''
  const next = generated ? generatePassword() : password!
  const problem = generated ? null : passwordProblem(next)
  if (problem) throw new InputError(problem, 'password')
  const passwordHash = await hashPassword(next)
  const sessionsEnded = inTransaction(ctx.db, (tx) => {
    tx.update(users).set({ passwordHash, updatedAt: ctx.clock.now() }).where(eq(users.id, user.id)).run()
    return endSessionsOf(tx, ctx.clock, user.id)
  })
  return { user, password: next, generated, sessionsEnded }
}

/**
 * Disables a login (its sessions end; it can no longer sign in) or enables it again. Refused
 * (422): a dashboard user disabling their own login, and anyone disabling the account's last
 * active owner (no one could then manage its users, keys or settings).
 */
export function setUserDisabled(ctx: OperationContext, who: LoginRef, disabled: boolean): { user: UserRow; sessionsEnded: number } {
  requirePermission(ctx.actor, 'users:manage')
  const user = userOf(ctx, who)
  if (disabled && ctx.actor.kind === 'dispatcher' && ctx.actor.userId === user.id) throw new InputError('you cannot disable your own login', 'email')
  return inTransaction(ctx.db, (tx) => {
    const now = ctx.clock.now()
    if (disabled && user.role === 'owner' && user.disabledAt === null) {
      // Counted in the transaction that disables, so two owners cannot disable each other at once.
      const otherOwner = tx.select({ id: users.id }).from(users)
        .where(and(eq(users.accountId, ctx.account.id), eq(users.role, 'owner'), isNull(users.disabledAt), ne(users.id, user.id))).limit(1).get()
      if (!otherOwner) throw new InputError(`${user.email} is the account's last active owner; make or enable another owner first`, 'email')
    }
    tx.update(users).set({ disabledAt: disabled ? (user.disabledAt ?? now) : null, updatedAt: now }).where(and(eq(users.id, user.id), eq(users.accountId, ctx.account.id))).run()
    const sessionsEnded = disabled ? endSessionsOf(tx, ctx.clock, user.id) : 0
    return { user: { ...user, disabledAt: disabled ? (user.disabledAt ?? now) : null }, sessionsEnded }
  })
}

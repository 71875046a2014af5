import { and, eq } from 'drizzle-orm'
import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { AppError, InputError } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { users } from './user.table'
import { findUserByEmail, type UserRow } from './user.queries'
import { generatePassword, hashPassword, passwordProblem } from './password'
import { endSessionsOf } from './sessions'

/** The account's login with this email, else 404 (another account's login is not found either). */
function userOf(ctx: OperationContext, email: string): UserRow {
  const user = findUserByEmail(ctx.db, email)
  if (!user || user.accountId !== ctx.account.id) throw new AppError('not_found', `No login ${email} on this account.`, { email })
  return user
}

/** Sets a new password (generated when none is given) and ends the user's sessions. */
export async function setUserPassword(ctx: OperationContext, email: string, password?: string): Promise<{ user: UserRow; password: string; generated: boolean; sessionsEnded: number }> {
  requirePermission(ctx.actor, 'users:manage')
  const user = userOf(ctx, email)
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

/** Disables a login (its sessions end; it can no longer sign in) or enables it again. */
export function setUserDisabled(ctx: OperationContext, email: string, disabled: boolean): { user: UserRow; sessionsEnded: number } {
  requirePermission(ctx.actor, 'users:manage')
  const user = userOf(ctx, email)
  if (disabled && ctx.actor.kind === 'dispatcher' && ctx.actor.userId === user.id) throw new InputError('you cannot disable your own login', 'email')
  return inTransaction(ctx.db, (tx) => {
    const now = ctx.clock.now()
    tx.update(users).set({ disabledAt: disabled ? (user.disabledAt ?? now) : null, updatedAt: now }).where(and(eq(users.id, user.id), eq(users.accountId, ctx.account.id))).run()
    const sessionsEnded = disabled ? endSessionsOf(tx, ctx.clock, user.id) : 0
    return { user: { ...user, disabledAt: disabled ? (user.disabledAt ?? now) : null }, sessionsEnded }
  })
}

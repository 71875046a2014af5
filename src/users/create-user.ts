import { requirePermission } from '../accounts/actor'
import { InputError, validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import type { OperationContext } from '../operations/operation-context'
import { users } from './user.table'
import { emailProblem, findUserByEmail, normalizeEmail, ROLES, type Role, type UserRow } from './user.queries'
import { generatePassword, hashPassword, passwordProblem } from './password'

/**
 * Creates a dashboard login on the context's account. Without a password one is generated and
 * returned (shown once by the caller); only its argon2id hash is kept.
 */
export async function createUser(ctx: OperationContext, input: { email: string; role: string; password?: string }): Promise<{ user: UserRow; password: string; generated: boolean }> {
  requirePermission(ctx.actor, 'users:manage')
  const email = normalizeEmail(input.email)
  const problems: { path: string; message: string }[] = []
  const badEmail = emailProblem(email)
  if (badEmail) problems.push({ path: 'email', message: badEmail })
  else if (findUserByEmail(ctx.db, email)) problems.push({ path: 'email', message: 'is already a login' })
  if (!ROLES.includes(input.role as Role)) problems.push({ path: 'role', message: `must be ${ROLES.join(' or ')}` })
  const generated = input.password === undefined || input.password === ''
  const password = generated ? generatePassword() : input.password!
  const badPassword = generated ? null : passwordProblem(password)
  if (badPassword) problems.push({ path: 'password', message: badPassword })
  if (problems.length) throw validationFailed(problems)
  const passwordHash = await hashPassword(password)
  const now = ctx.clock.now()
  const user: UserRow = { id: newId('usr', now), accountId: ctx.account.id, email, role: input.role as Role, passwordHash, createdAt: now, updatedAt: now, lastLoginAt: null, disabledAt: null }
  // The email was free a moment ago; the unique index decides a race with another process.
  try { ctx.db.insert(users).values(user).run() } catch (err) {
    if (String((err as Error).message).includes('UNIQUE')) throw new InputError('is already a login', 'email')
    throw err
  }
  return { user, password, generated }
}

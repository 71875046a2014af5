import { and, asc, eq, gt, lt } from 'drizzle-orm'
import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import type { Clock } from '../platform/clock'
import { loginFailures, users } from './user.table'
import { findUserByEmail, normalizeEmail, type UserRow } from './user.queries'
import { verifyPassword } from './password'
import { startSession } from './sessions'

/** Failed sign-ins for one email within LOCK_WINDOW_MS that lock it... */
export const LOCK_AFTER_FAILURES = 10
export const LOCK_WINDOW_MS = 15 * 60_000
/** ...for this long after the failure that reached the count. */
export const LOCK_FOR_MS = 15 * 60_000

export type SignInResult =
  | { ok: true; user: UserRow; token: string; expiresAt: number }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterMs: number }

/**
 * Until when an email is locked, or null: the lock starts at any failure that is the tenth
 * within 15 minutes and lasts 15 minutes. Failures are counted by the email typed, known or
 * not, so a lock says nothing about whether a login exists.
 */
export function lockedUntil(db: Db, email: string, now: number): number | null {
  const times = db.select({ at: loginFailures.at }).from(loginFailures)
    .where(and(eq(loginFailures.email, email), gt(loginFailures.at, now - LOCK_WINDOW_MS - LOCK_FOR_MS)))
    .orderBy(asc(loginFailures.at)).all().map((r) => r.at)
  let until: number | null = null
  for (let i = LOCK_AFTER_FAILURES - 1; i < times.length; i++) {
    if (times[i]! - times[i - LOCK_AFTER_FAILURES + 1]! < LOCK_WINDOW_MS) until = Math.max(until ?? 0, times[i]! + LOCK_FOR_MS)
  }
  return until !== null && until > now ? until : null
}

/**
 * Checks an email and password and starts a session. A wrong password, an unknown email and a
 * disabled login get the same answer after the same work; a locked email is refused even with
 * the right password, without checking it.
 */
export async function signIn(db: Db, clock: Clock, emailTyped: string, password: string): Promise<SignInResult> {
  const email = normalizeEmail(emailTyped).slice(0, 320)
  // Counted as a failure from the moment it arrives, in the same transaction as the lock check:
  // attempts sent at once, waiting their turn for argon2, see each other, so a burst gets no more
  // than LOCK_AFTER_FAILURES checks. A success takes the count back to nothing.
  const arrived = clock.now()
  const locked = inTransaction(db, (tx) => {
    const until = lockedUntil(tx, email, arrived)
    if (until !== null) return until
    // The id is left to the database (its next rowid, or PostgreSQL's identity).
    tx.$client.query('INSERT INTO login_failures (email, at) VALUES (?, ?)').run(email, arrived)
    // Failures older than any lock they could still be part of are of no use.
    tx.delete(loginFailures).where(lt(loginFailures.at, arrived - LOCK_WINDOW_MS - LOCK_FOR_MS)).run()
    return null
  })
  if (locked !== null) return { ok: false, reason: 'locked', retryAfterMs: locked - arrived }
  const user = findUserByEmail(db, email)
  const matches = await verifyPassword(password, user?.passwordHash ?? null)
  if (!user || !matches || user.disabledAt !== null) return { ok: false, reason: 'invalid' }
  const now = clock.now()
  return inTransaction(db, (tx) => {
    tx.delete(loginFailures).where(eq(loginFailures.email, email)).run()
    tx.update(users).set({ lastLoginAt: now }).where(eq(users.id, user.id)).run()
    const { token, expiresAt } = startSession(tx, clock, user.id)
    return { ok: true as const, user, token, expiresAt }
  })
}

import { and, eq, isNull } from 'drizzle-orm'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { newId, randomBase62 } from '../platform/ids'
import { hashToken } from '../platform/sealed'
import { accounts } from '../accounts/account.table'
import { sessions, users } from './user.table'
import type { Role } from './user.queries'

/** A session ends after this long without a request... */
export const SESSION_IDLE_MS = 12 * 3600_000
/** ...and this long after sign-in, however active. */
export const SESSION_MAX_MS = 7 * 24 * 3600_000
// last_seen_at is written at most once a minute per session, not on every request.
const TOUCH_EVERY_MS = 60_000

/** Who a live session belongs to. */
export interface SessionUser {
  sessionId: string
  userId: string
  email: string
  role: Role
  accountId: string
  accountName: string
  /** When the session ends if nothing else ends it first (idle or absolute limit). */
  expiresAt: number
}

/** Starts a session for a user; returns the cookie's token (only its hash is stored). */
export function startSession(db: Db, clock: Clock, userId: string): { token: string; expiresAt: number } {
  const token = randomBase62(32)
  const now = clock.now()
  const expiresAt = now + SESSION_MAX_MS
  db.insert(sessions).values({ id: newId('ses', now), tokenHash: hashToken(token), userId, createdAt: now, lastSeenAt: now, expiresAt }).run()
  return { token, expiresAt }
}

/** The user of a live session, or null (unknown, ended, idle too long, past its limit, user disabled). */
export function resolveSession(db: Db, clock: Clock, token: string): SessionUser | null {
  if (!/^[0-9A-Za-z]{32}$/.test(token)) return null
  const row = db.select({ s: sessions, u: users, accountName: accounts.name }).from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId)).innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(eq(sessions.tokenHash, hashToken(token))).get()
  if (!row) return null
  const now = clock.now()
  const { s, u } = row
  if (s.endedAt !== null || u.disabledAt !== null || now >= s.expiresAt || now - s.lastSeenAt >= SESSION_IDLE_MS) return null
  if (now - s.lastSeenAt >= TOUCH_EVERY_MS) db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, s.id)).run()
  return {
    sessionId: s.id, userId: u.id, email: u.email, role: u.role, accountId: u.accountId, accountName: row.accountName,
    expiresAt: Math.min(s.expiresAt, Math.max(now, s.lastSeenAt) + SESSION_IDLE_MS),
  }
}

/** Ends one session (sign-out). */
export function endSession(db: Db, clock: Clock, sessionId: string): void {
  db.update(sessions).set({ endedAt: clock.now() }).where(and(eq(sessions.id, sessionId), isNull(sessions.endedAt))).run()
}

/** Ends every session of a user (new password, disabled); returns how many were live. */
export function endSessionsOf(db: Db, clock: Clock, userId: string): number {
  return db.$client.query('UPDATE sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL').run(clock.now(), userId).changes
}

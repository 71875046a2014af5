import { and, eq, isNull } from 'drizzle-orm'
import { writeIfFree, type Db } from '../db/client'
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
  // Never waits for another connection's write (an import): a later request writes it.
  if (now - s.lastSeenAt >= TOUCH_EVERY_MS) writeIfFree(db, () => { db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, s.id)).run() })
  return {
    sessionId: s.id, userId: u.id, email: u.email, role: u.role, accountId: u.accountId, accountName: row.accountName,
    expiresAt: Math.min(s.expiresAt, Math.max(now, s.lastSeenAt) + SESSION_IDLE_MS),
  }
}

/**
 * Tells whether a session can still be used, without counting this as its use (a live stream
 * asks it again and again): not ended, its user not disabled, within its limits.
 */
export function sessionIsLive(db: Db, clock: Clock, sessionId: string): boolean {
  const row = db.$client.query<{ ended_at: number | null; expires_at: number; last_seen_at: number; disabled_at: number | null }, [string]>(
    'SELECT s.ended_at, s.expires_at, s.last_seen_at, u.disabled_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?',
  ).get(sessionId)
  const now = clock.now()
  return !!row && row.ended_at === null && row.disabled_at === null && now < row.expires_at && now - row.last_seen_at < SESSION_IDLE_MS
}

const endedListeners = new Set<() => void>()

/**
 * Lets live streams hear that sessions ended in this process (sign-out, a new password, a
 * disabled login), once the change has committed; returns the function that stops listening.
 * Sessions ended by another process are for the listener to notice on its own rounds.
 */
export function onSessionsEnded(listener: () => void): () => void {
  endedListeners.add(listener)
  return () => { endedListeners.delete(listener) }
}

/** Calls the listeners after the caller's (synchronous) transaction has committed. */
function announceEnded(): void {
  if (endedListeners.size) queueMicrotask(() => { for (const listener of endedListeners) listener() })
}

/** Ends one session (sign-out). */
export function endSession(db: Db, clock: Clock, sessionId: string): void {
  db.update(sessions).set({ endedAt: clock.now() }).where(and(eq(sessions.id, sessionId), isNull(sessions.endedAt))).run()
  announceEnded()
}

/** Ends every session of a user (new password, disabled); returns how many were live. */
export function endSessionsOf(db: Db, clock: Clock, userId: string): number {
  const ended = db.$client.query('UPDATE sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL').run(clock.now(), userId).changes
  if (ended) announceEnded()
  return ended
}

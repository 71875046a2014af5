import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { accounts } from '../accounts/account.table'

/** A dashboard login of one account: an owner (everything) or a dispatcher (jobs, board, units). */
export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  /** Lower-cased; one login per email across the installation. */
  email: text('email').notNull(),
  role: text('role', { enum: ['owner', 'dispatcher'] }).notNull(),
  /** argon2id (PHC string, Bun.password). */
  passwordHash: text('password_hash').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
  lastLoginAt: integer('last_login_at'),
  disabledAt: integer('disabled_at'),
}, (t) => [uniqueIndex('users_email_uq').on(t.email), index('users_account_idx').on(t.accountId)])

/** A signed-in browser: only the SHA-256 of the cookie's token is stored. */
export const sessions = sqliteTable('sessions', {
  id: text('id').primaryKey(),
  tokenHash: text('token_hash').notNull(),
  userId: text('user_id').notNull().references(() => users.id),
  createdAt: integer('created_at').notNull(),
  /** The last request made with it; the session ends after the idle limit without one. */
  lastSeenAt: integer('last_seen_at').notNull(),
  /** Ends here however active it is (created + the absolute limit). */
  expiresAt: integer('expires_at').notNull(),
  /** Set by sign-out, a new password, or disabling the user. */
  endedAt: integer('ended_at'),
}, (t) => [uniqueIndex('sessions_token_uq').on(t.tokenHash), index('sessions_user_idx').on(t.userId)])

/** A failed sign-in, kept for the lock-out window (by the email typed, known or not). */
export const loginFailures = sqliteTable('login_failures', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  email: text('email').notNull(),
  at: integer('at').notNull(),
}, (t) => [index('login_failures_email_at_idx').on(t.email, t.at)])

import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'

/**
 * The text (SMS) outbox: one row per text, written in the same transaction as the change
 * that causes it. The sender reads rows in `queued`; `skipped` rows record why not.
 */
export const texts = sqliteTable('texts', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  jobId: text('job_id'),
  unitId: text('unit_id'),
  /** What caused it: the timeline event id, when there is one. */
  eventId: text('event_id'),
  recipient: text('recipient').notNull(), // customer | driver
  toPhone: text('to_phone'),
  /** The number (or Messaging Service) it was sent from, set when the send begins. */
  fromNumber: text('from_number'),
  template: text('template').notNull(),
  body: text('body').notNull(),
  status: text('status').notNull(), // queued | skipped | sending | sent | delivered | failed
  skipReason: text('skip_reason'),
  providerMessageId: text('provider_message_id'),
  error: text('error'),
  attempts: integer('attempts').notNull().default(0),
  /** The provider that took it (log, twilio). */
  provider: text('provider'),
  /** When the current send began (status sending), to find it at the provider after a crash. */
  sendingAt: integer('sending_at'),
  /** queued: when it is due; sending: when the lease runs out and a pass asks the provider what became of it. */
  nextAttemptAt: integer('next_attempt_at'),
  /** Who holds the lease while sending: `<host>:<pid>`. */
  leaseOwner: text('lease_owner'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [
  // Open texts (queued or sending) are the only ones with a next_attempt_at: partial indexes keep to them.
  index('texts_open_due_idx').on(t.nextAttemptAt).where(sql`next_attempt_at IS NOT NULL`),
  // Texts to one number go out in the order they were written: the oldest open one goes first.
  index('texts_open_phone_idx').on(t.toPhone, t.createdAt, t.id).where(sql`next_attempt_at IS NOT NULL`),
  index('texts_phone_idx').on(t.toPhone, t.createdAt),
  index('texts_job_idx').on(t.jobId, t.createdAt),
  index('texts_provider_id_idx').on(t.providerMessageId),
])

/** Inbound texts already handled, by the provider's message id: a provider's retry is answered again, never applied twice. */
export const inboundTexts = sqliteTable('inbound_texts', {
  messageSid: text('message_sid').primaryKey(),
  accountId: text('account_id'),
  jobId: text('job_id'),
  /** The reply sent back (TwiML body text), if any. */
  reply: text('reply'),
  createdAt: integer('created_at').notNull(),
})

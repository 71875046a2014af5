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
  nextAttemptAt: integer('next_attempt_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('texts_status_next_idx').on(t.status, t.nextAttemptAt), index('texts_job_idx').on(t.jobId, t.createdAt), index('texts_provider_id_idx').on(t.providerMessageId)])

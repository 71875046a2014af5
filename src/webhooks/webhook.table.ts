import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { accounts } from '../accounts/account.table'

/** A webhook endpoint: an https URL, the event types it wants, and its signing secret(s). */
export const webhookEndpoints = sqliteTable('webhook_endpoints', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  url: text('url').notNull(),
  description: text('description'),
  /** JSON array of event types, or ["*"]. */
  events: text('events', { mode: 'json' }).$type<string[]>().notNull(),
  status: text('status').notNull(), // active | paused
  pausedReason: text('paused_reason'), // manual | failures
  secret: text('secret').notNull(),
  /** The secret before the last rotation, still signing until previous_secret_expires_at. */
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: integer('previous_secret_expires_at'),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
  deletedAt: integer('deleted_at'),
}, (t) => [index('webhook_endpoints_account_idx').on(t.accountId, t.deletedAt)])

/**
 * One event to one endpoint: the outbox row, written in the same transaction as the event.
 * Its id is the envelope id on every attempt, so receivers de-duplicate on it.
 */
export const webhookDeliveries = sqliteTable('webhook_deliveries', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  endpointId: text('endpoint_id').notNull(),
  eventId: text('event_id'),
  eventType: text('event_type').notNull(),
  /**
   * The envelope's `data` ({ job, event }) of a delivery that has no event (a ping). A job
   * event's data is stored once, in webhook_event_payloads, however many endpoints get it.
   */
  data: text('data'),
  status: text('status').notNull(), // pending | succeeded | failed | cancelled
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: integer('next_attempt_at'),
  firstAttemptAt: integer('first_attempt_at'),
  lastError: text('last_error'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt), index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.status, t.nextAttemptAt)])

/** The envelope's `data` ({ job, event }) of a job event, as it was when the event happened: written once per event. */
export const webhookEventPayloads = sqliteTable('webhook_event_payloads', {
  eventId: text('event_id').primaryKey(),
  accountId: text('account_id').notNull(),
  data: text('data').notNull(),
  createdAt: integer('created_at').notNull(),
})

/** Every attempt to deliver, as sent and as answered. */
export const webhookAttempts = sqliteTable('webhook_attempts', {
  id: text('id').primaryKey(),
  deliveryId: text('delivery_id').notNull(),
  endpointId: text('endpoint_id').notNull(),
  eventType: text('event_type').notNull(),
  attempt: integer('attempt').notNull(),
  status: text('status').notNull(), // succeeded | failed
  requestHeaders: text('request_headers').notNull(),
  requestBody: text('request_body').notNull(),
  responseStatus: integer('response_status'),
  responseHeaders: text('response_headers'),
  responseBody: text('response_body'),
  durationMs: integer('duration_ms').notNull(),
  /** timeout | connect | dns | tls | http | redirect | blocked, or null on success. */
  error: text('error'),
  errorMessage: text('error_message'),
  nextAttemptAt: integer('next_attempt_at'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('webhook_attempts_endpoint_idx').on(t.endpointId, t.createdAt)])

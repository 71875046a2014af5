import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
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
  /**
   * Secrets rotated out before the previous one and still inside their own 24 hours (a second
   * rotation within a day): JSON array of { secret, expires_at }, newest first, or null.
   */
  olderSecrets: text('older_secrets', { mode: 'json' }).$type<{ secret: string; expires_at: number }[]>(),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  /** JSON array of the site ids whose jobs it receives (those of the key that made it), or null for every site. */
  siteIds: text('site_ids', { mode: 'json' }).$type<string[]>(),
  /**
   * When the scheduler may next have work here: the lease expiry of the delivery in flight, else
   * the due time of the oldest pending one; null when nothing is open. Never later than the truth.
   */
  nextDueAt: integer('next_due_at'),
  /**
   * The last webhook_events.seq this endpoint has taken up: events after it are still to be
   * delivered (held while paused). A new endpoint starts at the newest event.
   */
  cursor: integer('cursor').notNull().default(0),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
  deletedAt: integer('deleted_at'),
}, (t) => [
  index('webhook_endpoints_account_idx').on(t.accountId, t.deletedAt),
  // The scheduler's one query walks only active endpoints that have (or may have) due work.
  index('webhook_endpoints_due_idx').on(t.nextDueAt).where(sql`status = 'active' AND deleted_at IS NULL AND next_due_at IS NOT NULL`),
])

/**
 * The webhook outbox: each job event that some endpoint of its account subscribes to, written
 * once in the event's own transaction, with the envelope's `data` ({ job, event }) as it was
 * then. Endpoints read it in `seq` order after their cursor, so a job write costs one row here
 * however many endpoints there are. Job links in `data` are sealed.
 */
export const webhookEvents = sqliteTable('webhook_events', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  eventId: text('event_id').notNull(),
  accountId: text('account_id').notNull(),
  /** The job's site: endpoints made for some sites take only their jobs. */
  siteId: text('site_id'),
  type: text('type').notNull(),
  data: text('data').notNull(),
  createdAt: integer('created_at').notNull(),
}, (t) => [
  uniqueIndex('webhook_events_event_uq').on(t.eventId),
  index('webhook_events_account_seq_idx').on(t.accountId, t.seq),
  index('webhook_events_created_idx').on(t.createdAt),
])

/**
 * One event to one endpoint, made when the endpoint takes the event up (or a ping). Its id is
 * the envelope id on every attempt, so receivers de-duplicate on it.
 */
export const webhookDeliveries = sqliteTable('webhook_deliveries', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  endpointId: text('endpoint_id').notNull(),
  eventId: text('event_id'),
  eventType: text('event_type').notNull(),
  /** The envelope's `data` of a delivery that has no event (a ping); a job event's is in webhook_events. */
  data: text('data'),
  /** pending | sending (leased: next_attempt_at is the lease expiry) | succeeded | failed | cancelled. */
  status: text('status').notNull(),
  attempts: integer('attempts').notNull().default(0),
  /** pending: when it is due; sending: when the lease runs out and another pass may take it. */
  nextAttemptAt: integer('next_attempt_at'),
  /** Who holds the lease while sending: `<host>:<pid>`, so a restart on the same machine takes back what a dead process held. */
  leaseOwner: text('lease_owner'),
  firstAttemptAt: integer('first_attempt_at'),
  lastError: text('last_error'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [
  // Only open deliveries (pending or sending: the only ones with a next_attempt_at) are indexed by
  // endpoint, so the index stays small and a write touches few pages. SQLite uses a partial index
  // when the query implies its condition, which `next_attempt_at <= ?` does.
  index('webhook_deliveries_open_idx').on(t.endpointId, t.status, t.nextAttemptAt).where(sql`next_attempt_at IS NOT NULL`),
  index('webhook_deliveries_event_idx').on(t.eventId),
  index('webhook_deliveries_created_idx').on(t.createdAt),
])

/**
 * Every attempt to deliver, as sent and as answered. The request body is not stored: it is the
 * delivery's envelope with this attempt's number, rebuilt from the delivery and its event payload.
 */
export const webhookAttempts = sqliteTable('webhook_attempts', {
  id: text('id').primaryKey(),
  deliveryId: text('delivery_id').notNull(),
  endpointId: text('endpoint_id').notNull(),
  eventType: text('event_type').notNull(),
  attempt: integer('attempt').notNull(),
  status: text('status').notNull(), // succeeded | failed
  requestHeaders: text('request_headers').notNull(),
  responseStatus: integer('response_status'),
  responseHeaders: text('response_headers'),
  responseBody: text('response_body'),
  durationMs: integer('duration_ms').notNull(),
  /** timeout | connect | dns | tls | http | redirect | blocked, or null on success. */
  error: text('error'),
  errorMessage: text('error_message'),
  nextAttemptAt: integer('next_attempt_at'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('webhook_attempts_endpoint_idx').on(t.endpointId, t.createdAt), index('webhook_attempts_delivery_idx').on(t.deliveryId)])

import { sqliteTable, text, integer, primaryKey, index } from 'drizzle-orm/sqlite-core'

/** Responses kept per API key and Idempotency-Key, so a retry replays the first answer. */
export const idempotencyKeys = sqliteTable('idempotency_keys', {
  keyId: text('key_id').notNull(),
  idemKey: text('idem_key').notNull(),
  requestHash: text('request_hash').notNull(),
  statusCode: integer('status_code').notNull(),
  responseBody: text('response_body').notNull(),
  createdAt: integer('created_at').notNull(),
}, (t) => [primaryKey({ columns: [t.keyId, t.idemKey] }), index('idempotency_created_idx').on(t.createdAt)])

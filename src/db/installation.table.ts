import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * What belongs to the installation rather than to an account: one row (id 1). `linkKeyCheck`
 * tells which link key (src/db/link-key.ts) this database's job links are sealed with, so that
 * a command run with another key file, or none, is refused before it seals anything with it.
 */
export const installation = sqliteTable('installation', {
  id: integer('id').primaryKey(),
  /** HMAC-SHA256 of a fixed text under the link key (base64url): names the key without revealing it. */
  linkKeyCheck: text('link_key_check').notNull(),
  createdAt: integer('created_at').notNull(),
})

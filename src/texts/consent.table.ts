import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core'

/**
 * Text consent per phone number per account, with where it came from. A number that replied
 * STOP stays opted out until it sends START, whatever a caller later claims.
 */
export const smsConsents = sqliteTable('sms_consents', {
  accountId: text('account_id').notNull(),
  phone: text('phone').notNull(),
  consentedAt: integer('consented_at'),
  consentSource: text('consent_source'),
  optedOutAt: integer('opted_out_at'),
  optOutSource: text('opt_out_source'),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [primaryKey({ columns: [t.accountId, t.phone] })])

/** An account's own wording of a text template (the defaults live in templates.ts). */
export const textTemplates = sqliteTable('text_templates', {
  accountId: text('account_id').notNull(),
  name: text('name').notNull(),
  body: text('body').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [primaryKey({ columns: [t.accountId, t.name] })])

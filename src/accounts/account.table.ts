import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'

/** A towing company using this installation. Everything else belongs to one account. */
export const accounts = sqliteTable('accounts', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  isDefault: integer('is_default', { mode: 'boolean' }).notNull().default(false),
  /** Country phone numbers without a +country prefix are read in (ISO 3166 alpha-2). */
  defaultCountry: text('default_country').notNull().default('US'),
  /** The company's phone, shown to customers (E.164), or null. */
  phone: text('phone'),
  /** The number (E.164) this account's texts are sent from, or null for the installation's TWILIO_FROM. */
  smsFrom: text('sms_from'),
  /** Where the tracking page's **Pay** link sends the customer (https), or null. */
  paymentUrl: text('payment_url'),
  /** The company's time zone (IANA, such as America/Los_Angeles): the days and clock times its pages, invoices and exports use. */
  timeZone: text('time_zone').notNull().default('UTC'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('accounts_sms_from_idx').on(t.smsFrom)])

/** A yard of an account; keys may be limited to some sites. */
export const sites = sqliteTable('sites', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  name: text('name').notNull(),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('sites_account_idx').on(t.accountId)])

/** An API key: only its SHA-256 hash and a short display prefix are stored. */
export const apiKeys = sqliteTable('api_keys', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  name: text('name').notNull(),
  prefix: text('prefix').notNull(),
  hash: text('hash').notNull(),
  /** JSON array of scope names. */
  scopes: text('scopes').notNull(),
  /** JSON array of site ids, or null for every site of the account. */
  siteIds: text('site_ids'),
  createdAt: integer('created_at').notNull(),
  lastUsedAt: integer('last_used_at'),
  revokedAt: integer('revoked_at'),
}, (t) => [uniqueIndex('api_keys_hash_idx').on(t.hash), index('api_keys_account_idx').on(t.accountId)])

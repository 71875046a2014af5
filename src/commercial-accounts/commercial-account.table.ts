import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { accounts } from '../accounts/account.table'

/** One contact of a commercial account, as the directory shows it. */
export interface CommercialAccountContact { name: string; role: string | null; phone: string | null; email: string | null }

/**
 * The commercial accounts directory: the motor clubs, police agencies, fleets, body shops and
 * dealers a towing company works for. Name, kind and contacts are readable with `accounts:read`;
 * rates, billing address and internal notes are private to the dashboard and never leave it.
 */
export const commercialAccounts = sqliteTable('commercial_accounts', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  name: text('name').notNull(),
  /** motor_club, police, fleet, body_shop, dealer, insurance, municipality, private_property, other. */
  kind: text('kind').notNull(),
  contacts: text('contacts', { mode: 'json' }).$type<CommercialAccountContact[]>().notNull(),
  /** Private: the agreed rates, free text. */
  rates: text('rates'),
  /** Private. */
  billingAddress: text('billing_address'),
  /** Private. */
  internalNotes: text('internal_notes'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [
  index('commercial_accounts_account_created_idx').on(t.accountId, t.createdAt, t.id),
  // A name names one account (the CSV import's `commercial_account` column finds it by name).
  uniqueIndex('commercial_accounts_account_name_uq').on(t.accountId, sql`lower(${t.name})`),
])

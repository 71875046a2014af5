import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { accounts } from '../accounts/account.table'

export interface Rate { kind: 'hook' | 'per_mile' | 'per_hour' | 'storage_per_day' | 'flat'; amount_cents: number; unit: 'job' | 'mile' | 'hour' | 'day' }

/** A service the company sells, with its rate card. */
export const services = sqliteTable('services', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  name: text('name').notNull(),
  serviceType: text('service_type').notNull(),
  rates: text('rates', { mode: 'json' }).$type<Rate[]>().notNull(),
  active: integer('active', { mode: 'boolean' }).notNull().default(true),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('services_account_idx').on(t.accountId, t.name)])

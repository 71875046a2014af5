import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { accounts } from '../accounts/account.table'
import { jobs } from '../jobs/job.table'

/** One line of an invoice; amounts in cents. */
export interface InvoiceLine { description: string; amount_cents: number }

/**
 * An invoice raised against a job. It is saved when issued (the draft lives only in the job
 * page's form), numbered with the account's next number, then paid (payments cover the total),
 * void or written off. Every step is a `job.payment_updated` event in the same transaction.
 */
export const invoices = sqliteTable('invoices', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  jobId: text('job_id').notNull().references(() => jobs.id),
  /** The account's invoice number: 1, 2, 3... in the order they were issued. */
  number: integer('number').notNull(),
  /** issued, paid, void, written_off. */
  status: text('status').notNull(),
  lines: text('lines', { mode: 'json' }).$type<InvoiceLine[]>().notNull(),
  totalCents: integer('total_cents').notNull(),
  amountPaidCents: integer('amount_paid_cents').notNull().default(0),
  /** Who issued it (a dashboard user), when a dispatcher did. */
  issuedByUserId: text('issued_by_user_id'),
  issuedAt: integer('issued_at').notNull(),
  paidAt: integer('paid_at'),
  voidedAt: integer('voided_at'),
  writtenOffAt: integer('written_off_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [
  uniqueIndex('invoices_account_number_uq').on(t.accountId, t.number),
  index('invoices_job_idx').on(t.jobId, t.createdAt),
])

/** A payment recorded against an invoice (partial payments allowed). */
export const invoicePayments = sqliteTable('invoice_payments', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  invoiceId: text('invoice_id').notNull().references(() => invoices.id),
  amountCents: integer('amount_cents').notNull(),
  /** How it was paid: cash, card, check, account... (free text, 1-40 characters). */
  method: text('method').notNull(),
  recordedByUserId: text('recorded_by_user_id'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('invoice_payments_invoice_idx').on(t.invoiceId, t.createdAt)])

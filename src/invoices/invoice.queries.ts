import type { Db } from '../db/client'
import { canSeeJob, findJobOrThrow } from '../jobs/job.queries'
import type { OperationScope } from '../operations/operation-context'
import { notFound } from '../platform/errors'
import { invoiceView, type InvoiceRow, type InvoiceView, type PaymentRow } from './invoice.view'

type Raw = Record<string, any>

function toInvoiceRow(r: Raw): InvoiceRow {
  return {
    id: r.id, accountId: r.account_id, jobId: r.job_id, number: r.number, status: r.status, lines: JSON.parse(r.lines),
    totalCents: r.total_cents, amountPaidCents: r.amount_paid_cents, issuedByUserId: r.issued_by_user_id, issuedAt: r.issued_at,
    paidAt: r.paid_at, voidedAt: r.voided_at, writtenOffAt: r.written_off_at, createdAt: r.created_at, updatedAt: r.updated_at,
  }
}

function toPaymentRow(r: Raw): PaymentRow {
  return { id: r.id, invoiceId: r.invoice_id, amountCents: r.amount_cents, method: r.method, recordedByUserId: r.recorded_by_user_id, createdAt: r.created_at }
}

/**
 * Finds an invoice the caller may see: its account, and a job in the caller's sites; otherwise
 * 404, exactly as an unknown id (another account's invoice is never told apart).
 */
export function findInvoiceOrThrow(db: Db, scope: OperationScope, id: string): InvoiceRow {
  const raw = db.$client.query<Raw, [string]>('SELECT * FROM invoices WHERE id = ?').get(id)
  const job = raw ? db.$client.query<Raw, [string]>('SELECT id, account_id, site_id FROM jobs WHERE id = ?').get(raw.job_id) : null
  if (!raw || !job || raw.account_id !== scope.accountId || !canSeeJob(scope, job)) throw notFound('invoice', id)
  return toInvoiceRow(raw)
}

/** A job's invoices, oldest first. */
export function listInvoiceRowsOfJob(db: Db, jobId: string): InvoiceRow[] {
  return db.$client.query<Raw, [string]>('SELECT * FROM invoices WHERE job_id = ? ORDER BY created_at, number').all(jobId).map(toInvoiceRow)
}

/** The payments of an invoice, oldest first. */
export function listPaymentRows(db: Db, invoiceId: string): PaymentRow[] {
  return db.$client.query<Raw, [string]>('SELECT * FROM invoice_payments WHERE invoice_id = ? ORDER BY created_at, id').all(invoiceId).map(toPaymentRow)
}

/** The account's next invoice number (MAX + 1); called inside the issuing transaction, which holds the write lock, so two issues never share one. */
export function nextInvoiceNumber(tx: Db, accountId: string): number {
  return tx.$client.query<{ n: number }, [string]>('SELECT IFNULL(MAX(number), 0) + 1 AS n FROM invoices WHERE account_id = ?').get(accountId)!.n
}

/** The job's latest issued (so not yet fully paid) invoice, or undefined: the one the tracking page's Pay link is for. */
export function findPayableInvoiceRow(db: Db, jobId: string): InvoiceRow | undefined {
  const raw = db.$client.query<Raw, [string]>("SELECT * FROM invoices WHERE job_id = ? AND status = 'issued' ORDER BY created_at DESC, number DESC LIMIT 1").get(jobId)
  return raw ? toInvoiceRow(raw) : undefined
}

/** The job's latest issued or paid invoice (the one its customer may read through the tracking link), or undefined. */
export function findCustomerInvoiceRow(db: Db, jobId: string): InvoiceRow | undefined {
  const raw = db.$client.query<Raw, [string]>("SELECT * FROM invoices WHERE job_id = ? AND status IN ('issued', 'paid') ORDER BY status = 'issued' DESC, created_at DESC, number DESC LIMIT 1").get(jobId)
  return raw ? toInvoiceRow(raw) : undefined
}

/** The views of a job's invoices with their payments, oldest first; the job must be one the scope sees (404 otherwise). */
export function readJobInvoices(db: Db, scope: OperationScope, jobId: string): InvoiceView[] {
  const job = findJobOrThrow(db, scope, jobId)
  return listInvoiceRowsOfJob(db, job.id).map((r) => invoiceView(r, listPaymentRows(db, r.id)))
}

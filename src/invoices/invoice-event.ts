import type { NewJobEvent } from '../jobs/job-events'
import { invoiceNumberText, type InvoiceRow, type InvoiceStatus } from './invoice.view'

/**
 * The job.payment_updated event of an invoice step, as the spec's table says: detail.invoice_id,
 * invoice_number, total_cents, amount_paid_cents (after the step), `from` the invoice's status
 * before it (null when issued), `to` its status after. `extra` adds a step's own facts (a
 * payment's amount_cents and method).
 */
export function invoiceEvent(after: Pick<InvoiceRow, 'id' | 'number' | 'totalCents' | 'amountPaidCents'>, from: InvoiceStatus | null, to: InvoiceStatus, extra: Record<string, unknown> = {}): NewJobEvent {
  return {
    type: 'job.payment_updated', from, to,
    detail: { invoice_id: after.id, invoice_number: invoiceNumberText(after.number), total_cents: after.totalCents, amount_paid_cents: after.amountPaidCents, ...extra },
  }
}

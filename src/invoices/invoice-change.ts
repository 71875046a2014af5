import { requirePermission } from '../accounts/actor'
import { inTransaction, type Db } from '../db/client'
import { commitJobChange } from '../jobs/commit-job-change'
import { loadWritableJob } from '../jobs/job-context'
import type { OperationContext } from '../operations/operation-context'
import { AppError } from '../platform/errors'
import { invoiceEvent } from './invoice-event'
import { findInvoiceOrThrow, listPaymentRows } from './invoice.queries'
import { invoiceNumberText, invoiceView, INVOICE_STATUS_LABELS, type InvoiceRow, type InvoiceStatus, type InvoiceView } from './invoice.view'

/** 409 invalid_state for a step the invoice's status does not allow (details.reason `invoice_<status>`, details.invoice_status). */
export function invoiceRefused(inv: InvoiceRow, what: string, why?: string): AppError {
  const words = why ?? `it is ${INVOICE_STATUS_LABELS[inv.status].toLowerCase()}`
  return new AppError('invalid_state', `Invoice ${invoiceNumberText(inv.number)} cannot be ${what}: ${words}. Nothing was changed.`, {
    reason: `invoice_${inv.status}`, invoice_id: inv.id, invoice_status: inv.status,
  })
}

/**
 * Runs one step of an issued invoice (a payment, a void, a write-off) in one transaction: finds
 * the invoice in the actor's scope (404), loads its job as writable (403, 409 invalid_state when
 * archived), lets `step` check and decide the invoice's next row (its own payment row included),
 * writes it only if nobody changed the invoice meanwhile, and appends job.payment_updated to the
 * job's timeline through the commit every job change takes.
 */
export function changeInvoice(ctx: OperationContext, invoiceId: string, step: (tx: Db, inv: InvoiceRow, now: number) => { after: InvoiceRow; extra?: Record<string, unknown> }): InvoiceView {
  requirePermission(ctx.actor, 'jobs:write')
  return inTransaction(ctx.db, (tx) => {
    const inv = findInvoiceOrThrow(tx, ctx.scope, invoiceId)
    const job = loadWritableJob(ctx, tx, inv.jobId, 'jobs:write')
    const now = ctx.clock.now()
    const { after, extra } = step(tx, inv, now)
    const changed = tx.$client.query(`UPDATE invoices SET status = ?, amount_paid_cents = ?, paid_at = ?, voided_at = ?, written_off_at = ?, updated_at = ?
      WHERE id = ? AND status = ? AND amount_paid_cents = ?`)
      .run(after.status, after.amountPaidCents, after.paidAt, after.voidedAt, after.writtenOffAt, now, inv.id, inv.status, inv.amountPaidCents).changes
    // A write lock is held, so this only fails if the invoice changed under us: refuse rather than overwrite.
    if (changed !== 1) throw new AppError('invalid_state', 'The invoice changed while this request was being handled; nothing was written. Reload and try again.', { reason: 'invoice_changed', invoice_id: inv.id })
    commitJobChange(tx, ctx, job, { events: [invoiceEvent(after, inv.status, after.status as InvoiceStatus, extra)], nowMs: now })
    return invoiceView({ ...after, updatedAt: now }, listPaymentRows(tx, inv.id))
  })
}

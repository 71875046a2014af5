import type { OperationContext } from '../operations/operation-context'
import { dollarsText } from '../platform/money'
import { changeInvoice, invoiceRefused } from './invoice-change'
import type { InvoiceView } from './invoice.view'

/**
 * Voids an issued invoice on which nothing was paid (the job page's **Void invoice**): it was
 * raised in error and is owed by nobody. Once a payment is recorded it cannot be voided (409
 * invalid_state, reason invoice_has_payments): the money was taken, so write off what remains
 * instead. job.payment_updated from issued to void.
 */
export function voidInvoice(ctx: OperationContext, invoiceId: string): InvoiceView {
  return changeInvoice(ctx, invoiceId, (_tx, inv, now) => {
    if (inv.status !== 'issued') throw invoiceRefused(inv, 'voided')
    if (inv.amountPaidCents > 0) {
      const err = invoiceRefused(inv, 'voided', `${dollarsText(inv.amountPaidCents)} was already paid on it (write off the rest instead)`)
      err.details.reason = 'invoice_has_payments'
      throw err
    }
    return { after: { ...inv, status: 'void', voidedAt: now } }
  })
}

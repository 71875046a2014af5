import type { OperationContext } from '../operations/operation-context'
import { changeInvoice, invoiceRefused } from './invoice-change'
import type { InvoiceView } from './invoice.view'

/**
 * Writes off what is still due on an issued invoice (the job page's **Write off**): partly paid
 * invoices too; the payments stay, the remainder (total - paid) is given up and nothing is owed
 * any more. job.payment_updated from issued to written_off (amount_paid_cents unchanged).
 */
export function writeOffInvoice(ctx: OperationContext, invoiceId: string): InvoiceView {
  return changeInvoice(ctx, invoiceId, (_tx, inv, now) => {
    if (inv.status !== 'issued') throw invoiceRefused(inv, 'written off')
    return { after: { ...inv, status: 'written_off', writtenOffAt: now } }
  })
}

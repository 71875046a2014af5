import { openPaymentLink, type PayableInvoice } from '../jobs/open-payment-link'
import type { OperationContext } from '../operations/operation-context'

/**
 * The answer of `/t/{token}/pay` for an issued, unpaid invoice: job.payment_link_opened on the
 * timeline (actor customer), then 303 to the account's payment link with `invoice` and `amount`
 * (what is due) in its query, or, when the account has none, to `invoicePath` (the invoice to
 * print, with how to pay). Null when there is nothing to pay: nothing is emitted and the route
 * says so in a page.
 */
export function payLinkResponse(ctx: OperationContext, jobId: string, invoice: PayableInvoice | null, paymentUrl: string | null, invoicePath: string): Response | null {
  if (!invoice || invoice.amount_due_cents <= 0) return null
  const target = openPaymentLink(ctx, jobId, invoice, paymentUrl, invoicePath)
  return new Response(null, { status: 303, headers: { location: target } })
}

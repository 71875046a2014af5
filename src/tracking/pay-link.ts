import { openPaymentLink, type PayableInvoice } from '../jobs/open-payment-link'
import type { OperationContext } from '../operations/operation-context'

/**
 * The answer of `/t/{token}/pay` for an issued, unpaid invoice and the account's payment link:
 * job.payment_link_opened on the timeline (actor customer), then 303 to the payment link with
 * `invoice` and `amount` in its query. Null when there is nothing to send the customer to (no
 * invoice to pay, or no payment link set): nothing is emitted and the route says so in a page.
 */
export function payLinkResponse(ctx: OperationContext, jobId: string, invoice: PayableInvoice | null, paymentUrl: string | null): Response | null {
  if (!invoice || !paymentUrl || invoice.total_cents <= 0) return null
  const target = openPaymentLink(ctx, jobId, invoice, paymentUrl)
  return new Response(null, { status: 303, headers: { location: target } })
}

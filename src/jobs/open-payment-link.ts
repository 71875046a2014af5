import { loadWritableJob } from './job-context'
import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { amountText } from '../platform/money'

/** An issued, unpaid invoice as the Pay link needs it: its id and number, its total and what is still owed, in cents. */
export interface PayableInvoice {
  id: string
  number: string
  total_cents: number
  amount_due_cents: number
}

/**
 * The URL the customer is sent to: the account's payment link with `invoice` (the invoice
 * number) and `amount` (what is due, in dollars and cents) added to its query, anything it
 * already had kept.
 */
export function paymentRedirectUrl(paymentUrl: string, invoice: PayableInvoice): string {
  const url = new URL(paymentUrl)
  url.searchParams.set('invoice', invoice.number)
  url.searchParams.set('amount', amountText(invoice.amount_due_cents))
  return url.toString()
}

/**
 * The customer opened the **Pay** link of an issued, unpaid invoice: emits
 * job.payment_link_opened (actor customer; detail invoice_id, invoice_number, total_cents,
 * amount_due_cents) and returns where to send them: the account's payment link
 * (paymentRedirectUrl) when it has one, else `fallback` (the invoice to print, with how to pay).
 */
export function openPaymentLink(ctx: OperationContext, jobId: string, invoice: PayableInvoice, paymentUrl: string | null, fallback: string): string {
  requirePermission(ctx.actor, 'jobs:track')
  const target = paymentUrl ? paymentRedirectUrl(paymentUrl, invoice) : fallback
  inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:track')
    commitJobChange(tx, ctx, job, {
      events: [{ type: 'job.payment_link_opened', detail: { invoice_id: invoice.id, invoice_number: invoice.number, total_cents: invoice.total_cents, amount_due_cents: invoice.amount_due_cents } }],
    })
  })
  return target
}

import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import { dollarsText } from '../platform/money'
import type { FieldProblem } from '../platform/validation'
import { changeInvoice, invoiceRefused } from './invoice-change'
import type { InvoiceView } from './invoice.view'
import { charCount } from '../platform/chars'

/** The longest payment method ("cash", "card", "check 1042", "motor club account"...). */
export const MAX_METHOD = 40

/**
 * Records a payment on an issued invoice (the job page's **Record payment**): an amount above
 * zero and at most what is still due (an overpayment is 422 on `amount`, nothing written), and a
 * method of 1 to 40 characters. Partial payments keep the invoice `issued`; the one that covers
 * the total turns it `paid`. job.payment_updated: from issued, to issued or paid, with the new
 * amount_paid_cents and the payment's amount_cents and method. A paid, void or written-off
 * invoice refuses (409 invalid_state).
 */
export function recordPayment(ctx: OperationContext, invoiceId: string, input: { amountCents: number; method: string }): InvoiceView {
  requirePermission(ctx.actor, 'jobs:write')
  const method = input.method.trim()
  const problems: FieldProblem[] = []
  if (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0) problems.push({ path: 'amount', message: 'must be an amount above $0.00, in dollars and cents, e.g. 185.00' })
  if (method.length < 1 || charCount(method) > MAX_METHOD) problems.push({ path: 'method', message: `must be 1 to ${MAX_METHOD} characters, e.g. cash, card, check` })
  if (problems.length) throw validationFailed(problems)
  return changeInvoice(ctx, invoiceId, (tx, inv, now) => {
    if (inv.status !== 'issued') throw invoiceRefused(inv, 'paid')
    const due = inv.totalCents - inv.amountPaidCents
    if (input.amountCents > due) throw validationFailed([{ path: 'amount', message: `must be at most ${dollarsText(due)}, the amount due` }])
    const id = newId('pay', now)
    tx.$client.query('INSERT INTO invoice_payments (id, account_id, invoice_id, amount_cents, method, recorded_by_user_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, inv.accountId, inv.id, input.amountCents, method, ctx.actor.kind === 'dispatcher' ? ctx.actor.userId : null, now)
    const paid = inv.amountPaidCents + input.amountCents
    const full = paid === inv.totalCents
    return {
      after: { ...inv, amountPaidCents: paid, status: full ? 'paid' : 'issued', paidAt: full ? now : null },
      extra: { amount_cents: input.amountCents, method },
    }
  })
}

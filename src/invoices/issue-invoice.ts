import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { commitJobChange } from '../jobs/commit-job-change'
import { loadWritableJob } from '../jobs/job-context'
import type { OperationContext } from '../operations/operation-context'
import { AppError, validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import { dollarsText } from '../platform/money'
import type { FieldProblem } from '../platform/validation'
import { invoiceEvent } from './invoice-event'
import { listPaymentRows, nextInvoiceNumber } from './invoice.queries'
import type { InvoiceLine } from './invoice.table'
import { invoiceNumberText, invoiceView, type InvoiceRow, type InvoiceView } from './invoice.view'
import { charCount } from '../platform/chars'

/** The most lines an invoice holds. */
export const MAX_INVOICE_LINES = 50
/** The longest line description. */
export const MAX_LINE_DESCRIPTION = 200
/** The largest amount of one line, either way ($999,999.99). */
export const MAX_LINE_CENTS = 99_999_999

/**
 * Checks an invoice's lines: 1 to 50, each a description of 1 to 200 characters (trimmed) and an
 * amount of 1 cent to $999,999.99. A line may be negative (a discount: `-20.00`), never zero, and
 * the total must be above zero. Problems are named `lines.<i>.description` / `lines.<i>.amount_cents`,
 * all at once; none when the lines are good.
 */
export function lineProblems(lines: InvoiceLine[]): FieldProblem[] {
  const problems: FieldProblem[] = []
  if (lines.length === 0) return [{ path: 'lines', message: 'an invoice needs at least one line' }]
  if (lines.length > MAX_INVOICE_LINES) return [{ path: 'lines', message: `an invoice holds at most ${MAX_INVOICE_LINES} lines` }]
  lines.forEach((l, i) => {
    const d = l.description.trim()
    if (d.length < 1 || charCount(d) > MAX_LINE_DESCRIPTION) problems.push({ path: `lines.${i}.description`, message: `must be 1 to ${MAX_LINE_DESCRIPTION} characters` })
    if (!Number.isSafeInteger(l.amount_cents) || l.amount_cents === 0 || Math.abs(l.amount_cents) > MAX_LINE_CENTS) {
      problems.push({ path: `lines.${i}.amount_cents`, message: `must be an amount from 0.01 to ${dollarsText(MAX_LINE_CENTS)} (a discount: the same with a minus sign)` })
    }
  })
  const total = lines.reduce((sum, l) => sum + l.amount_cents, 0)
  if (!problems.length && total <= 0) problems.push({ path: 'lines', message: 'the lines must add up to more than $0.00' })
  return problems
}

/**
 * Issues an invoice against a job (the job page's **Issue invoice**): the lines are checked
 * (lineProblems, 422 before anything is written), then in one transaction the invoice gets the
 * account's next number (MAX + 1 under the write lock; the unique index on (account, number)
 * is the backstop) and status `issued`, and the job's timeline gets job.payment_updated
 * (from null, to issued). An archived job refuses (409 invalid_state). With `expectedInvoices`
 * (how many invoices the job had when the draft was shown) a job that got another invoice since
 * refuses (409 invalid_state, `details.invoices_since`: those not void): a draft sent again from
 * Back, or drafted by two people at once, does not bill the job twice without anyone seeing the first.
 */
export function issueInvoice(ctx: OperationContext, jobId: string, input: { lines: InvoiceLine[] }, opts: { expectedInvoices?: number } = {}): InvoiceView {
  requirePermission(ctx.actor, 'jobs:write')
  const lines = input.lines.map((l) => ({ description: l.description.trim(), amount_cents: l.amount_cents }))
  const problems = lineProblems(lines)
  if (problems.length) throw validationFailed(problems, `The invoice was not issued: ${problems[0]!.path}: ${problems[0]!.message}.`)
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:write')
    if (opts.expectedInvoices !== undefined) {
      // Issued since and standing: one issued and voided meanwhile bills nothing twice.
      const since = tx.$client.query<{ number: number; status: string }, [string, string]>('SELECT number, status FROM invoices WHERE account_id = ? AND job_id = ? ORDER BY created_at, id')
        .all(job.accountId, job.id).slice(Math.max(0, opts.expectedInvoices)).filter((r) => r.status !== 'void').map((r) => invoiceNumberText(r.number))
      if (since.length) {
        const which = since.length === 1 ? `Invoice ${since[0]} was` : `Invoices ${since.slice(0, -1).join(', ')} and ${since.at(-1)} were`
        throw new AppError('invalid_state', `${which} issued for this job after this draft was opened; nothing was issued.`, { invoices_since: since })
      }
    }
    const now = ctx.clock.now()
    const row: InvoiceRow = {
      id: newId('inv', now), accountId: job.accountId, jobId: job.id, number: nextInvoiceNumber(tx, job.accountId), status: 'issued', lines,
      totalCents: lines.reduce((sum, l) => sum + l.amount_cents, 0), amountPaidCents: 0,
      issuedByUserId: ctx.actor.kind === 'dispatcher' ? ctx.actor.userId : null, issuedAt: now,
      paidAt: null, voidedAt: null, writtenOffAt: null, createdAt: now, updatedAt: now,
    }
    tx.$client.query(`INSERT INTO invoices (id, account_id, job_id, number, status, lines, total_cents, amount_paid_cents, issued_by_user_id, issued_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(row.id, row.accountId, row.jobId, row.number, row.status, JSON.stringify(row.lines), row.totalCents, 0, row.issuedByUserId, now, now, now)
    commitJobChange(tx, ctx, job, { events: [invoiceEvent(row, null, 'issued')], nowMs: now })
    return invoiceView(row, listPaymentRows(tx, row.id))
  })
}

import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { jobPageResponse } from '../dashboard/job-page.routes'
import { dashboardPage } from '../dashboard/shell'
import { idempotencyOwner, withIdempotency } from '../idempotency/idempotency'
import type { OperationContext } from '../operations/operation-context'
import { postedValues, type FormState } from '../pages/form'
import { AppError } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { randomBase62 } from '../platform/ids'
import { parseDollars } from '../platform/money'
import { BODY_CAPS, routeProps } from '../platform/route-props'
import type { FieldProblem } from '../platform/validation'
import type { SessionPlugin } from '../users/session.plugin'
import type { SessionUser } from '../users/sessions'
import { draftInvoice, type DraftLine } from './draft-invoice'
import { getInvoice } from './get-invoice'
import { listJobInvoices } from './list-job-invoices'
import { invoiceDocumentHtml, draftInvoiceBody, INVOICE_ACTIONS, type DraftState, type InvoiceAction } from './invoice.page'
import type { InvoiceLine } from './invoice.table'
import { issueInvoice, lineProblems, MAX_INVOICE_LINES } from './issue-invoice'
import { recordPayment } from './record-payment'
import { voidInvoice } from './void-invoice'
import { writeOffInvoice } from './write-off-invoice'

const text = (f: FormFields, name: string) => (typeof f[name] === 'string' ? (f[name] as string) : '')
/** A field posted as `name[]` (a list) or once as `name`. */
const list = (f: FormFields, name: string): string[] => {
  const v = f[name]
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : []
}
/** Dollars and cents as typed, a leading minus for a discount; undefined when not money, null when blank. */
function signedDollars(raw: string): number | null | undefined {
  const negative = /^\s*-/.test(raw)
  const cents = parseDollars(negative ? raw.replace(/^\s*-/, '') : raw)
  return typeof cents === 'number' && negative ? -cents : cents
}

const DRAFT_KEY = /^[0-9A-Za-z]{24}$/
const ACTION_KEY = /^[0-9A-Za-z]{24}\.(payments|void|write-off)\.inv_[0-9A-Z]{26}$/

/**
 * The invoice pages: the draft of **Create invoice** (`/jobs/{id}/invoices/new`: **Add line**
 * posts the draft back with one more line, **Issue invoice** issues it), the forms of each
 * invoice on the job page (`/invoices/{id}/payments|void|write-off`), and the printable invoice
 * (`/invoices/{id}`). Each runs the invoices' operations as the signed-in user; each form carries
 * its own idempotency key, so a double click records one payment.
 */
export function invoiceRoutes(session: SessionPlugin, deps: RouteDeps) {
  /** The draft page; `invoicesSeen` is the count the draft was first shown with (a fresh draft: the job's count now). */
  const draftPage = (ctx: OperationContext, user: SessionUser, jobId: string, s: Omit<DraftState, 'idempotencyKey' | 'invoicesSeen'> & { idempotencyKey?: string; invoicesSeen?: number }, status = 200) => {
    const { job } = draftInvoice(ctx, jobId)
    const invoices = listJobInvoices(ctx, jobId)
    const body = draftInvoiceBody(job, { ...s, idempotencyKey: s.idempotencyKey ?? randomBase62(24), invoicesSeen: s.invoicesSeen ?? invoices.length }, invoices)
    return dashboardPage({ title: 'New invoice', user, active: 'jobs', body: body.text, status })
  }

  /** Issues the posted draft: 303 to the job page, or the draft again with its lines' messages (422) or the refusal (409). */
  const issue = (ctx: OperationContext, user: SessionUser, jobId: string, lines: DraftLine[], idempotencyKey: string, invoicesSeen: number | undefined): Response => {
    const errors: DraftState['errors'] = {}
    const parsed: InvoiceLine[] = []
    const origin: number[] = []
    lines.forEach((l, i) => {
      if (!l.description.trim() && !l.amount.trim()) return // an empty line is left out
      const cents = signedDollars(l.amount)
      if (typeof cents !== 'number') errors[i] = { amount: cents === null ? 'type the amount, or clear the line to leave it out' : 'must be dollars and cents, e.g. 185.00 (a discount: -20.00)' }
      parsed.push({ description: l.description, amount_cents: typeof cents === 'number' ? cents : 0 })
      origin.push(i)
    })
    const refuse = (alert: string | undefined, status: number) => draftPage(ctx, user, jobId, { lines, errors, alert, idempotencyKey, invoicesSeen }, status)
    /** Puts each problem beside its line's field (a line's first message wins); the rest is the summary. */
    const placed = (problems: FieldProblem[]) => {
      let alert: string | undefined
      for (const p of problems) {
        const m = /^lines\.(\d+)\.(description|amount_cents)$/.exec(p.path)
        const at = m ? origin[Number(m[1])] : undefined
        const fieldName = m?.[2] === 'description' ? 'description' : 'amount'
        if (m && at !== undefined) errors[at] = { [fieldName]: p.message, ...errors[at] }
        else alert ??= `The invoice was not issued: ${p.message}.`
      }
      return refuse(alert ?? 'The invoice was not issued: some lines need attention; each says why beside it.', 422)
    }
    const problems = lineProblems(parsed)
    if (Object.keys(errors).length || problems.length) return placed(problems)
    try {
      // The draft's own key: a double click or a resent form issues one invoice.
      withIdempotency(deps, idempotencyOwner(ctx.actor), idempotencyKey, { method: 'POST', path: `/jobs/${jobId}/invoices`, body: { lines: parsed } },
        () => ({ status: 201, body: { id: issueInvoice(ctx, jobId, { lines: parsed }, { expectedInvoices: invoicesSeen }).id } }))
      return new Response(null, { status: 303, headers: { location: `/jobs/${encodeURIComponent(jobId)}?done=invoice_issued` } })
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      if (err.errorCode === 'validation_failed') return placed((err.details.fields as FieldProblem[] | undefined) ?? [])
      if (Array.isArray(err.details.invoices_since)) {
        // The draft comes back counting the job's invoices as they are now, with a new key: issuing it is then a choice made seeing them.
        return draftPage(ctx, user, jobId, { lines, errors, alert: `${err.message} The job's invoices are listed above the draft; press Issue invoice again to issue this one as well.` }, err.status)
      }
      if (err.errorCode === 'invalid_state' || err.errorCode === 'idempotency_key_reused') return refuse(`The invoice was not issued: ${err.message}`, err.status)
      throw err
    }
  }

  /** Runs one invoice form: 303 to its job's page saying what was done, or the job page with the refusal and what was typed. */
  const act = (ctx: OperationContext, user: SessionUser, invoiceId: string, action: InvoiceAction, f: FormFields): Response => {
    const key = text(f, 'idempotency_key')
    const formKey = ACTION_KEY.test(key) && key.endsWith(`.${invoiceId}`) ? key : undefined
    const values = postedValues(f)
    const run = (): string => {
      switch (action) {
        case 'payments': {
          const cents = parseDollars(text(f, 'amount'))
          const inv = recordPayment(ctx, invoiceId, { amountCents: typeof cents === 'number' ? cents : NaN, method: text(f, 'method') })
          return inv.status === 'paid' ? 'invoice_paid' : 'payment_recorded'
        }
        case 'void': voidInvoice(ctx, invoiceId); return 'invoice_void'
        case 'write-off': writeOffInvoice(ctx, invoiceId); return 'invoice_written_off'
      }
    }
    try {
      const made = withIdempotency(deps, idempotencyOwner(ctx.actor), formKey, { method: 'POST', path: `/invoices/${invoiceId}/${action}`, body: values },
        () => ({ status: 200, body: { done: run() } }))
      const jobId = getInvoice(ctx, invoiceId).invoice.job_id
      return new Response(null, { status: 303, headers: { location: `/jobs/${encodeURIComponent(jobId)}?done=${(made.body as { done: string }).done}` } })
    } catch (err) {
      if (!(err instanceof AppError) || !['validation_failed', 'invalid_state', 'idempotency_key_reused'].includes(err.errorCode)) throw err
      const jobId = getInvoice(ctx, invoiceId).invoice.job_id
      const form: FormState = { values, errors: {}, alert: '' }
      for (const p of (err.details.fields as FieldProblem[] | undefined) ?? []) form.errors[p.path] ??= p.message
      const alert = err.errorCode === 'validation_failed'
        ? `Nothing was recorded: correct the field${Object.keys(form.errors).length === 1 ? '' : 's'} marked below.`
        : err.errorCode === 'idempotency_key_reused' ? 'This form was already sent from this page with other values. Nothing more was done; the page now shows the job as it is.' : err.message
      return jobPageResponse(deps, ctx, user, jobId, { alert, formKey: formKey?.split('.')[0], invoices: { invoiceId, action, form } }, err.status)
    }
  }

  return new Elysia({ name: 'towline.invoices' }).use(routeProps).use(session)
    .get('/jobs/:id/invoices/new', ({ ctx, user, params }) => draftPage(ctx, user, params.id, { lines: draftInvoice(ctx, params.id).lines, errors: {} }), { signedIn: 'dispatcher' })
    .post('/jobs/:id/invoices/new', ({ ctx, user, params, body }) => {
      const f = body as FormFields
      const descriptions = list(f, 'description')
      const amounts = list(f, 'amount')
      const lines: DraftLine[] = Array.from({ length: Math.min(MAX_INVOICE_LINES, Math.max(descriptions.length, amounts.length)) }, (_, i) => ({ description: descriptions[i] ?? '', amount: amounts[i] ?? '' }))
      const idempotencyKey = DRAFT_KEY.test(text(f, 'idempotency_key')) ? text(f, 'idempotency_key') : randomBase62(24)
      const seen = /^\d{1,6}$/.test(text(f, 'invoices_seen')) ? Number(text(f, 'invoices_seen')) : undefined
      if (text(f, 'intent') === 'add_line') {
        const more = lines.length < MAX_INVOICE_LINES ? [...lines, { description: '', amount: '' }] : lines
        // The keyboard goes on at the new line, not at the top of the page.
        return draftPage(ctx, user, params.id, { lines: more, errors: {}, idempotencyKey, invoicesSeen: seen, focusLine: more.length - 1 })
      }
      return issue(ctx, user, params.id, lines, idempotencyKey, seen)
    }, { signedIn: 'dispatcher', accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 2 * MAX_INVOICE_LINES + 8 } })
    .get('/invoices/:id', ({ ctx, user, params }) => {
      const doc = getInvoice(ctx, params.id)
      const body = invoiceDocumentHtml(doc, { customer: false, backHref: `/jobs/${doc.invoice.job_id}`, backText: 'Back to the job' })
      return dashboardPage({ title: `Invoice ${doc.invoice.number}`, user, active: 'jobs', body: body.text })
    }, { signedIn: 'dispatcher' })
    .post('/invoices/:id/:action', ({ ctx, user, params, body }) => {
      if (!(INVOICE_ACTIONS as readonly string[]).includes(params.action)) throw new AppError('not_found', `There is no invoice action ${params.action}.`, { action: params.action })
      return act(ctx, user, params.id, params.action as InvoiceAction, body as FormFields)
    }, { signedIn: 'dispatcher', accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 8 } })
}

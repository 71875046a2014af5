/**
 * The invoices' markup: the job page's **Invoices** section (each invoice in a region named by
 * its number, with **Record payment** (**Amount**, **Method**), **Void invoice** and **Write off**),
 * the draft form of **Create invoice** (lines of **Description** and **Amount**, **Add line**,
 * **Issue invoice**), and the printable invoice, for the account's users (`/invoices/{id}`) and
 * for the job's customer through their tracking link (`/t/{token}/invoice`).
 */
import { blankForm, formAlert, type FormState } from '../pages/form'
import { attrs, dayTag, html, timeTag, type Html } from '../pages/html'
import { dollarsText } from '../platform/money'
import type { DraftLine } from './draft-invoice'
import type { InvoiceDocument } from './get-invoice'
import { MAX_INVOICE_LINES, MAX_LINE_DESCRIPTION } from './issue-invoice'
import { MAX_METHOD } from './record-payment'
import { INVOICE_STATUS_LABELS, type InvoiceView } from './invoice.view'

/** The forms of one invoice on the job page, by the path segment they post to (`/invoices/{id}/<action>`). */
export const INVOICE_ACTIONS = ['payments', 'void', 'write-off'] as const
export type InvoiceAction = (typeof INVOICE_ACTIONS)[number]

/** What the job page says of its invoices besides them: the refused form, with what was typed and its messages. */
export interface InvoiceSectionState {
  invoiceId: string
  action: InvoiceAction
  form: FormState
}

/** What a done invoice step says on the job page it returns to (`?done=`). */
export const INVOICE_DONE: Record<string, string> = {
  invoice_issued: 'Invoice issued.', payment_recorded: 'Payment recorded.', invoice_paid: 'Payment recorded: the invoice is paid.',
  invoice_void: 'Invoice voided.', invoice_written_off: 'Invoice written off.',
}

const money = (cents: number) => dollarsText(cents)

/** A labelled text field whose id is unique on the page (several invoices, several lines), wired to its message as form.ts wires its own. */
function field(f: { id: string; name: string; label: string; value: string; error?: string; maxlength?: number; inputmode?: 'decimal' | 'text'; required?: boolean; hint?: string; sharedHint?: string; focus?: boolean }): Html {
  const described = [f.hint ? `${f.id}-hint` : '', f.sharedHint ?? '', f.error ? `${f.id}-error` : ''].filter(Boolean).join(' ')
  return html`<div class="field"><label for="${f.id}">${f.label}</label>${f.required ? html`<span class="required" aria-hidden="true"> *</span>` : ''}${f.hint ? html`<p class="field-hint" id="${`${f.id}-hint`}">${f.hint}</p>` : ''}<input${attrs({
    type: 'text', id: f.id, name: f.name, value: f.value, maxlength: f.maxlength, inputmode: f.inputmode, required: f.required, autocomplete: 'off',
    'aria-invalid': f.error ? 'true' : undefined, 'aria-describedby': described || undefined, 'data-focus-on-load': f.focus ?? false,
  })}><p class="field-error" id="${`${f.id}-error`}">${f.error ?? ''}</p></div>`
}

const textOf = (v: FormState['values'][string]) => (Array.isArray(v) ? v[0] ?? '' : v ?? '')

/** The amounts of an invoice as a definition list. */
function amounts(inv: InvoiceView, zone: string): Html {
  return html`<dl class="job-fields invoice-amounts">
<dt>Status</dt><dd><span class="status-badge" data-invoice-status="${inv.status}">${INVOICE_STATUS_LABELS[inv.status]}</span></dd>
<dt>Issued</dt><dd>${timeTag(inv.issued_at, zone)}</dd>
<dt>Total</dt><dd>${money(inv.total_cents)}</dd>
<dt>Paid</dt><dd>${money(inv.amount_paid_cents)}</dd>
<dt>Due</dt><dd>${money(inv.amount_due_cents)}</dd>
${inv.written_off_cents ? html`<dt>Written off</dt><dd>${money(inv.written_off_cents)}</dd>` : ''}
</dl>`
}

/** The lines of an invoice as a table. */
function linesTable(inv: InvoiceView, caption: string): Html {
  return html`<div class="table-scroll"><table class="invoice-lines"><caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Description</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${inv.lines.map((l) => html`<tr><td>${l.description}</td><td class="num">${money(l.amount_cents)}</td></tr>`)}</tbody>
<tfoot><tr><th scope="row">Total</th><td class="num">${money(inv.total_cents)}</td></tr></tfoot>
</table></div>`
}

/** One invoice on the job page: its amounts, lines, payments, and the forms its status allows. */
function invoiceItem(inv: InvoiceView, opts: { jobWritable: boolean; formKey: string; state?: InvoiceSectionState; names: Map<string, string>; zone: string }): Html {
  const refused = (action: InvoiceAction) => (opts.state?.invoiceId === inv.id && opts.state.action === action ? opts.state.form : blankForm())
  const action = (name: InvoiceAction, body: Html, cls = 'job-action') => {
    const form = refused(name)
    return html`<form method="post" action="${`/invoices/${inv.id}/${name}`}" class="${cls}" novalidate>${formAlert(form)}<input type="hidden" name="idempotency_key" value="${`${opts.formKey}.${name}.${inv.id}`}">${body}</form>`
  }
  const forms: Html[] = []
  if (opts.jobWritable && inv.status === 'issued') {
    const pay = refused('payments')
    forms.push(action('payments', html`<fieldset><legend>Record a payment</legend>
${field({ id: `f-${inv.id}-amount`, name: 'amount', label: 'Amount', value: textOf(pay.values.amount), error: pay.errors.amount, inputmode: 'decimal', required: true, hint: `Dollars and cents, at most ${money(inv.amount_due_cents)}.` })}
${field({ id: `f-${inv.id}-method`, name: 'method', label: 'Method', value: textOf(pay.values.method), error: pay.errors.method, maxlength: MAX_METHOD, required: true, hint: 'e.g. cash, card, check 1042, motor club.' })}
<button type="submit">Record payment</button></fieldset>`))
    const row: Html[] = []
    if (inv.amount_paid_cents === 0) row.push(action('void', html`<button type="submit" class="button-danger">Void invoice</button>`, 'job-action job-action-inline'))
    row.push(action('write-off', html`<button type="submit" class="button-secondary">Write off</button>`, 'job-action job-action-inline'))
    forms.push(html`<p class="hint">${inv.amount_paid_cents === 0 ? 'Void an invoice raised in error; write off what will not be paid.' : 'Write off what will not be paid; an invoice with payments cannot be voided.'}</p>`, ...row)
  }
  const payments = inv.payments.length
    ? html`<h4>Payments</h4><ul class="invoice-payments">${inv.payments.map((p) => html`<li>${money(p.amount_cents)} by ${p.method}<span class="meta"> · ${p.recorded_by_user_id ? opts.names.get(p.recorded_by_user_id) ?? p.recorded_by_user_id : 'system'} · ${timeTag(p.created_at, opts.zone)}</span></li>`)}</ul>`
    : ''
  return html`<section class="invoice" aria-labelledby="${`h-${inv.id}`}" data-invoice-id="${inv.id}">
<h3 id="${`h-${inv.id}`}">Invoice ${inv.number}</h3>
${amounts(inv, opts.zone)}
${linesTable(inv, `Lines of invoice ${inv.number}`)}
${payments}
<p><a href="${`/invoices/${inv.id}`}">Printable invoice ${inv.number}</a></p>
${forms}
</section>`
}

/** The job page's Invoices section: **Create invoice**, then each invoice, newest first. */
export function invoicesSection(job: { id: string; archived: boolean }, invoices: InvoiceView[], opts: { formKey: string; state?: InvoiceSectionState; names: Map<string, string>; zone: string }): Html {
  const items = [...invoices].reverse().map((inv) => invoiceItem(inv, { jobWritable: !job.archived, ...opts }))
  return html`<section class="job-section" aria-labelledby="h-invoices"><h2 id="h-invoices">Invoices</h2>
${job.archived ? '' : html`<form method="get" action="${`/jobs/${job.id}/invoices/new`}" class="job-action"><button type="submit">Create invoice</button></form>`}
${items.length ? items : html`<p>No invoices yet.</p>`}
</section>`
}

/** The draft invoice's form state: its lines as typed, each line's messages, the summary, and the form's key. */
export interface DraftState {
  lines: DraftLine[]
  /** Messages by line index and field. */
  errors: Record<number, { description?: string; amount?: string }>
  alert?: string
  idempotencyKey: string
  /** How many invoices the job had when the draft was first shown (the draft sends it back: issueInvoice's expectedInvoices). */
  invoicesSeen: number
  /** The line whose Description takes focus when the page opens (the one Add line just added). */
  focusLine?: number
}

/** The draft invoice page's body (**Create invoice**): lines of **Description** and **Amount**, **Add line**, **Issue invoice**. */
export function draftInvoiceBody(job: { id: string; title: string }, s: DraftState, invoices: InvoiceView[] = []): Html {
  const standing = invoices.filter((inv) => inv.status !== 'void')
  const already = standing.length
    ? html`<div class="notice notice-warn" id="draft-others"><p>This job already has ${standing.length === 1 ? 'an invoice' : `${String(standing.length)} invoices`}; issuing this draft makes another:</p>
<ul>${standing.map((inv) => html`<li><a href="${`/invoices/${inv.id}`}">${inv.number}</a>: ${INVOICE_STATUS_LABELS[inv.status]}, ${money(inv.total_cents)}${inv.status === 'issued' ? `, ${money(inv.amount_due_cents)} due` : ''}</li>`)}</ul></div>`
    : ''
  const lines = s.lines.map((l, i) => html`<fieldset class="invoice-line"><legend>Line ${String(i + 1)}</legend>
${field({ id: `f-line-${i}-description`, name: 'description[]', label: 'Description', value: l.description, error: s.errors[i]?.description, maxlength: MAX_LINE_DESCRIPTION, focus: s.focusLine === i })}
${field({ id: `f-line-${i}-amount`, name: 'amount[]', label: 'Amount', value: l.amount, error: s.errors[i]?.amount, inputmode: 'decimal', sharedHint: 'draft-hint' })}
</fieldset>`)
  const form: FormState = { values: {}, errors: {}, alert: s.alert ?? (Object.keys(s.errors).length ? 'Some lines need attention; each says why beside it.' : '') }
  return html`<p class="breadcrumb"><a href="/board">Board</a> / <a href="${`/jobs/${job.id}`}">${job.title}</a></p>
<h1>New invoice</h1>
<p>For the job of ${job.title}. The invoice is saved only when you issue it, with the account's next number.</p>
${already}
<form method="post" action="${`/jobs/${job.id}/invoices/new`}" class="invoice-draft" novalidate>${formAlert(form)}
<input type="hidden" name="idempotency_key" value="${s.idempotencyKey}">
<input type="hidden" name="invoices_seen" value="${String(s.invoicesSeen)}">
<p class="field-hint" id="draft-hint">Amounts in dollars and cents (185.00); a discount with a minus sign (-20.00). A line left empty is left out. At most ${String(MAX_INVOICE_LINES)} lines.</p>
${lines}
<div class="button-row">${s.lines.length < MAX_INVOICE_LINES ? html`<button type="submit" name="intent" value="add_line" class="button-secondary">Add line</button>` : ''}<button type="submit" name="intent" value="issue">Issue invoice</button></div>
</form>`
}

/**
 * The printable invoice. For the account's users: everything it says, with the job's id and
 * reference and each payment's method. For the customer (`customer: true`, through their tracking
 * link): what the invoice says to them (company, number, date, their name, vehicle, route, lines,
 * total, paid, due) and how to pay, without the job's internal id or reference and without the
 * methods or who recorded payments.
 */
export function invoiceDocumentHtml(doc: InvoiceDocument, opts: { customer: boolean; backHref: string; backText: string }): Html {
  const { invoice: inv, job, company } = doc
  const v = job.vehicle
  const vehicle = [[v.year, v.make, v.model].filter(Boolean).join(' '), v.color, v.plate].filter(Boolean).join(', ')
  const fact = (name: string, value: Html | string | null) => (value ? html`<dt>${name}</dt><dd>${value}</dd>` : '')
  const howToPay = opts.customer && inv.status === 'issued'
    ? html`<p class="invoice-pay">To pay the ${money(inv.amount_due_cents)} due, ${company.phone ? html`call ${company.name} at <a href="${`tel:${company.phone}`}">${company.phone}</a>` : html`contact ${company.name}`} and quote invoice ${inv.number}.</p>`
    : ''
  const payments = inv.payments.length
    ? html`<div class="table-scroll"><table class="invoice-payments-table"><caption>Payments</caption><thead><tr><th scope="col">Date</th>${opts.customer ? '' : html`<th scope="col">Method</th>`}<th scope="col" class="num">Amount</th></tr></thead>
<tbody>${inv.payments.map((p) => html`<tr><td>${dayTag(p.created_at, company.timeZone)}</td>${opts.customer ? '' : html`<td>${p.method}</td>`}<td class="num">${money(p.amount_cents)}</td></tr>`)}</tbody></table></div>`
    : ''
  return html`<article class="invoice-doc" aria-labelledby="h-invoice">
<p class="no-print"><a href="${opts.backHref}">${opts.backText}</a></p>
<header class="invoice-head">
<div><p class="invoice-company">${company.name}</p>${company.phone ? html`<p>${company.phone}</p>` : ''}</div>
<div><h1 id="h-invoice">Invoice ${inv.number}</h1><p>Date: ${dayTag(inv.issued_at, company.timeZone)}</p><p>Status: <strong>${INVOICE_STATUS_LABELS[inv.status]}</strong></p></div>
</header>
<dl class="job-fields invoice-facts">
${opts.customer ? '' : fact('Job', job.id)}
${opts.customer ? '' : fact('Reference', job.external_ref)}
${fact('Customer', job.customer_name)}
${fact('Vehicle', vehicle || null)}
${fact('Pickup', job.pickup)}
${fact('Destination', job.destination)}
</dl>
${linesTable(inv, `Lines of invoice ${inv.number}`)}
<dl class="job-fields invoice-totals">
<dt>Total</dt><dd>${money(inv.total_cents)}</dd>
<dt>Paid</dt><dd>${money(inv.amount_paid_cents)}</dd>
<dt>Due</dt><dd>${money(inv.amount_due_cents)}</dd>
${inv.written_off_cents ? html`<dt>Written off</dt><dd>${money(inv.written_off_cents)}</dd>` : ''}
</dl>
${payments}
${howToPay}
</article>`
}

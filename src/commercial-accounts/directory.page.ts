/**
 * The dashboard's commercial accounts directory (`/accounts`): the list, the **New account**
 * form and each account's edit page. The private fields (rates, billing address, internal
 * notes) are shown and edited here only.
 */
import { blankForm, formAlert, inputField, selectField, textareaField, type FormState, type FormValue } from '../pages/form'
import { html, type Html } from '../pages/html'
import { COMMERCIAL_ACCOUNT_KINDS, KIND_LABELS, MAX_CONTACTS, MAX_NAME, MAX_PRIVATE_TEXT, type CommercialAccountKind } from './commercial-account.model'
import { commercialAccountVersion, type CommercialAccountRow } from './commercial-account.queries'

const kindLabel = (k: string) => KIND_LABELS[k as CommercialAccountKind] ?? k

/**
 * How many contact rows a form shows: those it holds, one blank more when `blankMore` (an
 * account's page: to add a contact without scripts), at least `min`, at most 20.
 */
export function contactRows(values: Record<string, FormValue>, min: number, blankMore = true): number {
  let highest = -1
  for (const name of Object.keys(values)) {
    const m = /^contacts\.(\d+)\.(name|role|phone|email)$/.exec(name)
    if (m && String(values[name] ?? '').trim() !== '') highest = Math.max(highest, Number(m[1]))
  }
  return Math.min(MAX_CONTACTS, Math.max(min, highest + (blankMore ? 2 : 1)))
}

/** The form's values for a saved commercial account. */
export function formValuesOf(row: CommercialAccountRow): Record<string, string> {
  const values: Record<string, string> = { name: row.name, kind: row.kind, rates: row.rates ?? '', billing_address: row.billingAddress ?? '', internal_notes: row.internalNotes ?? '' }
  row.contacts.forEach((c, i) => {
    values[`contacts.${i}.name`] = c.name
    values[`contacts.${i}.role`] = c.role ?? ''
    values[`contacts.${i}.phone`] = c.phone ?? ''
    values[`contacts.${i}.email`] = c.email ?? ''
  })
  return values
}

/** The fields of a commercial account and its **Save account** button, posting to `action`. */
function accountForm(form: FormState, action: string, opts: { minContacts: number; blankMore: boolean; idempotencyKey?: string; version?: string }): Html {
  const rows = contactRows(form.values, opts.minContacts, opts.blankMore)
  const contact = (i: number) => html`<fieldset class="contact-row"><legend>Contact ${String(i + 1)}</legend>
${inputField(form, { name: `contacts.${i}.name`, label: 'Contact name', maxlength: MAX_NAME, autocomplete: 'off' })}
${inputField(form, { name: `contacts.${i}.role`, label: 'Contact role', maxlength: 100, autocomplete: 'off', hint: i === 0 ? 'e.g. dispatch desk, billing, watch commander.' : undefined })}
${inputField(form, { name: `contacts.${i}.phone`, label: 'Contact phone', type: 'tel', autocomplete: 'off' })}
${inputField(form, { name: `contacts.${i}.email`, label: 'Contact email', type: 'email', autocomplete: 'off' })}
</fieldset>`
  return html`<form method="post" action="${action}" class="account-form" novalidate>
${formAlert(form)}
${opts.idempotencyKey ? html`<input type="hidden" name="idempotency_key" value="${opts.idempotencyKey}">` : ''}
${opts.version ? html`<input type="hidden" name="version" value="${opts.version}">` : ''}
${inputField(form, { name: 'name', label: 'Name', required: true, maxlength: MAX_NAME, autocomplete: 'off' })}
${selectField(form, { name: 'kind', label: 'Kind', required: true, placeholder: 'Choose a kind', options: COMMERCIAL_ACCOUNT_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k] })) })}
<p class="field-hint">Leave a contact's fields empty to remove it; save to get another empty row (up to ${String(MAX_CONTACTS)} contacts).</p>
${Array.from({ length: rows }, (_, i) => contact(i))}
<fieldset><legend>Private (dashboard only, never in the API)</legend>
${textareaField(form, { name: 'rates', label: 'Rates', rows: 3, maxlength: MAX_PRIVATE_TEXT, hint: 'The rates agreed with this account, e.g. hook 95.00, per mile 4.50.' })}
${textareaField(form, { name: 'billing_address', label: 'Billing address', rows: 3, maxlength: MAX_PRIVATE_TEXT })}
${textareaField(form, { name: 'internal_notes', label: 'Internal notes', rows: 3, maxlength: MAX_PRIVATE_TEXT })}
</fieldset>
<button type="submit">Save account</button>
</form>`
}

/** One row of the directory table. */
function directoryRow(r: CommercialAccountRow): Html {
  const contacts = r.contacts.map((c) => html`<li>${c.name}${c.role ? html` <span class="muted">(${c.role})</span>` : ''}${c.phone ? html`<br><a href="${`tel:${c.phone}`}">${c.phone}</a>` : ''}${c.email ? html`<br><a href="${`mailto:${c.email}`}" class="break">${c.email}</a>` : ''}</li>`)
  return html`<tr data-commercial-account-id="${r.id}"><td><a href="/accounts/${r.id}">${r.name}</a></td><td>${kindLabel(r.kind)}</td><td>${contacts.length ? html`<ul class="plain-list">${contacts}</ul>` : html`<span class="muted">None</span>`}</td></tr>`
}

/** `/accounts`: the directory by name, then the New account form. */
export function directoryBody(rows: CommercialAccountRow[], form: FormState, idempotencyKey: string, done?: string): string {
  const table = rows.length
    ? html`<div class="table-scroll" role="region" aria-labelledby="accounts-caption" tabindex="0"><table class="jobs-table">
<caption id="accounts-caption">Commercial accounts, A to Z</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Contacts</th></tr></thead>
<tbody>${rows.map(directoryRow)}</tbody></table></div>`
    : html`<p class="notice notice-ok" role="status">No commercial accounts yet: add the motor clubs, police agencies and fleets you tow for below.</p>`
  return html`<h1>Commercial accounts</h1>
<p class="page-done" role="status">${done ?? ''}</p>
<p>Motor clubs, police agencies, fleets and others you work for. Jobs name theirs (the job page's <strong>Commercial account</strong>); the API shows names, kinds and contacts only.</p>
${table}
<section class="job-section" aria-labelledby="h-new-account"><h2 id="h-new-account">New account</h2>
${accountForm(form, '/accounts', { minContacts: 1, blankMore: false, idempotencyKey })}
</section>`.text
}

const FIELD_LABELS: [string, string][] = [['name', 'Name'], ['kind', 'Kind'], ['contacts', 'Contacts'], ['rates', 'Rates'], ['billing_address', 'Billing address'], ['internal_notes', 'Internal notes']]

/** The contacts of a form's values as one line each (rows left empty left out). */
function contactLines(values: Record<string, FormValue>): string[] {
  const lines: string[] = []
  for (let i = 0; i < MAX_CONTACTS + 1; i++) {
    const part = (f: string) => String(values[`contacts.${i}.${f}`] ?? '').trim()
    const line = [part('name') + (part('role') ? ` (${part('role')})` : ''), part('phone'), part('email')].filter(Boolean).join(', ')
    if (line) lines.push(line)
  }
  return lines
}

/**
 * What the saved entry holds where it differs from what was typed: shown beside a form refused
 * because someone saved the entry after it was opened, so the user can compare before saving again.
 */
export function savedNowDiffering(row: CommercialAccountRow, typed: Record<string, FormValue>): { label: string; value: string }[] {
  const saved = formValuesOf(row)
  const valueOf = (values: Record<string, FormValue>, name: string) =>
    name === 'contacts' ? contactLines(values).join('\n') : name === 'kind' ? kindLabel(String(values.kind ?? '')) : String(values[name] ?? '').trim()
  return FIELD_LABELS.filter(([name]) => valueOf(saved, name) !== valueOf(typed, name)).map(([name, label]) => ({ label, value: valueOf(saved, name) }))
}

/**
 * `/accounts/{id}`: one commercial account's edit form, carrying the version it shows (`version`:
 * the one the refused form was opened on, when it comes back with messages) and, after a save
 * refused because someone saved first, what the entry holds now where it differs from what was typed.
 */
export function accountBody(row: CommercialAccountRow, form: FormState | null, done?: string, opts: { version?: string; savedNow?: { label: string; value: string }[] } = {}): string {
  const shown = form ?? blankForm(formValuesOf(row))
  const savedNow = opts.savedNow?.length
    ? html`<section class="notice saved-now" aria-labelledby="h-saved-now"><h2 id="h-saved-now">Saved now</h2>
<p>Where the saved account differs from what you typed, it now reads:</p>
<dl class="job-fields">${opts.savedNow.map((d) => html`<dt>${d.label}</dt><dd class="pre-line">${d.value || html`<span class="muted">(empty)</span>`}</dd>`)}</dl></section>`
    : ''
  return html`<p class="breadcrumb"><a href="/accounts">Back to the directory</a></p>
<h1>${row.name}</h1>
<p class="page-done" role="status">${done ?? ''}</p>
<p class="meta">${kindLabel(row.kind)} · ${row.id}</p>
${savedNow}
${accountForm(shown, `/accounts/${row.id}`, { minContacts: 1, blankMore: true, version: opts.version ?? commercialAccountVersion(row) })}`.text
}

/**
 * Forms that survive a refusal: every field is labelled, says its problem beside itself
 * (`aria-describedby`, `aria-invalid`) and keeps what was typed, and the form's `role="alert"`
 * summary says what went wrong. A route renders the form from a FormState, and after a refusal
 * renders the same form from the state `refusedForm` makes of the error and the posted fields.
 *
 * ```ts
 * const view = (form: FormState) => html`<form method="post" action="/jobs/new">${formAlert(form)}
 *   ${inputField(form, { name: 'customer.name', label: 'Customer name', required: true })}
 *   ${checkboxField(form, { name: 'sms_consent', label: 'Texts allowed' })}
 *   <button type="submit">Create job</button></form>`
 * // GET:  view(blankForm())
 * // POST: try { createJob(...) } catch (err) { return htmlResponse(page(view(refusedForm(err, body))), { status: 422 }) }
 * ```
 *
 * Labels are the words pages.md gives in bold, passed by the caller, and nothing else (a test's
 * `getByLabel('Customer name', { exact: true })` finds the field). A required field gets a `*`
 * after its label, hidden from screen readers (which announce "required" from the attribute).
 * Password fields never echo what was typed. The markup is what web/shared/forms.ts enhances:
 * a control `#f-<name>`, its message `#f-<name>-error`, the summary `[data-form-alert]`.
 */
import { AppError } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { attrs, html, type Html } from './html'

/** A value as a form holds it: text, a list (checkboxes named `name[]`), or nothing. */
export type FormValue = string | string[] | undefined

/** What a form shows: the values typed, a message per field (by name), and the summary. */
export interface FormState {
  values: Record<string, FormValue>
  errors: Record<string, string>
  alert?: string
}

/** A form with nothing typed (or these values) and no message. */
export function blankForm(values: Record<string, FormValue> = {}): FormState {
  return { values, errors: {} }
}

/** The text values of a posted form (files left out): what the re-rendered form shows again. */
export function postedValues(fields: FormFields): Record<string, FormValue> {
  const values: Record<string, FormValue> = {}
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') values[name] = value
    else if (Array.isArray(value)) values[name] = value.filter((v): v is string => typeof v === 'string')
  }
  return values
}

const FIELD_PROBLEMS_ALERT = 'Some fields need attention; each says why beside it.'

/**
 * The state to re-render a form with after an operation refused it: a 422's fields (`details.fields`,
 * by the form's field names, e.g. `customer.name`) beside their fields, any other AppError's message
 * as the summary. Anything else is not a refusal and is thrown again.
 */
export function refusedForm(err: unknown, values: Record<string, FormValue> | FormFields): FormState {
  if (!(err instanceof AppError)) throw err
  const state: FormState = { values: postedValues(values as FormFields), errors: {} }
  const fields = (err.details.fields ?? []) as { path: string; message: string }[]
  for (const f of fields) state.errors[f.path] ??= f.message
  state.alert = fields.length ? FIELD_PROBLEMS_ALERT : err.message
  return state
}

/**
 * The form's summary: an element with `role="alert"`, empty (and hidden) until there is something
 * to say. Saying something, it takes the focus when the page loads (`autofocus`, no script
 * needed): a screen reader reads it and the next Tab leads on from the refused form.
 */
export function formAlert(form: FormState): Html {
  const text = form.alert ?? (Object.keys(form.errors).length ? FIELD_PROBLEMS_ALERT : '')
  return text
    ? html`<div class="form-alert" role="alert" data-form-alert tabindex="-1" autofocus>${text}</div>`
    : html`<div class="form-alert" role="alert" data-form-alert></div>`
}

/** The id of a field's control: `f-` and its name, with anything but letters, digits, `-` and `_` as `-`. */
export function fieldId(name: string): string {
  return `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`
}

/** What every field takes. */
interface FieldBase {
  /** The form field's name (what the route reads). */
  name: string
  /** The visible label: pages.md's bold words. */
  label: string
  /** A sentence under the label (format, example). */
  hint?: string
  required?: boolean
}

/** The `*` after a required field's label: outside the label, so the label is exactly the caller's words, and hidden from screen readers. */
const requiredMark = (f: FieldBase) => (f.required ? html`<span class="required" aria-hidden="true"> *</span>` : '')

/** Label, hint, control and message of one field, wired together. */
function fieldParts(form: FormState, f: FieldBase) {
  const id = fieldId(f.name)
  const error = form.errors[f.name] ?? form.errors[f.name.replace(/\[\]$/, '')]
  const described = [f.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')
  return {
    id,
    label: html`<label for="${id}">${f.label}</label>${requiredMark(f)}`,
    hint: f.hint ? html`<p class="field-hint" id="${id}-hint">${f.hint}</p>` : '',
    control: { id, name: f.name, required: f.required ?? false, 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': described || undefined },
    error: html`<p class="field-error" id="${id}-error">${error ?? ''}</p>`,
  }
}

/** The text of a value (the first of a list). */
const textOf = (v: FormValue) => (Array.isArray(v) ? v[0] ?? '' : v ?? '')

/** A text-like input field: text, email, tel, password (never echoed), number, date, search, url. */
export function inputField(form: FormState, f: FieldBase & {
  type?: 'text' | 'email' | 'tel' | 'password' | 'number' | 'date' | 'datetime-local' | 'search' | 'url'
  autocomplete?: string
  inputmode?: 'text' | 'numeric' | 'decimal' | 'tel' | 'email' | 'url' | 'search'
  placeholder?: string
  maxlength?: number
}): Html {
  const p = fieldParts(form, f)
  const type = f.type ?? 'text'
  const value = type === 'password' ? undefined : textOf(form.values[f.name])
  return html`<div class="field">${p.label}${p.hint}<input${attrs({ ...p.control, type, value, autocomplete: f.autocomplete, inputmode: f.inputmode, placeholder: f.placeholder, maxlength: f.maxlength })}>${p.error}</div>`
}

/** A multi-line text field. */
export function textareaField(form: FormState, f: FieldBase & { rows?: number; maxlength?: number }): Html {
  const p = fieldParts(form, f)
  return html`<div class="field">${p.label}${p.hint}<textarea${attrs({ ...p.control, rows: f.rows ?? 4, maxlength: f.maxlength })}>${textOf(form.values[f.name])}</textarea>${p.error}</div>`
}

/** A select; the option whose value was chosen stays selected. `placeholder` adds a first, empty option. */
export function selectField(form: FormState, f: FieldBase & { options: { value: string; label: string }[]; placeholder?: string }): Html {
  const p = fieldParts(form, f)
  const chosen = textOf(form.values[f.name])
  const options = f.options.map((o) => html`<option${attrs({ value: o.value, selected: o.value === chosen })}>${o.label}</option>`)
  return html`<div class="field">${p.label}${p.hint}<select${attrs(p.control)}>${f.placeholder !== undefined ? html`<option value="">${f.placeholder}</option>` : ''}${options}</select>${p.error}</div>`
}

/**
 * A checkbox, label after the box. Checked when the form holds its value (`on` unless given),
 * or a list holding it (a group of boxes named `name[]`, each with its own value and `id`).
 */
export function checkboxField(form: FormState, f: FieldBase & { value?: string; id?: string }): Html {
  const p = fieldParts(form, f)
  const value = f.value ?? 'on'
  const held = form.values[f.name.replace(/\[\]$/, '')] ?? form.values[f.name]
  const checked = Array.isArray(held) ? held.includes(value) : held === value
  const id = f.id ?? p.id
  const label = html`<label for="${id}">${f.label}</label>${requiredMark(f)}`
  return html`<div class="field field-check"><input${attrs({ ...p.control, id, type: 'checkbox', value, checked })}>${label}${p.hint}${p.error}</div>`
}

/**
 * A group of checkboxes posted as one list (`name` ending in `[]`, read as the name without
 * brackets): a fieldset whose legend names the group, each box labelled by its own words (an
 * option's `hint` is read after its label), and one message for the group, beside it, for a
 * problem at `name` or at any `name.<index>`.
 */
export function checkboxGroup(form: FormState, f: { name: string; legend: string; hint?: string; options: { value: string; label: string; hint?: string }[] }): Html {
  const base = f.name.replace(/\[\]$/, '')
  const id = fieldId(base)
  const error = form.errors[base] ?? Object.entries(form.errors).find(([path]) => path.startsWith(`${base}.`))?.[1]
  const held = form.values[base] ?? form.values[f.name]
  const chosen = Array.isArray(held) ? held : held === undefined ? [] : [held]
  const boxes = f.options.map((o, i) => {
    const boxId = i === 0 ? id : `${id}-${i}`
    const described = [f.hint ? `${id}-hint` : '', o.hint ? `${boxId}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')
    return html`<div class="field field-check"><input${attrs({ id: boxId, type: 'checkbox', name: f.name, value: o.value, checked: chosen.includes(o.value), 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': described || undefined })}><label for="${boxId}">${o.label}</label>${o.hint ? html`<span class="field-hint" id="${boxId}-hint">${o.hint}</span>` : ''}</div>`
  })
  return html`<fieldset class="field-group"><legend>${f.legend}</legend>${f.hint ? html`<p class="field-hint" id="${id}-hint">${f.hint}</p>` : ''}${boxes}<p class="field-error" id="${id}-error">${error ?? ''}</p></fieldset>`
}

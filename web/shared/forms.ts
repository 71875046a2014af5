/**
 * Enhancing the server's forms without replacing them: every form works with no script (it
 * posts, and the server answers with the next page or the same form with its messages); a
 * script adds only what it can do better.
 *
 * - `enhanceForm(form)`: one submission at a time (a second click while the first is on its way
 *   does nothing; the form carries `aria-busy="true"` meanwhile).
 * - `enhanceForm(form, { submit })`: the form is sent by `submit` (fetchJson, say) and the page
 *   stays; a refusal (ApiError) is shown the way the server shows it, each message beside its
 *   field and the summary in the form's `role="alert"` element; what was typed stays.
 * - A file input with `data-max-bytes` (and its message in `data-too-large`) refuses a file over
 *   that size beside the field, before anything is sent: the server would refuse the whole body
 *   (413) with no page to show the message on.
 * - `keepTyped(forms)` / `restoreTyped()`: what was typed survives the session ending. A form
 *   posted without a live session is answered with the sign-in page (and back to the form's page
 *   after); a page whose session ended while it was open goes there too. What its fields held is
 *   kept in the tab's sessionStorage on the way, and put back when the page shows again straight
 *   after signing in. Any other page shown next drops it.
 *
 * The markup is src/pages/form.ts's: a control `#f-<name>` has its message in `#f-<name>-error`,
 * and the form's summary is its `[data-form-alert]` element.
 */
import { ApiError } from './fetch-json'

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement

/** The first control of the form named `name` (a radio group gives its first button). */
function controlNamed(form: HTMLFormElement, name: string): Control | null {
  const found = form.elements.namedItem(name) ?? form.elements.namedItem(`${name}[]`)
  const first = found instanceof RadioNodeList ? found[0] : found
  return first instanceof HTMLInputElement || first instanceof HTMLSelectElement || first instanceof HTMLTextAreaElement ? first : null
}

/** The form's summary element, made (first in the form) when the server rendered none. */
function alertOf(form: HTMLFormElement): HTMLElement {
  let alert = form.querySelector<HTMLElement>('[data-form-alert]')
  if (!alert) {
    alert = document.createElement('div')
    alert.setAttribute('role', 'alert')
    alert.className = 'form-alert'
    alert.dataset.formAlert = ''
    form.prepend(alert)
  }
  return alert
}

/** Adds or removes an id in a control's aria-describedby. */
function describedBy(control: Control, id: string, on: boolean): void {
  const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean))
  if (on) ids.add(id)
  else ids.delete(id)
  if (ids.size) control.setAttribute('aria-describedby', [...ids].join(' '))
  else control.removeAttribute('aria-describedby')
}

/** Removes every message a refusal put on the form. */
export function clearRefusal(form: HTMLFormElement): void {
  alertOf(form).textContent = ''
  for (const control of form.querySelectorAll<Control>('[aria-invalid="true"]')) {
    control.removeAttribute('aria-invalid')
    const error = control.id ? document.getElementById(`${control.id}-error`) : null
    if (error) {
      error.textContent = ''
      describedBy(control, error.id, false)
    }
  }
}

/** Shows a refusal on the form: each named field's message beside it, the rest and the summary in the alert; focuses the first field named. */
export function showRefusal(form: HTMLFormElement, err: ApiError): void {
  clearRefusal(form)
  const unplaced: string[] = []
  let first: Control | null = null
  for (const problem of err.fields) {
    const control = controlNamed(form, problem.path)
    if (!control) {
      unplaced.push(`${problem.path}: ${problem.message}`)
      continue
    }
    first ??= control
    control.setAttribute('aria-invalid', 'true')
    if (!control.id) control.id = `f-${problem.path.replace(/[^A-Za-z0-9_-]/g, '-')}`
    let error = document.getElementById(`${control.id}-error`)
    if (!error) {
      error = document.createElement('p')
      error.id = `${control.id}-error`
      error.className = 'field-error'
      ;(control.closest('.field') ?? control).append(error)
    }
    error.textContent = problem.message
    describedBy(control, error.id, true)
  }
  const summary = err.fields.length && !unplaced.length ? 'Some fields need attention; each says why beside it.' : err.message
  alertOf(form).textContent = [summary, ...unplaced].join(' ')
  first?.focus()
}

/** The file inputs holding a file over their `data-max-bytes`, each with its message. */
function oversizedFiles(form: HTMLFormElement): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = []
  for (const input of form.querySelectorAll<HTMLInputElement>('input[type="file"][data-max-bytes]')) {
    const max = Number(input.dataset.maxBytes)
    if ([...(input.files ?? [])].some((f) => f.size > max)) out.push({ path: input.name, message: input.dataset.tooLarge ?? `is larger than ${Math.floor(max / 1_000_000)} MB` })
  }
  return out
}

const TYPED_KEY = 'towline.typed'
/** How long what was typed is kept for the way through the sign-in page. */
const TYPED_KEPT_MS = 30 * 60_000
/** Fields whose value is put back: what a person types or picks, never secrets, files or the form's own hidden fields. */
const KEPT_INPUTS = new Set(['text', 'email', 'tel', 'number', 'search', 'url', 'date', 'time', 'datetime-local'])

/** A kept field: its name, which of the form's fields of that name it is, and its value. */
type KeptField = [name: string, nth: number, value: string]
interface Typed { path: string; user: string; at: number; forms: { action: string; fields: KeptField[] }[] }

/**
 * The hidden fields that say what the page showed when it was drawn (the job's status and unit,
 * the account's version, the draft's count of invoices): kept and put back as they were, so that
 * a form sent after signing in is still refused when someone else changed the thing meanwhile.
 */
const GUARD_FIELDS = new Set(['version', 'expected_status', 'expected_unit_id', 'invoices_seen'])

/** Who is signed in, as the dashboard's header names them: what was typed goes back only to the one who typed it. */
const signedInAs = () => document.querySelector('.site-user span')?.textContent?.trim() ?? ''

/** What a select shows when nothing was chosen: its option marked selected, else its first. */
const defaultOf = (select: HTMLSelectElement) => ([...select.options].find((o) => o.defaultSelected) ?? select.options[0])?.value ?? ''

/** The fields of a form that hold something other than what the page was drawn with (and its guard fields), in order. */
function changedFields(form: HTMLFormElement): { fields: KeptField[]; typed: boolean } {
  const fields: KeptField[] = []
  const seen = new Map<string, number>()
  let typed = false
  for (const el of form.elements) {
    if (!(el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement || el instanceof HTMLSelectElement) || !el.name) continue
    const nth = seen.get(el.name) ?? 0
    seen.set(el.name, nth + 1)
    const changed = el instanceof HTMLSelectElement ? el.value !== defaultOf(el)
      : el instanceof HTMLTextAreaElement || KEPT_INPUTS.has(el.type) ? el.value !== el.defaultValue
      : false
    if (changed) typed = true
    if (changed || (el instanceof HTMLInputElement && el.type === 'hidden' && GUARD_FIELDS.has(el.name))) fields.push([el.name, nth, el.value])
  }
  return { fields, typed }
}

/** Keeps what was typed in these forms for the way through the sign-in page (see the top of this file). */
export function keepTyped(forms: Iterable<HTMLFormElement>): void {
  const kept: Typed = { path: location.pathname, user: signedInAs(), at: Date.now(), forms: [] }
  for (const form of forms) {
    const { fields, typed } = changedFields(form)
    if (typed) kept.forms.push({ action: new URL(form.action, location.href).pathname, fields })
  }
  try {
    if (kept.forms.length) sessionStorage.setItem(TYPED_KEY, JSON.stringify(kept))
    else sessionStorage.removeItem(TYPED_KEY)
  } catch {}
}

/** A query without its `done` (what the last form did): coming back, the page must not say it again. */
function withoutDone(search: string): string {
  const params = new URLSearchParams(search)
  params.delete('done')
  const rest = params.toString()
  return rest ? `?${rest}` : ''
}

/** Leaves for the sign-in page (the session ended while the page was open), keeping what was typed for the way back. */
export function toSignIn(): void {
  keepTyped(document.querySelectorAll<HTMLFormElement>('form'))
  location.assign(`/login?next=${encodeURIComponent(location.pathname + withoutDone(location.search))}`)
}

/**
 * Puts back what keepTyped kept, when this page is the one it was typed on and it shows straight
 * after the sign-in page; whatever happens, it is kept no longer. Says so in a status. Returns
 * whether anything was put back.
 */
export function restoreTyped(): boolean {
  let kept: Typed | null = null
  try {
    kept = JSON.parse(sessionStorage.getItem(TYPED_KEY) ?? 'null') as Typed | null
    sessionStorage.removeItem(TYPED_KEY)
  } catch {}
  const cameFrom = document.referrer ? new URL(document.referrer).pathname : ''
  // Only to the page it was typed on, for the same person, straight after signing in, and not long after.
  if (!kept || kept.path !== location.pathname || kept.user !== signedInAs() || !kept.user || cameFrom !== '/login' || !(Date.now() - kept.at < TYPED_KEPT_MS)) return false
  let restored = 0
  let lost = 0
  for (const { action, fields } of kept.forms) {
    const form = [...document.forms].find((f) => new URL(f.action, location.href).pathname === action)
    for (const [name, nth, value] of fields) {
      // The nth field of that name (an invoice draft's lines share theirs), where the page has it.
      const el = form ? [...form.elements].filter((e) => (e as HTMLInputElement).name === name)[nth] : undefined
      if (el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement || el instanceof HTMLSelectElement) {
        el.value = value
        if (!(el instanceof HTMLInputElement && el.type === 'hidden')) restored++
      } else if (!GUARD_FIELDS.has(name)) lost++
    }
  }
  if (restored || lost) {
    const status = document.createElement('p')
    status.className = lost ? 'notice' : 'notice notice-ok'
    status.setAttribute('role', 'status')
    status.textContent = lost
      ? `Signed in again: part of what you typed is back in its form; ${lost} field${lost === 1 ? '' : 's'} the page no longer has could not be. Nothing was sent; check it before sending.`
      : 'Signed in again: what you typed before is back in its form. Nothing was sent; send it when it is ready.'
    ;(document.querySelector('main') ?? document.body).prepend(status)
  }
  return restored > 0
}

/** What `enhanceForm` may do instead of the browser's own submission. */
export interface EnhanceOptions {
  /** Sends the form's data; its ApiError is shown on the form. Without it the browser submits as usual. */
  submit?: (data: FormData, form: HTMLFormElement) => Promise<void>
  /** Keeps what the form sent for the way through the sign-in page (keepTyped): the dashboard's forms, whose session may end. */
  keepTyped?: boolean
}

const NO_CONNECTION = 'No connection: nothing was sent. What you typed is kept; send it again when the connection is back.'

/** The characters of `text` that take two UTF-16 units (emoji, rarer scripts). */
function astral(text: string): number {
  let n = 0
  for (const ch of text) if (ch.length === 2) n++
  return n
}

/**
 * A field's `maxlength` counts UTF-16 units in browsers, the server counts characters: an emoji
 * is two units and one character, so a 1,000-character message held only 500 emoji. While the
 * field is typed in (or pasted into), its maxlength is the limit plus the characters that take
 * two units.
 */
function countCharacters(form: HTMLFormElement): void {
  for (const field of form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input[maxlength], textarea[maxlength]')) {
    const limit = Number(field.dataset.maxChars ?? field.maxLength)
    if (!(limit > 0)) continue
    field.dataset.maxChars = String(limit)
    // Before text goes in (typed, pasted, dropped): room for as many of its characters as the
    // limit leaves, in the units they take (the browser cuts what goes over). After: what is there.
    field.addEventListener('beforeinput', (event) => {
      const e = event as InputEvent
      const text = e.data ?? e.dataTransfer?.getData('text/plain')
      // Nothing said of what comes (a deletion, an undo): left as it is.
      if (text === undefined || text === null) return
      let start = field.value.length
      let end = start
      try { start = field.selectionStart ?? start; end = field.selectionEnd ?? start } catch { /* email and number fields have no selection */ }
      const kept = field.value.slice(0, start) + field.value.slice(end)
      const room = Math.max(0, limit - [...kept].length)
      const incoming = [...text].slice(0, room).join('')
      field.maxLength = kept.length + incoming.length
    })
    field.addEventListener('input', () => { field.maxLength = limit + astral(field.value) })
    field.maxLength = limit + astral(field.value)
  }
}

/** Enhances a server-rendered form (see the top of this file); safe to call once per form. */
export function enhanceForm(form: HTMLFormElement, opts: EnhanceOptions = {}): void {
  if (form.dataset.enhanced !== undefined) return
  form.dataset.enhanced = ''
  countCharacters(form)
  const busy = (on: boolean) => {
    if (on) form.setAttribute('aria-busy', 'true')
    else form.removeAttribute('aria-busy')
  }
  form.addEventListener('submit', (event) => {
    if (form.getAttribute('aria-busy') === 'true') {
      event.preventDefault()
      return
    }
    const tooLarge = oversizedFiles(form)
    if (tooLarge.length) {
      event.preventDefault()
      showRefusal(form, new ApiError(413, 'payload_too_large', 'Nothing was sent.', { fields: tooLarge }))
      return
    }
    // A browser that knows it has no connection: sent, the tab would become the browser's error
    // page and what was typed would be lost. (Asking the service first would delay every
    // submission by a round trip; a connection that fails unnoticed still ends on that page.)
    if (!navigator.onLine) {
      event.preventDefault()
      showRefusal(form, new ApiError(0, 'no_connection', NO_CONNECTION))
      return
    }
    busy(true)
    if (!opts.submit) {
      // Sent by the browser: should the session have ended, the answer is the sign-in page, and this comes back after it.
      if (opts.keepTyped) keepTyped([form])
      return
    }
    event.preventDefault()
    const data = new FormData(form, event.submitter)
    opts.submit(data, form).then(
      () => clearRefusal(form),
      (err) => showRefusal(form, err instanceof ApiError ? err : new ApiError(0, 'script_error', 'Something went wrong on this page; reload it and try again.')),
    ).finally(() => busy(false))
  })
  // Back to a page kept in the browser's cache: the submission it was busy with is long over.
  window.addEventListener('pageshow', (event) => { if (event.persisted) busy(false) })
}

/**
 * A page that comes back with a refusal (the server's answer to a form post: its alert filled
 * in) takes the keyboard's focus to that alert, so a screen reader reads it and the next Tab
 * leads on from the form that was refused, instead of starting again at the top of the page.
 */
export function focusRefusal(): boolean {
  const alert = [...document.querySelectorAll<HTMLElement>('[role="alert"]')].find((el) => (el.textContent ?? '').trim() !== '' && !el.hidden)
  if (!alert) return false
  if (!alert.hasAttribute('tabindex')) alert.tabIndex = -1
  alert.focus()
  return true
}

/**
 * A page that comes back after a form was done (`?done=` in its address: "Note added.", "Status
 * changed.") takes the keyboard's focus to the words saying so, unless a refusal took it: the
 * message was in the page from the start, so a screen reader would not announce it, and the
 * keyboard would start again at the top of the page.
 */
export function focusDone(): void {
  if (document.activeElement && document.activeElement !== document.body) return
  // What the server marked to take focus in the page it answered with: an outcome (a check's
  // result, an import's count) or the field to go on at (the invoice line just added).
  const drawn = document.querySelector<HTMLElement>('[data-focus-on-load]')
  if (!drawn && !new URLSearchParams(location.search).has('done')) return
  const done = drawn ?? [...document.querySelectorAll<HTMLElement>('.page-done[role="status"], .form-done[role="status"]')].find((el) => (el.textContent ?? '').trim() !== '' && !el.hidden)
  if (!done) return
  if (!done.hasAttribute('tabindex')) done.tabIndex = -1
  done.focus()
}

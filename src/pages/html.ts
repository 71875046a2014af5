/**
 * Server-side HTML without a template engine: the `html` tagged template escapes every value it
 * is given, so a customer's name, a note or a query parameter can never become markup.
 *
 * ```ts
 * html`<p class="who">${job.customerName}</p><a href="/jobs/${job.id}">Open</a>`
 * html`<ul>${units.map((u) => html`<li>${u.name}</li>`)}</ul>`      // lists: arrays of Html
 * html`<input${attrs({ name: 'phone', value: typed, required: true, 'aria-invalid': bad && 'true' })}>`
 * ```
 *
 * - A value is escaped (`& < > " '`), so it is safe as element text and inside a quoted
 *   attribute. An attribute value must be quoted: `href=${url}` throws when rendered.
 * - `Html` (from `html`, `raw`, `attrs` and the kit's helpers) is inserted as it is, and so is each
 *   `Html` in an array; `null`, `undefined` and `false` insert nothing (`cond && html`...``).
 * - `raw(text)` marks trusted markup (a constant, an icon); never pass it anything a user typed.
 * - Nothing here makes a URL safe: an attribute holding a URL someone typed still needs its
 *   scheme checked (the pages' policy blocks `javascript:` URLs, but do not rely on it alone).
 */
import { escapeHtml } from '../platform/error-page'
import { dayIn, isoTimeText } from '../platform/time-zone'

/** Markup that is already safe to insert: made by `html`, `raw` or `attrs`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

/** What may be interpolated into `html`: Html as is, text and numbers escaped, nothing for null/undefined/false, arrays item by item. */
export type HtmlValue = Html | string | number | false | null | undefined | readonly HtmlValue[]

/** Turns an interpolated value into safe markup. */
function render(value: unknown): string {
  if (value instanceof Html) return value.text
  if (value === null || value === undefined || value === false) return ''
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

// An attribute name written right before the value: `href=${x}` (unquoted, so a space in the
// value would start a new attribute). `a = ${x}` in text does not match.
const UNQUOTED_ATTRIBUTE = /\s[a-zA-Z_:][-a-zA-Z0-9_:.]*=$/

// A template's strings are the same array at every call from one place: checked once each.
const checked = new WeakSet<TemplateStringsArray>()

/** Throws when a template puts a value where an unquoted attribute value goes. */
function checkTemplate(strings: TemplateStringsArray): void {
  if (checked.has(strings)) return
  for (let i = 0; i < strings.length - 1; i++) {
    if (UNQUOTED_ATTRIBUTE.test(strings[i]!)) throw new Error(`html: quote the attribute value after "${strings[i]!.slice(-40)}"`)
  }
  checked.add(strings)
}

/** Builds markup from a template, escaping every interpolated value (see the top of this file). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  checkTemplate(strings)
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return new Html(out)
}

/** Marks trusted markup as safe to insert; never give it anything a user typed. */
export function raw(text: string): Html {
  return new Html(text)
}

const ATTRIBUTE_NAME = /^[a-zA-Z_:][-a-zA-Z0-9_:.]*$/

/**
 * Renders attributes, each with a leading space: text and numbers as `name="escaped value"`,
 * `true` as a bare `name`, and nothing for `false`, `null` or `undefined`.
 */
export function attrs(attributes: Record<string, string | number | boolean | null | undefined>): Html {
  let out = ''
  for (const [name, value] of Object.entries(attributes)) {
    if (!ATTRIBUTE_NAME.test(name)) throw new Error(`attrs: "${name}" is not an attribute name`)
    if (value === null || value === undefined || value === false) continue
    out += value === true ? ` ${name}` : ` ${name}="${escapeHtml(String(value))}"`
  }
  return new Html(out)
}

/** Makes the Response of a page: UTF-8 HTML with the given status (200 by default) and headers. */
export function htmlResponse(page: Html, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(page.text, { status: init.status ?? 200, headers: { ...init.headers, 'content-type': 'text/html; charset=utf-8' } })
}

/**
 * A time for people, with the exact instant for machines: `<time datetime="…">2026-11-21 09:00 PST</time>`,
 * in the company's `zone` with its abbreviation, as every page shows times: the same on every
 * page and every screen, unambiguous in the hour a fall-back day has twice, and without a script.
 */
export function timeTag(isoText: string, zone: string): Html {
  return html`<time${attrs({ datetime: isoText })}>${isoTimeText(isoText, zone)}</time>`
}

/** A day for people (an invoice's date): `<time datetime="…">2026-11-21</time>`, the day it was in the company's `zone`. */
export function dayTag(isoText: string, zone: string): Html {
  const ms = Date.parse(isoText)
  return html`<time${attrs({ datetime: isoText })}>${Number.isFinite(ms) ? dayIn(ms, zone) : isoText}</time>`
}

import { requirePermission } from '../accounts/actor'
import { AppError, validationFailed } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { templateFor } from './queue-text'
import { charCount } from '../platform/chars'
import { MAX_COMPANY_NAME } from '../accounts/names'
import { inTransaction } from '../db/client'
import { formVersion } from '../platform/form-version'
import { DEFAULT_TEMPLATES, isTemplateName, placeholdersOf, renderTemplate, smsSegments, TEMPLATE_NAMES, templateProblem, type TemplateName } from './templates'

/** The longest text Twilio takes, in characters. */
const MAX_TEXT_CHARS = 1600

/** The longest text a wording can make: every placeholder at the longest it can be (a 100-character company name, a 255-character reference, a pickup cut at 60). */
function longestText(ctx: OperationContext, text: string): string {
  const link = (kind: string) => `${ctx.links.publicUrl}/${kind}/${SAMPLE_TOKEN}`
  return renderTemplate(text, {
    company: 'x'.repeat(MAX_COMPANY_NAME), pickup: 'x'.repeat(60), tracking_url: link('t'), driver_url: link('d'),
    eta: ', arriving in about 23 h 59 min', job_ref: 'x'.repeat(255),
  })
}

/** A template as the owner sees it: its wording now (the account's own, else the default) and what it may hold. */
export interface TemplateView {
  name: TemplateName
  text: string
  /** True when the account has its own wording (Reset to default brings the default back). */
  own: boolean
  default: string
  placeholders: readonly string[]
}

/** What a template's form was drawn with, in 22 characters: a save over a later save is refused (setTemplate's `expectedVersion`). */
export function templateVersion(text: string): string {
  return formVersion(text)
}

/** The template of this name, else 404 naming those that exist. */
function templateNamed(name: string): TemplateName {
  if (!isTemplateName(name)) throw new AppError('not_found', `No text template is named "${name}"; the templates are ${TEMPLATE_NAMES.join(', ')}.`, { name })
  return name
}

/** Lists the account's text templates with their current wording. */
export function listTemplates(ctx: OperationContext): TemplateView[] {
  requirePermission(ctx.actor, 'settings:manage')
  return TEMPLATE_NAMES.map((name) => {
    const text = templateFor(ctx.db, ctx.account.id, name)
    return { name, text, own: text !== DEFAULT_TEMPLATES[name], default: DEFAULT_TEMPLATES[name], placeholders: placeholdersOf(name) }
  })
}

/** The refusal of wording whose texts, filled at their longest, are `filled` characters long: more than Twilio takes; or null. */
function tooLongFilled(filled: number): string | null {
  return filled > MAX_TEXT_CHARS ? `must make texts of at most ${MAX_TEXT_CHARS.toLocaleString('en-US')} characters once its placeholders are filled (what Twilio takes); with the longest company name, reference and pickup this one makes ${filled.toLocaleString('en-US')}` : null
}

/**
 * Sets the account's own wording of a template: texts queued from now on use it. Refused (422,
 * field `text`) when empty, too long, or holding a placeholder that template's texts cannot fill.
 */
export function setTemplate(ctx: OperationContext, name: string, text: string, expectedVersion?: string): TemplateView {
  requirePermission(ctx.actor, 'settings:manage')
  const template = templateNamed(name)
  const wording = text.trim()
  // The wording, then what it writes: placeholders filled with sample values of real length must
  // still fit in one message Twilio takes (1,600 characters).
  const problem = templateProblem(template, wording) ?? tooLongFilled(charCount(longestText(ctx, wording)))
  // "must ..." reads after "it"; "{x} is not a placeholder ..." is a sentence of its own.
  if (problem) throw validationFailed([{ path: 'text', message: problem }], `The ${template} text was not saved: ${problem.startsWith('must') ? `it ${problem}` : problem}.`)
  inTransaction(ctx.db, () => {
    const saved = templateFor(ctx.db, ctx.account.id, template)
    // Saving what is there writes nothing and is never stale (the same form sent twice).
    if (saved === wording) return
    if (expectedVersion !== undefined && templateVersion(saved) !== expectedVersion) {
      throw new AppError('conflict', `Someone else saved the ${template} text after this page was opened; nothing was saved.`, { changed_since_opened: true, saved_text: saved })
    }
    ctx.db.$client.query('INSERT INTO text_templates (account_id, name, body, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id, name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at')
      .run(ctx.account.id, template, wording, ctx.clock.now())
  })
  return { name: template, text: wording, own: wording !== DEFAULT_TEMPLATES[template], default: DEFAULT_TEMPLATES[template], placeholders: placeholdersOf(template) }
}

/** Drops the account's own wording of a template: its texts use the default again. With `expectedVersion`, refused (409) when someone saved other wording after the page was opened. */
export function resetTemplate(ctx: OperationContext, name: string, expectedVersion?: string): TemplateView {
  requirePermission(ctx.actor, 'settings:manage')
  const template = templateNamed(name)
  inTransaction(ctx.db, () => {
    const saved = templateFor(ctx.db, ctx.account.id, template)
    if (saved === DEFAULT_TEMPLATES[template]) return
    if (expectedVersion !== undefined && templateVersion(saved) !== expectedVersion) {
      throw new AppError('conflict', `Someone else saved the ${template} text after this page was opened; nothing was reset.`, { changed_since_opened: true, saved_text: saved })
    }
    ctx.db.$client.query('DELETE FROM text_templates WHERE account_id = ? AND name = ?').run(ctx.account.id, template)
  })
  return { name: template, text: DEFAULT_TEMPLATES[template], own: false, default: DEFAULT_TEMPLATES[template], placeholders: placeholdersOf(template) }
}

/** A token of a job link's length, so a preview is as long as a real text. */
const SAMPLE_TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWx'

/** A wording filled with sample values (this account's name, links of real length), and the segments it costs. */
export function previewTemplate(ctx: OperationContext, text: string): { text: string } & ReturnType<typeof smsSegments> {
  const filled = renderTemplate(text, {
    company: ctx.account.name, pickup: 'I-5 N at exit 299B', tracking_url: `${ctx.links.publicUrl}/t/${SAMPLE_TOKEN}`,
    driver_url: `${ctx.links.publicUrl}/d/${SAMPLE_TOKEN}`, eta: ', arriving in about 25 min', job_ref: 'K7Q2MX',
  })
  return { text: filled, ...smsSegments(filled) }
}

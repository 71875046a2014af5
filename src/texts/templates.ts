import { charCount } from '../platform/chars'

/**
 * The default text templates, one per event, in one place. Plain GSM-7 (no curly quotes or
 * emoji) so a text stays one segment where it can; the link is the only part whose length
 * varies. `{name}` placeholders are filled by `renderTemplate`.
 */
export const DEFAULT_TEMPLATES = {
  request_received: '{company}: we got your request for roadside help. Follow it here: {tracking_url}',
  status_pending: '{company}: we got your request and will confirm it shortly. {tracking_url}',
  status_confirmed: '{company}: your request is confirmed. We will text you when a truck is on the way. {tracking_url}',
  status_dispatched: '{company}: a truck has been assigned to you{eta}. Track it: {tracking_url}',
  status_en_route: '{company}: your driver is on the way{eta}. Track: {tracking_url}',
  status_on_scene: '{company}: your driver has arrived. {tracking_url}',
  status_towing: '{company}: your vehicle is on the truck and on its way. {tracking_url}',
  status_at_destination: '{company}: your vehicle has arrived at the destination. {tracking_url}',
  status_completed: '{company}: your job is complete. Thank you! Tell us how we did: {tracking_url}',
  status_cancelled: '{company}: your request has been cancelled. Reply to this text if you still need help.',
  status_goa: '{company}: our driver could not find you or the vehicle at the pickup. Reply to this text if you still need help.',
  driver_job_link: '{company}: job {job_ref} at {pickup}. Open: {driver_url}',
  driver_job_removed: '{company}: job {job_ref} at {pickup} was taken off you. No action needed.',
} as const

export type TemplateName = keyof typeof DEFAULT_TEMPLATES

/** Fills a template's placeholders; unknown placeholders become empty. */
export function renderTemplate(template: string, values: Record<string, string | undefined>): string {
  return template.replace(/\{([a-z_]+)\}/g, (_, k: string) => values[k] ?? '').replace(/\s+/g, ' ').trim()
}

/** Every template's name, in the order the Settings page and `towline texts templates` list them. */
export const TEMPLATE_NAMES = Object.keys(DEFAULT_TEMPLATES) as TemplateName[]

/** Tells whether a name is one of the templates. */
export function isTemplateName(name: string): name is TemplateName {
  return Object.hasOwn(DEFAULT_TEMPLATES, name)
}

/** The placeholders every text's values fill (text-policy.ts `textValues`), in the order they are listed. */
const COMMON_PLACEHOLDERS = ['company', 'pickup', 'tracking_url', 'eta', 'job_ref'] as const

/**
 * The placeholders a template may use: those its texts are given values for. Only the driver's
 * job-link text carries the driver's link; any other text leaves it out (a customer must never
 * get it, and a driver taken off a job has none).
 */
export function placeholdersOf(name: TemplateName): readonly string[] {
  return name === 'driver_job_link' ? [...COMMON_PLACEHOLDERS.slice(0, 3), 'driver_url', ...COMMON_PLACEHOLDERS.slice(3)] : COMMON_PLACEHOLDERS
}

/** The longest wording accepted: ten segments of plain text, before its placeholders are filled. */
export const MAX_TEMPLATE_LENGTH = 1530

/** What is wrong with a wording for a template, or null: empty, too long, or a `{placeholder}` it cannot fill (named, with those it can). */
export function templateProblem(name: TemplateName, text: string): string | null {
  if (!text.trim()) return 'must not be empty'
  if (charCount(text) > MAX_TEMPLATE_LENGTH) return `must be at most ${MAX_TEMPLATE_LENGTH} characters`
  const allowed = placeholdersOf(name)
  const unknown = [...new Set([...text.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]!).filter((p) => !allowed.includes(p)))]
  if (unknown.length) {
    return `${unknown.map((p) => `{${p}}`).join(', ')} ${unknown.length === 1 ? 'is not a placeholder' : 'are not placeholders'} of this text; it can use ${allowed.map((p) => `{${p}}`).join(', ')}`
  }
  // The driver's job-link text exists to carry the link: without it the driver gets nothing to open.
  if (name === 'driver_job_link' && !text.includes('{driver_url}')) return 'must hold {driver_url}: this text is how the driver gets the job\'s link'
  return null
}

// GSM 03.38: the basic set costs one septet a character, the extension table two (escape + char).
const GSM7_BASIC = new Set('@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà')
const GSM7_EXTENDED = new Set('^{}\\[~]|€\f')

/**
 * How many SMS segments a text costs: plain GSM-7 text holds 160 septets in one segment and 153
 * a segment beyond that; one character outside it makes the whole text UCS-2 (70, then 67
 * UTF-16 units a segment).
 */
export function smsSegments(text: string): { segments: number; encoding: 'GSM-7' | 'UCS-2'; units: number } {
  let septets = 0
  for (const ch of text) {
    if (GSM7_BASIC.has(ch)) septets += 1
    else if (GSM7_EXTENDED.has(ch)) septets += 2
    else return { segments: text.length <= 70 ? 1 : Math.ceil(text.length / 67), encoding: 'UCS-2', units: text.length }
  }
  return { segments: septets <= 160 ? 1 : Math.ceil(septets / 153), encoding: 'GSM-7', units: septets }
}

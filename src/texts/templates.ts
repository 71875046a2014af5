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

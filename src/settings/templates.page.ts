import { formAlert, textareaField, type FormState } from '../pages/form'
import { html, type Html } from '../pages/html'
import { templateVersion, type TemplateView } from '../texts/manage-templates'
import type { TemplateName } from '../texts/templates'

/** What each template is for, in words an owner reads: its title and when it goes, to whom. */
const ABOUT: Record<TemplateName, { title: string; when: string }> = {
  request_received: { title: 'Request received', when: 'To the customer when a job is created.' },
  status_pending: { title: 'Pending', when: 'To the customer when a job moves to Pending.' },
  status_confirmed: { title: 'Confirmed', when: 'To the customer when a job is confirmed.' },
  status_dispatched: { title: 'Dispatched', when: 'To the customer when a truck is assigned.' },
  status_en_route: { title: 'En route', when: 'To the customer when the driver is on the way.' },
  status_on_scene: { title: 'On scene', when: 'To the customer when the driver arrives.' },
  status_towing: { title: 'Towing', when: 'To the customer when the vehicle is on the truck.' },
  status_at_destination: { title: 'At destination', when: 'To the customer when the vehicle is delivered.' },
  status_completed: { title: 'Completed', when: 'To the customer when the job is complete.' },
  status_cancelled: { title: 'Cancelled', when: 'To the customer when the job is cancelled.' },
  status_goa: { title: 'GOA', when: 'To the customer when the driver found no one (gone on arrival).' },
  driver_job_link: { title: 'Driver: job link', when: 'To the driver when a job is assigned to their unit, with the link to the job.' },
  driver_job_removed: { title: 'Driver: job taken off', when: 'To the previous driver when a job is reassigned or unassigned.' },
}

/** One template: its own form (the wording and Save template), the preview, and Reset to default when the wording is the account's own. */
export interface TemplateEntry {
  view: TemplateView
  form: FormState
  preview: { text: string; segments: number; encoding: string; units: number } | null
}

function entry(e: TemplateEntry): Html {
  const { view } = e
  const about = ABOUT[view.name]
  const preview = e.preview
    ? html`<p class="template-preview"><span class="muted">Preview with sample values:</span> <span>${e.preview.text}</span><br><span class="muted">${e.preview.segments} segment${e.preview.segments === 1 ? '' : 's'} (${e.preview.units} ${e.preview.encoding === 'GSM-7' ? 'characters' : 'characters outside plain text: 70 a segment'})</span></p>`
    : ''
  // Both forms carry the version of the wording shown: Save and Reset to default are refused over a later save.
  const version = templateVersion(view.text)
  return html`<section class="template" id="template-${view.name}">
<form method="post" action="/settings/templates/${view.name}" novalidate>
<input type="hidden" name="version" value="${version}">
${formAlert(e.form)}
${textareaField(e.form, { name: view.name, label: about.title, rows: 3, maxlength: 1530,
    hint: `${about.when} ${view.own ? 'Your own wording.' : 'The default wording.'} It can use ${view.placeholders.map((p) => `{${p}}`).join(' ')}.` })}
<button type="submit">Save template<span class="visually-hidden"> ${about.title}</span></button>
</form>
${preview}
${view.own ? html`<form method="post" action="/settings/templates/${view.name}/reset" class="template-reset"><input type="hidden" name="version" value="${version}"><button type="submit" class="button-secondary">Reset to default<span class="visually-hidden"> ${about.title}</span></button></form>` : ''}
</section>`
}

/** The templates page (`/settings/templates`): customer texts, then driver texts, each its own form. */
export function templatesBody(entries: TemplateEntry[], saved: TemplateName | null): Html {
  const customer = entries.filter((e) => !e.view.name.startsWith('driver_'))
  const driver = entries.filter((e) => e.view.name.startsWith('driver_'))
  return html`${saved ? html`<p class="notice notice-ok" role="status">Saved: ${ABOUT[saved].title}. Texts written from now on use it.</p>` : ''}
<p>Each text is filled in when it is written: {company} is your company name, {pickup} the pickup (shortened past 60 characters), {tracking_url} the customer's tracking link, {driver_url} the driver's job link, {eta} ", arriving in about N min" (or "H h N min") when an ETA is set less than a day ahead, {job_ref} your reference or the end of the job id. Plain characters (no curly quotes or emoji) keep a text to one segment of 160; the links are the part whose length varies.</p>
<h2>Customer texts</h2>
${customer.map(entry)}
<h2>Driver texts</h2>
${driver.map(entry)}`
}

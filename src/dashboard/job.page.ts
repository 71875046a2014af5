/**
 * The job page's markup: every field, the actions pages.md names (each a `<form>` with its own
 * fields and button, carrying the status the page showed as `expected_status`), the links, the
 * notes and the timeline with the texts each event caused. Rendered from the API's view of the
 * job, so a job entered through the API reads exactly like one typed here.
 */
import { nextMoves, isFinished, type JobStatus } from '../jobs/job-status'
import { attrs, html, timeTag, type Html } from '../pages/html'
import { blankForm, checkboxField, formAlert, inputField, selectField, textareaField, type FormState } from '../pages/form'
import type { JobPageData, PageEvent } from './job-page.data'
import { STATUS_LABELS } from './labels'
import { vehicleLine } from './board.page'
import { dollarsText } from '../platform/money'
import { isoTimeText } from '../platform/time-zone'
import { invoicesSection, type InvoiceSectionState } from '../invoices/invoice.page'
import { commercialAccountSelect } from '../commercial-accounts/commercial-account-select'
import { goaPackLink } from '../goa/goa.page'
import { PHOTO_FILE_LIMIT } from '../platform/route-props'

/** The actions of the job page, by the path segment they post to. */
export const JOB_ACTIONS = ['move', 'cancel', 'assign', 'unassign', 'reopen', 'note', 'photo', 'archive', 'restore', 'tracking-link', 'driver-link', 'edit'] as const
export type JobAction = (typeof JOB_ACTIONS)[number]

/** What the page says besides the job: a refusal (`role="alert"`) or a done action (`role="status"`), and the forms' typed values. */
export interface JobPageState {
  /** The page-wide refusal, e.g. "someone else moved the job first". */
  alert?: string
  /** What was just done (after a redirect). */
  done?: string
  /** The form that was refused, with what was typed and its messages. */
  forms?: Partial<Record<JobAction, FormState>>
  /** The key each form sends, so a double submit does one thing. */
  formKey: string
  /** The invoice form that was refused, with what was typed and its messages. */
  invoices?: InvoiceSectionState
}

const label = (s: string) => STATUS_LABELS[s as JobStatus] ?? s
const money = (cents: number | null) => (cents === null ? '' : (cents / 100).toFixed(2))

/** A time for people, in the company's time zone; the UTC instant in `datetime`. */
function time(d: JobPageData, isoText: string | null | undefined): Html | string {
  if (!isoText) return '—'
  return timeTag(isoText, d.zone)
}

/** The hidden fields every action form carries: what the page showed, and the form's own key. */
function guardFields(d: JobPageData, s: JobPageState, action: JobAction): Html {
  // Assign and Unassign also carry the unit the page showed: a reassign leaves the status as it was.
  const unit = action === 'assign' || action === 'unassign' ? html`<input type="hidden" name="expected_unit_id" value="${d.job.unit?.id ?? ''}">` : ''
  return html`<input type="hidden" name="expected_status" value="${d.job.status}"><input type="hidden" name="version" value="${String(d.version)}">${unit}<input type="hidden" name="idempotency_key" value="${`${s.formKey}.${action}`}">`
}

/** An action's form: posts to /jobs/{id}/<action>. */
function actionForm(d: JobPageData, s: JobPageState, action: JobAction, body: Html | Html[], extra: { class?: string; path?: string; enctype?: string } = {}): Html {
  const form = s.forms?.[action] ?? blankForm()
  return html`<form${attrs({ method: 'post', action: `/jobs/${d.job.id}/${extra.path ?? action}`, enctype: extra.enctype, class: extra.class ?? 'job-action', novalidate: true })}>${formAlert(form)}${guardFields(d, s, action)}${body}</form>`
}

/** The status, and the buttons that move it. */
function statusSection(d: JobPageData, s: JobPageState): Html {
  const { job } = d
  const parts: Html[] = []
  if (job.archived) {
    parts.push(html`<p class="notice">This job is archived: it is off the board and refuses every change until it is restored.</p>`)
    parts.push(actionForm(d, s, 'restore', html`<button type="submit">Restore</button>`))
    return html`<section class="job-section"><h2 id="h-status">Status</h2>${parts}</section>`
  }
  const status = job.status as JobStatus
  if (!isFinished(status)) {
    const moves = nextMoves(status, 'patch', job.unit !== null).filter((m) => m.to !== 'cancelled' && m.to !== 'goa')
    if (moves.length) {
      parts.push(actionForm(d, s, 'move', html`<div class="button-row">${moves.map((m) => html`<button type="submit" name="to" value="${m.to}">Move to ${label(m.to)}</button>`)}</div>`))
    }
    if (job.unit === null) parts.push(html`<p class="hint">Assign a unit to dispatch the job.</p>`)
    const canGoa = nextMoves(status, 'patch', job.unit !== null).some((m) => m.to === 'goa')
    const cancelForm = s.forms?.cancel ?? blankForm()
    // Enter in Reason must not choose for the dispatcher: the form's first submit button (the one
    // Enter would press) is a disabled, hidden one, so only a click on Cancel job or GOA sends it.
    parts.push(actionForm(d, s, 'cancel', html`<button type="submit" disabled hidden aria-hidden="true" tabindex="-1"></button>${inputField(cancelForm, { name: 'reason', label: 'Reason', hint: 'Needed to cancel (3 to 500 characters); optional for GOA.', maxlength: 500 })}
<div class="button-row"><button type="submit" name="to" value="cancelled" class="button-danger">Cancel job</button>${canGoa ? html`<button type="submit" name="to" value="goa" class="button-secondary">GOA</button>` : ''}</div>`))
  } else {
    const reopenForm = s.forms?.reopen ?? blankForm()
    parts.push(actionForm(d, s, 'reopen', html`${inputField(reopenForm, { name: 'reason', label: 'Reason', hint: 'Why the job is reopened (3 to 500 characters).', required: true, maxlength: 500 })}<button type="submit">Reopen</button>`))
  }
  parts.push(actionForm(d, s, 'archive', html`<button type="submit" class="button-secondary">Archive</button>`, { class: 'job-action job-action-inline' }))
  return html`<section class="job-section"><h2 id="h-status">Status: ${label(job.status)}</h2>${parts}</section>`
}

/** The unit, and Assign / Unassign. */
function unitSection(d: JobPageData, s: JobPageState): Html {
  const { job } = d
  const finished = isFinished(job.status)
  const pos = 'position' in job ? job.position : null
  const parts: Html[] = [html`<p>${job.unit ? html`<strong>${job.unit.name}</strong>` : 'No unit yet.'}${pos ? html` Last position ${pos.lat.toFixed(5)}, ${pos.lng.toFixed(5)} at ${time(d, pos.recorded_at)}.` : ''}</p>`]
  if (!job.archived && !finished) {
    const assignForm = s.forms?.assign ?? blankForm(job.unit ? { unit_id: job.unit.id } : {})
    if (d.units.length) {
      parts.push(actionForm(d, s, 'assign', html`${selectField(assignForm, { name: 'unit_id', label: 'Unit', required: true, placeholder: 'Choose a unit', options: d.units.map((u) => ({ value: u.id, label: `${u.name} (${u.status.replace('_', ' ')})` })) })}<button type="submit">Assign</button>`))
    } else {
      parts.push(html`<p class="hint">No units yet: add one with <code>towline units add</code>.</p>`)
    }
    if (job.unit) parts.push(actionForm(d, s, 'unassign', html`<button type="submit" class="button-secondary">Unassign</button>`, { class: 'job-action job-action-inline' }))
  }
  return html`<section class="job-section"><h2 id="h-unit">Unit</h2>${parts}</section>`
}

/** The links: tracking (customer) and driver, with New tracking link and Resend driver link. */
function linksSection(d: JobPageData, s: JobPageState): Html {
  const { job } = d
  const writable = !job.archived
  return html`<section class="job-section"><h2 id="h-links">Links</h2>
<dl class="job-fields">
<dt>Tracking link (customer)</dt><dd><a href="${job.tracking_url}" class="break">${job.tracking_url}</a></dd>
<dt>Driver link</dt><dd>${d.driverUrl ? html`<a href="${d.driverUrl}" class="break">${d.driverUrl}</a>` : 'None: no unit holds the job.'}</dd>
</dl>
${writable ? actionForm(d, s, 'tracking-link', html`<p class="hint">The old tracking link stops working at once; nobody is texted.</p><button type="submit" class="button-secondary">New tracking link</button>`) : ''}
${writable && d.driverUrl && !isFinished(job.status) ? actionForm(d, s, 'driver-link', html`<button type="submit" class="button-secondary">Resend driver link</button>`) : ''}
</section>`
}

/** Every field of the job, read-only. */
function fieldsSection(d: JobPageData): Html {
  const { job } = d
  const row = (name: string, value: Html | string | null | undefined) => html`<dt>${name}</dt><dd>${value === null || value === undefined || value === '' ? '—' : value}</dd>`
  const ts = job.timestamps as Record<string, string | null>
  const milestones = Object.entries(ts).filter(([, v]) => v)
  return html`<section class="job-section"><h2 id="h-details">Details</h2>
<dl class="job-fields">
${row('Customer', job.customer.name)}
${row('Phone', job.customer.phone ? html`<a href="${`tel:${job.customer.phone}`}">${job.customer.phone}</a>` : null)}
${row('Texts', job.customer.sms_consent ? 'allowed' : 'not allowed')}
${row('Pickup', job.pickup.location)}
${row('Destination', job.destination)}
${row('Vehicle', vehicleLine(job.vehicle))}
${row('VIN', job.vehicle.vin)}
${row('Urgency', job.urgency)}
${row('Service', job.service_type)}
${row('Reference', job.external_ref)}
${row('Source', job.source)}
${row('Payer', job.payer_type)}
${row('Commercial account', job.commercial_account ? html`<a href="/accounts/${job.commercial_account.id}">${job.commercial_account.name}</a>` : null)}
${row('ETA', job.eta_at ? time(d, job.eta_at) : null)}
${row('Quote', job.quote_cents === null ? null : `$${money(job.quote_cents)}`)}
${row('Final price', job.final_price_cents === null ? null : `$${money(job.final_price_cents)}`)}
${row('Paid with', job.payment_method)}
${row('Cancel reason', job.cancel_reason)}
${row('Rating', job.rating === null ? null : `${job.rating} of 5${job.rating_comment ? `: ${job.rating_comment}` : ''}`)}
${row('Reopened', job.reopen_count ? `${job.reopen_count} time${job.reopen_count === 1 ? '' : 's'}` : null)}
${row('Created', time(d, job.created_at))}
${row('Updated', time(d, job.updated_at))}
${job.imported ? row('Imported', 'yes') : ''}
${job.archived ? row('Archived', time(d, job.archived_at)) : ''}
</dl>
${milestones.length ? html`<h3>Milestones</h3><dl class="job-fields">${milestones.map(([k, v]) => row(k.replace(/_at$/, '').replace(/_/g, ' '), time(d, v)))}</dl>` : ''}
</section>`
}

/** The edit form (the PATCH operation): what a dispatcher corrects. */
function editSection(d: JobPageData, s: JobPageState): Html {
  const { job } = d
  if (job.archived) return html``
  const form = s.forms?.edit ?? blankForm(editValues(job))
  return html`<section class="job-section"><h2 id="h-edit">Edit</h2>
${actionForm(d, s, 'edit', html`<fieldset><legend>Customer</legend>
${inputField(form, { name: 'customer_name', label: 'Customer name', required: true, maxlength: 200, autocomplete: 'off' })}
${inputField(form, { name: 'customer_phone', label: 'Phone', type: 'tel', autocomplete: 'off' })}
${checkboxField(form, { name: 'sms_consent', label: 'Texts allowed' })}
</fieldset>
<fieldset><legend>Where</legend>
${inputField(form, { name: 'pickup', label: 'Pickup', required: true, maxlength: 500 })}
${inputField(form, { name: 'destination', label: 'Destination', maxlength: 500 })}
</fieldset>
<fieldset><legend>Vehicle</legend>
${inputField(form, { name: 'vehicle_year', label: 'Year', inputmode: 'numeric', maxlength: 8 })}
${inputField(form, { name: 'vehicle_make', label: 'Make', maxlength: 64 })}
${inputField(form, { name: 'vehicle_model', label: 'Model', maxlength: 64 })}
${inputField(form, { name: 'vehicle_color', label: 'Color', maxlength: 32 })}
${inputField(form, { name: 'vehicle_plate', label: 'Plate', maxlength: 16 })}
${inputField(form, { name: 'vehicle_vin', label: 'VIN', maxlength: 17 })}
</fieldset>
<fieldset><legend>Job</legend>
${inputField(form, { name: 'urgency', label: 'Urgency', maxlength: 32, hint: 'e.g. normal, urgent, scheduled.' })}
${inputField(form, { name: 'service_type', label: 'Service', maxlength: 64, hint: 'e.g. flatbed, jump start, lockout.' })}
${inputField(form, { name: 'eta_minutes', label: 'ETA in minutes', type: 'number', inputmode: 'numeric', hint: job.eta_at ? 'From now; leave empty to keep the current ETA.' : 'From now; leave empty for no ETA.' })}
${inputField(form, { name: 'quote', label: 'Quote', inputmode: 'decimal', hint: 'Dollars and cents, e.g. 185.00.' })}
${inputField(form, { name: 'final_price', label: 'Final price', inputmode: 'decimal', hint: 'Dollars and cents, e.g. 185.00.' })}
${inputField(form, { name: 'payment_method', label: 'Paid with', maxlength: 64, hint: 'e.g. card, cash, motor_club_account.' })}
${commercialAccountSelect(form, d.commercialAccounts, job.commercial_account)}
</fieldset>
<button type="submit">Save changes</button>`)}
</section>`
}

/** The edit form's values for the job as it is. */
export function editValues(job: JobPageData['job']): Record<string, string> {
  return {
    customer_name: job.customer.name, customer_phone: job.customer.phone ?? '', sms_consent: job.customer.sms_consent ? 'on' : '',
    pickup: job.pickup.location, destination: job.destination ?? '',
    vehicle_year: job.vehicle.year ?? '', vehicle_make: job.vehicle.make ?? '', vehicle_model: job.vehicle.model ?? '',
    vehicle_color: job.vehicle.color ?? '', vehicle_plate: job.vehicle.plate ?? '', vehicle_vin: job.vehicle.vin ?? '',
    urgency: job.urgency ?? '', service_type: job.service_type ?? '', eta_minutes: '',
    quote: money(job.quote_cents), final_price: money(job.final_price_cents), payment_method: job.payment_method ?? '',
    commercial_account_id: job.commercial_account?.id ?? '',
  }
}

/** Notes (from the timeline) and Add note. */
function notesSection(d: JobPageData, s: JobPageState): Html {
  const notes = d.events.filter((e) => e.type === 'job.note_added')
  const form = s.forms?.note ?? blankForm()
  return html`<section class="job-section"><h2 id="h-notes">Notes</h2>
${notes.length ? html`<ul class="notes">${notes.map((n) => html`<li><p>${String(n.detail.text ?? '')}</p><p class="meta">${n.detail.customer_visible ? 'Visible to customer' : 'Internal'} · ${who(d, n)} · ${time(d, n.created_at)}</p></li>`)}</ul>` : html`<p>No notes yet.</p>`}
${d.job.archived ? '' : actionForm(d, s, 'note', html`${textareaField(form, { name: 'note', label: 'Note', required: true, rows: 3, maxlength: 2000 })}${checkboxField(form, { name: 'customer_visible', label: 'Visible to customer' })}<button type="submit">Add note</button>`)}
</section>`
}

/**
 * The conversation with the customer in one place, oldest first: what they wrote (replies by
 * text and tracking-page messages alike) and the texts sent to them, with where each got to.
 */
function messagesSection(d: JobPageData): Html {
  type Line = { at: string; item: Html }
  const inbound: Line[] = d.events.filter((e) => e.type === 'job.customer_message').map((e) => ({
    at: e.created_at,
    item: html`<li class="message message-in" data-via="${String(e.detail.via ?? '')}"><p>${String(e.detail.text ?? '')}</p><p class="meta">Customer ${e.detail.via === 'tracking_page' ? 'on the tracking page' : e.detail.via === 'sms' ? 'by text' : ''} · ${time(d, e.created_at)}</p></li>`,
  }))
  const outbound: Line[] = d.texts.filter((t) => t.recipient === 'customer').map((t) => ({
    at: t.created_at,
    item: html`<li class="message message-out" data-text-status="${t.status}"><p>${t.body}</p><p class="meta">Text to the customer: ${t.status}${t.skip_reason ? ` (${t.skip_reason})` : ''} · ${time(d, t.created_at)}</p></li>`,
  }))
  // Ours first on a tie: a reply does not come before the text it answers.
  const lines = [...outbound, ...inbound].sort((a, b) => a.at.localeCompare(b.at))
  return html`<section class="job-section"><h2 id="h-messages">Customer messages</h2>
${lines.length ? html`<ol class="messages">${lines.map((l) => l.item)}</ol>` : html`<p>No messages with the customer yet.</p>`}
</section>`
}

/** Photos (each thumbnail a link to the full image) and Add photo. */
function photosSection(d: JobPageData, s: JobPageState): Html {
  const form = s.forms?.photo ?? blankForm()
  const error = form.errors.photo
  const shot = (p: JobPageData['photos'][number], i: number) => {
    const src = `/jobs/${d.job.id}/photos/${p.id}`
    const by = d.names.get(p.user_id ?? p.unit_id ?? '') ?? p.taken_by
    return html`<li><a href="${src}"><img src="${src}/thumb" alt="${`Photo ${i + 1}, by ${by}`}" width="160" height="120" loading="lazy"></a><p class="meta">${p.taken_by} (${by}) · ${time(d, p.created_at)}</p></li>`
  }
  return html`<section class="job-section"><h2>Photos</h2>
${d.photos.length ? html`<ul class="photos">${d.photos.map(shot)}</ul>` : html`<p>No photos yet.</p>`}
${d.job.archived ? '' : actionForm(d, s, 'photo', html`<div class="field"><label for="f-photo">Photo</label><p class="field-hint" id="f-photo-hint">JPEG, PNG or WebP, up to 10 MB.</p><input${attrs({ type: 'file', id: 'f-photo', name: 'photo', accept: 'image/jpeg,image/png,image/webp', capture: 'environment', required: true, 'data-max-bytes': String(PHOTO_FILE_LIMIT.bytes), 'data-too-large': PHOTO_FILE_LIMIT.message, 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': error ? 'f-photo-hint f-photo-error' : 'f-photo-hint' })}><p class="field-error" id="f-photo-error">${error ?? ''}</p></div><button type="submit">Add photo</button>`, { path: 'photos', enctype: 'multipart/form-data' })}
</section>`
}

/** Signatures captured on the driver's page: signer, unit, time; each image links to itself at full size. */
function signaturesSection(d: JobPageData): Html {
  if (!d.signatures.length) return html``
  const item = (g: JobPageData['signatures'][number]) => {
    const src = `/jobs/${d.job.id}/signatures/${g.id}`
    const unit = g.unit_id ? d.names.get(g.unit_id) ?? g.unit_id : 'driver'
    return html`<li><a href="${src}"><img src="${src}" alt="${`Signature of ${g.signer_name}`}" width="240" height="90" loading="lazy"></a><p class="meta">${g.signer_name} · captured by ${unit} · ${time(d, g.created_at)}</p></li>`
  }
  return html`<section class="job-section"><h2>Signatures</h2><ul class="photos signatures">${d.signatures.map(item)}</ul></section>`
}

/** Who acted, in words: the actor and the user, key or unit it names. */
function who(d: JobPageData, e: PageEvent): string {
  const id = (e.detail.user_id ?? e.detail.key_id ?? e.detail.unit_id) as string | undefined
  const name = id ? d.names.get(id) ?? id : null
  return name ? `${e.actor} (${name})` : e.actor
}

/** What an event did, in a few words (a time in it in the company's zone, as every time on the page). */
function eventText(d: JobPageData, e: PageEvent): string {
  switch (e.type) {
    case 'job.status_changed': return `${label(e.from ?? '')} → ${label(e.to ?? '')}${e.detail.cancel_reason ? `: ${String(e.detail.cancel_reason)}` : ''}`
    case 'job.assigned': return `Assigned to ${String((e.detail.unit as { name?: string } | undefined)?.name ?? '')}`
    case 'job.reassigned': return `Reassigned to ${String((e.detail.unit as { name?: string } | undefined)?.name ?? '')}`
    case 'job.unassigned': return 'Unit taken off'
    case 'job.note_added': return `Note: ${String(e.detail.text ?? '')}`
    case 'job.reopened': return `Reopened: ${String(e.detail.reason ?? '')}`
    case 'job.updated': return `Changed ${((e.detail.fields as string[] | undefined) ?? []).join(', ')}`
    case 'job.eta_updated': return typeof e.detail.eta_at === 'string' ? `ETA ${isoTimeText(e.detail.eta_at, d.zone)}` : 'ETA cleared'
    case 'job.customer_message': return `Customer wrote${e.detail.via === 'tracking_page' ? ' on the tracking page' : e.detail.via === 'sms' ? ' by text' : ''}: ${String(e.detail.text ?? '')}`
    case 'job.customer_located': return `Customer shared their location: ${Number(e.detail.lat).toFixed(5)}, ${Number(e.detail.lng).toFixed(5)}${e.detail.accuracy_m == null ? '' : ` (within ${Math.round(Number(e.detail.accuracy_m))} m)`}`
    case 'job.rating_received': return `Customer rated the job ${String(e.detail.rating ?? '')} out of 5${e.detail.comment ? `: ${String(e.detail.comment)}` : ''}`
    case 'job.signature_captured': return `Signature of ${String(e.detail.signer_name ?? '')}`
    case 'job.driver_acknowledged': return 'The driver acknowledged the job'
    case 'job.payment_updated': return e.detail.invoice_number ? `Invoice ${String(e.detail.invoice_number)} ${String(e.to ?? '').replace(/_/g, ' ')}: ${dollarsText(Number(e.detail.amount_paid_cents ?? 0))} of ${dollarsText(Number(e.detail.total_cents ?? 0))} paid` : 'Payment updated'
    case 'job.photo_added': return `Photo added (${String(e.detail.content_type ?? '')}, ${Math.round(Number(e.detail.bytes ?? 0) / 1024)} KB)`
    default: return e.type.replace(/^job\./, '').replace(/_/g, ' ')
  }
}

/** The timeline, newest first, each event with the texts it caused. */
function timelineSection(d: JobPageData): Html {
  const textsBy = new Map<string, typeof d.texts>()
  for (const t of d.texts) if (t.event_id) textsBy.set(t.event_id, [...(textsBy.get(t.event_id) ?? []), t])
  const loose = d.texts.filter((t) => !t.event_id || !d.events.some((e) => e.id === t.event_id))
  const textItem = (t: (typeof d.texts)[number]) => html`<li class="text-item" data-text-status="${t.status}">Text to ${t.recipient}${t.to ? html` ${t.to}` : ''}: <strong>${t.status}</strong>${t.skip_reason ? ` (${t.skip_reason})` : ''}${t.error ? ` (${t.error})` : ''}<br><span class="text-body">${t.body}</span></li>`
  const items = [...d.events].reverse().map((e) => html`<li data-event-type="${e.type}"><p><span class="event-type">${e.type}</span> ${eventText(d, e)}</p><p class="meta">${who(d, e)} · ${time(d, e.created_at)}</p>${textsBy.has(e.id) ? html`<ul class="texts">${textsBy.get(e.id)!.map(textItem)}</ul>` : ''}</li>`)
  return html`<section class="job-section job-timeline"><h2 id="h-timeline">Timeline</h2>
<ol class="timeline" reversed>${items}</ol>
${loose.length ? html`<h3>Other texts</h3><ul class="texts">${loose.map(textItem)}</ul>` : ''}
</section>`
}

/** The whole job page's body. */
export function jobPageBody(d: JobPageData, s: JobPageState, livePosition: number): Html {
  const { job } = d
  const title = job.external_ref ? `${job.customer.name} · ${job.external_ref}` : job.customer.name
  return html`<div class="job-head" data-job-id="${job.id}" data-status="${job.status}" data-version="${String(d.version)}" data-labels="${JSON.stringify(STATUS_LABELS)}" data-names="${JSON.stringify(Object.fromEntries(d.names))}">
<p class="breadcrumb"><a href="/board">Board</a> / <a href="/jobs">Jobs</a></p>
<h1>${title}</h1>
<p class="job-status-line"><span class="status-badge" data-status="${job.status}">${label(job.status)}</span>${job.archived ? html` <span class="status-badge">Archived</span>` : ''} <span class="meta">${job.id}</span></p>
${goaPackLink(job)}
<div class="page-alert" role="alert" id="page-alert">${s.alert ?? ''}</div>
<p class="page-done" role="status" id="page-done">${s.done ?? ''}</p>
<p class="job-changed" role="status" id="job-changed" hidden></p>
<p class="live-status" id="job-live" data-live="${`/board/events?after=${livePosition}`}" data-live-events="job resync signed_out"><span data-live-status>Not live</span></p>
</div>
<div class="job-layout">
<div class="job-main">
${statusSection(d, s)}
${unitSection(d, s)}
${fieldsSection(d)}
${invoicesSection(job, d.invoices, { formKey: s.formKey, state: s.invoices, names: d.names, zone: d.zone })}
${editSection(d, s)}
${notesSection(d, s)}
${messagesSection(d)}
${photosSection(d, s)}
${signaturesSection(d)}
${linksSection(d, s)}
</div>
${timelineSection(d)}
</div>`
}

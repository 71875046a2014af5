/**
 * The driver's page `/d/{token}`: the job for a driver with a phone in one hand. Every action is
 * a form that works before the script loads (web/driver.ts enhances it: live updates, the photo
 * uploaded as soon as it is chosen, the signature pad, the phone's position, the offline queue).
 */
import { STATUS_LABELS } from '../dashboard/labels'
import { MOVES, type JobStatus } from '../jobs/job-status'
import { attrs, html, type Html } from '../pages/html'
import { layout } from '../pages/layout'
import type { DriverPageData } from './driver.data'
import { PHOTO_FILE_LIMIT } from '../platform/route-props'

/** What the page says after a done action (`?done=`): only these words, never text from the URL. */
export const DRIVER_DONE: Record<string, string> = {
  acknowledged: 'Job acknowledged.', moved: 'Status changed.', goa: 'Marked GOA.', photo: 'Photo added.', signature: 'Signature saved.',
}

/** What one rendering carries besides the data: where the page posts, a fresh key per form, what to say. */
export interface DriverPageState {
  /** `/d/{token}`: every form posts under it. */
  base: string
  /** A fresh random prefix; each form's idempotency key is `<formKey>.<action>`. */
  formKey: string
  alert?: string
  done?: string
  /** The bus position the page was rendered at (the live stream resumes from it). */
  position: number
  /** Messages beside the signature's fields after a refusal, and the name typed. */
  signature?: { signerName: string; errors: Record<string, string> }
  photoError?: string
}

/** A status as its label (pages.md). */
export const statusLabel = (s: string) => STATUS_LABELS[s as JobStatus] ?? s

/** A navigation link to an address: the maps app on the phone (no request from this page). */
export function navigationUrl(address: string, lat?: number | null, lng?: number | null): string {
  const to = lat != null && lng != null ? `${lat},${lng}` : address
  return `https://www.google.com/maps/dir/?api=1&destination=${encodeURIComponent(to)}`
}

/** The table's driver moves from every status, and the labels: the offline queue draws the next buttons from them. */
const ROAD = JSON.stringify(Object.fromEntries(MOVES.filter((m) => m.via === 'driver').reduce((road, m) => road.set(m.from, [...(road.get(m.from) ?? []), m.to]), new Map<string, string[]>())))
const LABELS = JSON.stringify(STATUS_LABELS)

const hidden = (name: string, value: string) => html`<input${attrs({ type: 'hidden', name, value })}>`

/** The part the live updates replace: the status, the alerts and the action buttons. */
/** What the status part of the page offers, in a word: the same key, the same buttons (the page's script redraws them only when it changes). */
export function driverActionsKey(d: DriverPageData): string {
  return [d.job.status, d.acknowledged ? 'ack' : 'new', d.job.archivedAt === null ? 'open' : 'archived', ...d.moves].join(' ')
}

export function driverActions(d: DriverPageData, s: DriverPageState): Html {
  const status = d.job.status
  const keyed = (action: string) => html`${hidden('idempotency_key', `${s.formKey}.${action}`)}${hidden('expected_status', status)}`
  const forms: Html[] = []
  if (!d.acknowledged && !['completed', 'cancelled', 'goa'].includes(status) && d.job.archivedAt === null) {
    forms.push(html`<form method="post" action="${s.base}/acknowledge" data-queue>${keyed('acknowledge')}<button type="submit" class="button-big">Acknowledge</button></form>`)
  } else {
    for (const to of d.moves) {
      const goa = to === 'goa'
      // GOA takes an optional reason ("vehicle gone", "customer left"): motor clubs ask for it.
      const why = goa ? html`<div class="field"><label for="f-goa-reason">Reason</label><input${attrs({ id: 'f-goa-reason', name: 'reason', maxlength: 500, autocomplete: 'off' })}></div>` : ''
      forms.push(html`<form method="post" action="${s.base}/status" data-queue>${keyed(goa ? 'goa' : `move-${to}`)}${hidden('to', to)}${why}<button type="submit" class="${goa ? 'button-big button-danger' : 'button-big'}">${goa ? 'GOA' : `Move to ${statusLabel(to)}`}</button></form>`)
    }
  }
  return html`<p class="driver-status">Status: <strong id="driver-status" data-status="${status}">${statusLabel(status)}</strong></p>
<div class="form-alert" role="alert" id="driver-alert">${s.alert ?? ''}</div>
<p class="form-done" role="status" id="driver-done">${s.done ?? ''}</p>
<div class="driver-buttons">${forms}</div>`
}

/** The photos and signatures kept for this job (each links to the full image, served to this link). */
function gallery(d: DriverPageData, s: DriverPageState): Html {
  // Times in UTC as the server knows them; the page's script says them in the phone's zone.
  const photos = d.photos.map((p) => html`<li><a href="${s.base}/photos/${p.id}"><img src="${s.base}/photos/${p.id}/thumb" alt="Photo added ${p.created_at.slice(11, 16)} UTC" data-added="${p.created_at}" width="96" height="96" loading="lazy"></a></li>`)
  const sigs = d.signatures.map((g) => html`<li><a href="${s.base}/signatures/${g.id}">Signature of ${g.signer_name}</a> (<time datetime="${g.created_at}" data-local>${g.created_at.slice(11, 16)} UTC</time>)</li>`)
  return html`${photos.length ? html`<ul class="photo-list" id="photo-list">${photos}</ul>` : html`<p id="photo-list">No photos yet.</p>`}
${sigs.length ? html`<ul id="signature-list">${sigs}</ul>` : ''}`
}

/**
 * What the driver reads about the job: customer (tap to call), pickup and destination (each with
 * a navigation link), vehicle and notes. The page's script redraws it from /state when the job
 * changes (a note, a new destination, a corrected phone), as it redraws the status and buttons.
 */
export function driverFacts(d: DriverPageData): Html {
  const j = d.job
  const v = j.vehicle
  const vehicle = [v.year, v.color, v.make, v.model].filter(Boolean).join(' ') || 'Not given'
  const notes = d.notes.map((n) => html`<li>${n.customer_visible ? '' : html`<strong>Internal:</strong> `}${n.text}</li>`)
  return html`<section aria-labelledby="h-customer"><h2 id="h-customer">Customer</h2>
<p>${j.customer.name}${j.customer.phone ? html`<br><a class="button button-big" href="tel:${j.customer.phone}">Call ${j.customer.phone}</a>` : ''}</p></section>
<section aria-labelledby="h-pickup"><h2 id="h-pickup">Pickup</h2>
<p>${j.pickup.location}</p><p><a class="button" href="${navigationUrl(j.pickup.location, j.pickup.lat, j.pickup.lng)}" rel="noreferrer">Navigate to pickup</a></p>
${d.customerLocation ? html`<p>The customer shared where they are (<time datetime="${d.customerLocation.at}" data-local>${d.customerLocation.at.slice(11, 16)} UTC</time>${d.customerLocation.accuracy_m !== null ? `, within ${Math.round(d.customerLocation.accuracy_m)} m` : ''}).</p><p><a class="button" href="${navigationUrl('', d.customerLocation.lat, d.customerLocation.lng)}" rel="noreferrer">Navigate to the customer</a></p>` : ''}</section>
<section aria-labelledby="h-destination"><h2 id="h-destination">Destination</h2>
${j.destination ? html`<p>${j.destination}</p><p><a class="button" href="${navigationUrl(j.destination)}" rel="noreferrer">Navigate to destination</a></p>` : html`<p>Not given</p>`}</section>
<section aria-labelledby="h-vehicle"><h2 id="h-vehicle">Vehicle</h2>
<p>${vehicle}${v.plate ? html`<br>Plate ${v.plate}` : ''}${v.vin ? html`<br>VIN ${v.vin}` : ''}</p></section>
<section aria-labelledby="h-notes"><h2 id="h-notes">Notes</h2>
${notes.length ? html`<ul id="driver-notes">${notes}</ul>` : html`<p id="driver-notes">No notes.</p>`}</section>`
}

/** The whole page. */
export function driverPage(d: DriverPageData, s: DriverPageState): Html {
  const j = d.job
  const sig = s.signature ?? { signerName: '', errors: {} }
  const sigErr = (name: string) => html`<p class="field-error" id="f-${name}-error">${sig.errors[name] ?? ''}</p>`
  const body = html`<div class="driver" id="driver" data-base="${s.base}" data-position="${s.position}" data-sharing="${d.sharing ? 'yes' : 'no'}" data-road="${ROAD}" data-labels="${LABELS}">
<h1>${d.unitName ? `Job for ${d.unitName}` : 'Your job'}</h1>
<section class="driver-live" id="driver-live" aria-label="Status" data-actions="${driverActionsKey(d)}">${driverActions(d, s)}</section>
<p class="live-status" role="status" id="live-status"></p>
<div id="driver-facts">${driverFacts(d)}</div>
<section aria-labelledby="h-photos"><h2 id="h-photos">Photos</h2>
<form method="post" action="${s.base}/photos" enctype="multipart/form-data" id="photo-form">${hidden('idempotency_key', `${s.formKey}.photo`)}
<div class="field"><label for="f-photo">Add photo</label><input type="file" id="f-photo" name="photo" accept="image/jpeg,image/png,image/webp,image/*" capture="environment" data-max-bytes="${String(PHOTO_FILE_LIMIT.bytes)}" data-too-large="${PHOTO_FILE_LIMIT.message}"${s.photoError ? html` aria-invalid="true" aria-describedby="f-photo-error"` : ''}>
<p class="field-error" id="f-photo-error">${s.photoError ?? ''}</p></div>
<button type="submit" class="button-big" data-no-script>Upload photo</button></form>
${gallery(d, s)}</section>
<section class="signature-section"><h2 id="h-signature">Signature</h2>
<form method="post" action="${s.base}/signature" enctype="multipart/form-data" id="signature-form">${hidden('idempotency_key', `${s.formKey}.signature`)}
<canvas class="signature-pad" id="signature-pad" aria-label="Signature" width="600" height="240" role="img"></canvas>
<input type="file" name="signature" id="f-signature" hidden accept="image/png">${sigErr('signature')}
<p class="field-hint" data-no-script>Signing needs the page's script; wait for it to load.</p>
<div class="field"><label for="f-signer_name">Signer name</label><input${attrs({ type: 'text', id: 'f-signer_name', name: 'signer_name', value: sig.signerName, maxlength: 200, autocomplete: 'name', 'aria-invalid': sig.errors.signer_name ? 'true' : undefined, 'aria-describedby': sig.errors.signer_name ? 'f-signer_name-error' : undefined })}>${sigErr('signer_name')}</div>
<div class="button-row"><button type="button" id="signature-clear" class="button-secondary">Clear</button><button type="submit" class="button-big">Save signature</button></div></form></section>
</div>`
  return layout({ title: j.customer.name, body, scripts: ['driver.js'], inlineStyles: true })
}

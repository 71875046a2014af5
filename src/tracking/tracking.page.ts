/**
 * The tracking page's markup, rendered only from the TrackingState (tracking-state.ts): the live
 * part (status steps, unit, ETA, what happens next, drop-off, notes, Pay link), the truck's map,
 * the customer's forms (**Share my location**, **Message** + **Send**) and the rating once the
 * job is completed. The live stream sends the same parts again, rendered by these functions.
 */
import { assetUrl, hasAsset } from '../pages/assets'
import { blankForm, formAlert, textareaField, type FormState } from '../pages/form'
import { attrs, html, timeTag, type Html } from '../pages/html'
import { layout } from '../pages/layout'
import { mapView } from '../pages/map'
import { RATING_COMMENT_MAX } from '../jobs/rate-job'
import { dollarsText } from '../platform/money'
import type { TrackingState } from './tracking-state'

/** The forms of the page, by the path segment they post to. */
export type TrackingForm = 'location' | 'message' | 'rating'

/** What the page says besides the state: a done action (`role="status"`) and a refused form with what was typed. */
export interface TrackingPageExtras {
  /** A refusal that belongs to no field (the job moved on: already rated, finished). */
  alert?: string
  done?: string
  forms?: Partial<Record<TrackingForm, FormState>>
}

/** The longest message kept from the tracking page. */
export const MESSAGE_MAX = 1000

/** A time for people, in the company's time zone with its abbreviation (the customer is stranded where it works); the UTC instant in `datetime`. */
function time(s: TrackingState, isoText: string): Html {
  return timeTag(isoText, s.company.time_zone)
}

/** The live part: everything that changes with the job. Swapped whole by the page's script. */
export function liveHtml(s: TrackingState): Html {
  const ended = s.status === 'cancelled' || s.status === 'goa'
  const steps = s.steps.map((step) => html`<li${attrs({ class: `step step-${step.state}`, 'aria-current': step.state === 'current' ? 'step' : undefined })}>${step.label}</li>`)
  const facts: Html[] = []
  if (s.unit) facts.push(html`<div><dt>Truck</dt><dd>${s.unit.name}</dd></div>`)
  if (s.eta_at) facts.push(html`<div><dt>Expected</dt><dd>${time(s, s.eta_at)}</dd></div>`)
  if (s.destination && !ended) facts.push(html`<div><dt>Going to</dt><dd>${s.destination}</dd></div>`)
  if (s.dropped_off_at) facts.push(html`<div><dt>Dropped off</dt><dd>${time(s, s.dropped_off_at)}</dd></div>`)
  return html`<section class="track-section" aria-labelledby="h-status">
<h2 id="h-status">Status: ${s.status_label}</h2>
<p class="${ended ? 'notice track-next' : 'track-next'}">${s.next}</p>
<ol class="steps">${steps}</ol>
${facts.length ? html`<dl class="facts track-facts">${facts}</dl>` : ''}
${s.invoice ? html`<p class="track-pay">Invoice ${s.invoice.number}: ${dollarsText(s.invoice.total_cents)}${s.invoice.amount_due_cents < s.invoice.total_cents ? `, ${dollarsText(s.invoice.amount_due_cents)} still due` : ''}. <a class="button" href="${s.invoice.pay_path}">Pay</a></p>` : ''}
</section>
${s.notes.length ? html`<section class="track-section" aria-labelledby="h-notes"><h2 id="h-notes">Notes from ${s.company.name}</h2><ul class="notes">${s.notes.map((n) => html`<li><p>${n.text}</p><p class="muted">${time(s, n.created_at)}</p></li>`)}</ul></section>` : ''}`
}

/** Which rating part is shown (the script swaps it only when this changes, so typing is kept). */
export function ratingKey(s: TrackingState): string {
  return `${s.rating.open}:${s.rating.value ?? ''}`
}

/** The rating part: the form once the job is completed and not rated, the thanks once it is, nothing before. */
export function ratingHtml(s: TrackingState, path: string, form: FormState = blankForm()): Html {
  if (s.rating.value !== null) {
    return html`<section class="track-section" aria-labelledby="h-rating"><h2 id="h-rating">Your rating</h2><p>You rated this job ${s.rating.value} out of 5. Thank you.</p>${s.rating.comment ? html`<p class="track-comment">${s.rating.comment}</p>` : ''}</section>`
  }
  if (!s.rating.open) return html``
  const error = form.errors.rating
  const chosen = typeof form.values.rating === 'string' ? form.values.rating : ''
  const radios = [1, 2, 3, 4, 5].map((n) => {
    const id = n === 1 ? 'f-rating' : `f-rating-${n}`
    return html`<span class="rating-choice"><input${attrs({ type: 'radio', id, name: 'rating', value: String(n), checked: chosen === String(n), required: n === 1, 'aria-describedby': error ? 'f-rating-error' : undefined, 'aria-invalid': error ? 'true' : undefined })}><label for="${id}">${String(n)}</label></span>`
  })
  return html`<section class="track-section" aria-labelledby="h-rating"><h2 id="h-rating">How did we do?</h2>
<form method="post" action="${path}/rating" novalidate>${formAlert(form)}
<fieldset class="field-group rating"><legend>Rating</legend><div class="rating-choices">${radios}</div><p class="field-error" id="f-rating-error">${error ?? ''}</p></fieldset>
${textareaField(form, { name: 'comment', label: 'Comment', rows: 3, maxlength: RATING_COMMENT_MAX })}
<button type="submit" class="button-big">Send rating</button>
</form></section>`
}

/** The truck's map: shown while the state carries the truck (dispatched, en route), hidden and empty otherwise. */
function mapSection(s: TrackingState, tileUrl: string | null): Html {
  const places = s.truck ? [{ id: 'truck', lat: s.truck.lat, lng: s.truck.lng, name: s.unit?.name ?? 'Your truck' }] : []
  return html`<section${attrs({ class: 'track-section track-map', id: 'truck-map', 'aria-labelledby': 'h-map', hidden: !s.truck })}><h2 id="h-map">Where the truck is</h2>${mapView({ label: 'The truck on the map', tileUrl, places })}</section>`
}

/** The customer's actions: share the position, send a message. */
function actionsHtml(s: TrackingState, path: string, extras: TrackingPageExtras): Html {
  const location = extras.forms?.location ?? blankForm()
  const message = extras.forms?.message ?? blankForm()
  // Finding the customer matters until the truck is there; after, it is a message like any other.
  return html`<section class="track-section" aria-labelledby="h-contact"><h2 id="h-contact">${s.can_share_location ? 'Help us find you' : 'Write to us'}</h2>
${s.can_share_location ? html`<form method="post" action="${path}/location" class="track-locate" data-locate novalidate${Object.keys(location.errors).length || location.alert ? '' : ' hidden'}>${formAlert(location)}
<input type="hidden" name="lat" value=""><input type="hidden" name="lng" value=""><input type="hidden" name="accuracy_m" value="">
<p class="field-hint" id="locate-hint">Sends your phone's position to the driver and the dispatcher once.</p>
<button type="submit" class="button-big" aria-describedby="locate-hint">Share my location</button>
</form>` : ''}
<form method="post" action="${path}/message" novalidate>${formAlert(message)}
${textareaField(message, { name: 'message', label: 'Message', rows: 3, maxlength: MESSAGE_MAX, required: true })}
<button type="submit" class="button-big">Send</button>
</form></section>`
}

/** The whole page. `path` is the link's own path (`/t/<token>`), where every form posts. */
export function trackingPage(s: TrackingState, opts: { path: string; tileUrl: string | null; extras?: TrackingPageExtras }): Html {
  const extras = opts.extras ?? {}
  // The map's script and style (Leaflet) load only once there is a truck to show: the page stays light until then.
  const mapScript = hasAsset('map.js') ? assetUrl('map.js') : ''
  const mapStyle = hasAsset('map.css') ? assetUrl('map.css') : ''
  const body = html`<div class="track" id="track"${attrs({ 'data-path': opts.path, 'data-position': s.stream_position, 'data-status': s.status, 'data-map-script': mapScript, 'data-map-style': mapStyle })}>
<header class="track-head">
<p class="track-company">${s.company.name}</p>
<h1>Your tow</h1>
${s.company.phone ? html`<p><a class="button button-secondary" href="${`tel:${s.company.phone}`}">Call ${s.company.name}: ${s.company.phone}</a></p>` : ''}
</header>
<div class="page-alert" role="alert" id="track-alert">${extras.alert ?? ''}</div>
<div class="page-done" role="status" id="track-done">${extras.done ?? ''}</div>
<div id="track-live">${liveHtml(s)}</div>
${mapSection(s, opts.tileUrl)}
<div id="track-rating" data-rating-key="${ratingKey(s)}">${ratingHtml(s, opts.path, extras.forms?.rating)}</div>
${actionsHtml(s, opts.path, extras)}
<p class="live-status muted" id="live-status" role="status">Reload this page to see the latest.</p>
</div>`
  return layout({ title: `${s.company.name}: your tow`, body, scripts: ['tracking.js'], inlineStyles: true })
}

/** The page of a link with nothing to pay (no issued, unpaid invoice). */
export function nothingToPayPage(s: TrackingState, path: string): Html {
  return layout({ title: 'Nothing to pay', body: html`<h1>Nothing to pay</h1><p>There is no invoice to pay for this job.${s.company.phone ? html` Questions? Call ${s.company.name} at <a href="${`tel:${s.company.phone}`}">${s.company.phone}</a>.` : ''}</p><p><a href="${path}">Back to your tow</a></p>` })
}

/**
 * The GOA evidence pack's markup: one printable page of what a motor club asks before it pays a
 * gone-on-arrival: the job, when the truck arrived and by whose record, the position fix nearest
 * the arrival, time on scene, the reason, photos, signatures and the conversation with the
 * customer. Times are UTC to the second: a pack is read by people in other time zones.
 */
import { vehicleLine } from '../dashboard/board.page'
import { attrs, html, type Html } from '../pages/html'
import type { ConversationLine, Doer, Fix, GoaEvidence, UnitFix } from './goa-evidence'
import { ARRIVAL_FIX_WINDOW_MS } from '../units/position-history'

/** A time for a record: the instant in `datetime`, shown in UTC to the second. */
function utc(isoText: string): Html {
  return html`<time${attrs({ datetime: isoText })}>${isoText.slice(0, 19).replace('T', ' ')} UTC</time>`
}

/** A duration in words: "12 min 5 s", "1 h 3 min". */
export function durationText(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`
  const h = Math.floor(m / 60)
  return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`
}

/** Who recorded something, in words. */
function byText(by: Doer | null): string {
  if (!by) return 'the CSV import (no timeline record)'
  const role = by.actor === 'driver' ? "the driver's page" : by.actor === 'dispatcher' ? 'a dispatcher' : by.actor === 'customer' ? 'the customer' : 'the API or the console'
  return by.name ? `${role} (${by.name})` : role
}

/** How a fix stands to the arrival, in words. */
function fromArrival(f: Fix): string {
  if (f.from_arrival_ms === null) return ''
  if (Math.abs(f.from_arrival_ms) < 1000) return 'at the arrival'
  return `${durationText(f.from_arrival_ms)} ${f.from_arrival_ms < 0 ? 'before' : 'after'} the arrival`
}

/** How far a fix is from the pickup, in words. */
function fromPickup(f: Fix): string {
  return f.from_pickup_m === null ? 'the pickup has no coordinates to measure from' : `${f.from_pickup_m.toLocaleString('en-US')} m from the pickup's coordinates`
}

const coords = (f: { lat: number; lng: number }) => `${f.lat.toFixed(6)}, ${f.lng.toFixed(6)}`

const WHEN: Record<UnitFix['when'], string> = {
  before_arrival: 'Taken before the arrival.',
  on_scene: 'Taken while the job was on scene (between the arrival and the GOA).',
  after_goa: 'Taken after the job ended GOA (no kept fix of the unit was nearer the arrival).',
}

function jobSection(e: GoaEvidence): Html {
  const { job } = e
  const row = (name: string, value: Html | string | null | undefined) => html`<dt>${name}</dt><dd>${value === null || value === undefined || value === '' ? '—' : value}</dd>`
  return html`<section class="job-section" aria-labelledby="h-goa-job"><h2 id="h-goa-job">Job</h2>
<dl class="job-fields">
${row('Reference', job.external_ref)}
${row('Job id', job.id)}
${row('Customer', job.customer.name)}
${row('Customer phone', job.customer.phone)}
${row('Vehicle', vehicleLine(job.vehicle))}
${row('VIN', job.vehicle.vin)}
${row('Pickup', job.pickup.location)}
${row('Pickup coordinates', job.pickup.lat !== null && job.pickup.lng !== null ? coords({ lat: job.pickup.lat, lng: job.pickup.lng }) : 'none recorded')}
${row('Destination', job.destination)}
${row('Service', job.service_type)}
${row('Payer', job.payer_type)}
${row('Created', utc(job.created_at))}
</dl>
</section>`
}

function arrivalSection(e: GoaEvidence): Html {
  const row = (name: string, value: Html | string) => html`<dt>${name}</dt><dd>${value}</dd>`
  return html`<section class="job-section" aria-labelledby="h-goa-arrival"><h2 id="h-goa-arrival">Arrival and GOA</h2>
<dl class="job-fields">
${row('Arrived on scene', e.arrival ? html`${utc(e.arrival.at)}, recorded by ${byText(e.arrival.by)}` : 'No arrival on scene was recorded before the GOA.')}
${row('Marked GOA', html`${utc(e.goa.at)}, by ${byText(e.goa.by)}`)}
${row('Time on scene', e.on_scene_ms === null ? '—' : durationText(e.on_scene_ms))}
${row('GOA reason', e.goa.reason ?? 'No reason was given.')}
${row('Unit', e.unit ? e.unit.name : 'No unit held the job.')}
${row('Driver', e.unit?.driver_name ?? '—')}
</dl>
</section>`
}

function positionSection(e: GoaEvidence): Html {
  const f = e.unit_fix
  const unitFix = f
    ? html`<dl class="job-fields" data-fix="unit">
<dt>Position</dt><dd>${coords(f)}${f.accuracy_m === null ? '' : ` (within ${Math.round(f.accuracy_m)} m)`}</dd>
<dt>Taken</dt><dd>${utc(f.at)}${f.from_arrival_ms === null ? '' : `, ${fromArrival(f)}`}</dd>
<dt>Distance</dt><dd>${fromPickup(f)}</dd>
</dl>
<p class="hint">${WHEN[f.when]}</p>`
    : html`<p>${!e.unit ? 'No unit held the job, so there is no unit position.'
      : !e.arrival ? 'No arrival on scene was recorded, so there is no arrival to find a fix for.'
        : `No fix of ${e.unit.name} within ${ARRIVAL_FIX_WINDOW_MS / 60_000} minutes of the arrival is kept: the unit did not report then, or its position history from then was pruned.`}</p>`
  const customer = e.customer_fixes.length
    ? html`<h3>The customer's shared locations</h3>
<p class="hint">From the tracking page's Share my location (the customer's phone), as the timeline recorded them.</p>
<ul class="goa-fixes">${e.customer_fixes.map((c) => html`<li data-fix="customer">${coords(c)}${c.accuracy_m === null ? '' : ` (within ${Math.round(c.accuracy_m)} m)`} at ${utc(c.at)}${c.from_arrival_ms === null ? '' : `, ${fromArrival(c)}`}; ${fromPickup(c)}</li>`)}</ul>`
    : ''
  return html`<section class="job-section" aria-labelledby="h-goa-position"><h2 id="h-goa-position">Position fix nearest the arrival</h2>
<p class="hint">Source: ${e.unit ? e.unit.name : 'the unit'}'s position history (from Traccar Client or the driver's page, one fix kept per 10 seconds): the kept fix nearest in time to the arrival, before or after it, within ${ARRIVAL_FIX_WINDOW_MS / 60_000} minutes. Fixes around a GOA job's arrival are kept as long as the job.</p>
${unitFix}
${customer}
</section>`
}

function photosSection(e: GoaEvidence): Html {
  const jobId = e.job.id
  const shot = (p: GoaEvidence['photos'][number], i: number) => {
    const src = `/jobs/${jobId}/photos/${p.id}`
    return html`<li><a href="${src}"><img src="${src}" alt="${`Photo ${i + 1}, by ${p.by}`}" width="160" height="120"></a><p class="meta">Photo ${String(i + 1)} · ${p.taken_by} (${p.by}) · ${utc(p.created_at)}</p></li>`
  }
  const sig = (g: GoaEvidence['signatures'][number]) => {
    const src = `/jobs/${jobId}/signatures/${g.id}`
    return html`<li><a href="${src}"><img src="${src}" alt="${`Signature of ${g.signer_name}`}" width="240" height="90"></a><p class="meta">${g.signer_name} · captured by ${g.by} · ${utc(g.created_at)}</p></li>`
  }
  return html`<section class="job-section" aria-labelledby="h-goa-photos"><h2 id="h-goa-photos">Photos</h2>
${e.photos.length ? html`<ul class="photos">${e.photos.map(shot)}</ul>` : html`<p>No photos were taken.</p>`}
${e.signatures.length ? html`<h3>Signatures</h3><ul class="photos signatures">${e.signatures.map(sig)}</ul>` : ''}
</section>`
}

/** One line of the conversation, with who wrote it and how, and where a text got to. */
function line(l: ConversationLine): Html {
  const how = l.direction === 'in'
    ? `Customer ${l.via === 'tracking_page' ? 'on the tracking page' : 'by text'}`
    : l.via === 'note' ? 'Note shown on the customer\'s tracking page' : `Text to the customer${l.to ? ` ${l.to}` : ''}: ${l.status}${l.why ? ` (${l.why})` : ''}`
  return html`<li class="${`message message-${l.direction}`}" data-via="${l.via}"><p>${l.text}</p><p class="meta">${how} · ${utc(l.at)}</p></li>`
}

/** The whole pack's body. */
export function goaPackBody(e: GoaEvidence, preparedAt: string): Html {
  const { job } = e
  return html`<div class="goa-head">
<p class="breadcrumb"><a href="${`/jobs/${job.id}`}">Back to the job</a></p>
<h1>GOA evidence pack</h1>
<p class="goa-subtitle">${job.customer.name}${job.external_ref ? ` · ${job.external_ref}` : ''} · <span class="status-badge" data-status="goa">GOA</span></p>
<p class="meta">Prepared ${utc(preparedAt)} from Towline's records of this job: its timeline, its texts and its unit. Times are UTC.</p>
<button type="button" data-print hidden>Print</button>
</div>
${jobSection(e)}
${arrivalSection(e)}
${positionSection(e)}
${photosSection(e)}
<section class="job-section" aria-labelledby="h-goa-messages"><h2 id="h-goa-messages">Texts and messages with the customer</h2>
${e.conversation.length ? html`<ol class="messages">${e.conversation.map(line)}</ol>` : html`<p>No texts or messages were exchanged with the customer.</p>`}
<p class="hint">Tracking links in texts are shown as [tracking link]: whoever holds one can act as the customer.</p>
</section>`
}

/** The job page's link to the pack, when the job ended GOA (nothing otherwise). */
export function goaPackLink(job: { id: string; status: string }): Html {
  return job.status === 'goa' ? html`<p class="goa-link"><a href="${`/jobs/${job.id}/goa`}">GOA evidence pack</a></p>` : html``
}

import { escapeHtml as e } from '../platform/error-page'
import type { JobView } from '../jobs/job.view'
import type { JobVehicle } from '../jobs/job.table'
import { BOARD_STATUSES } from '../jobs/list-board-jobs'
import type { LatestCustomerMessage } from '../jobs/customer-messages'
import { STATUS_LABELS } from './labels'
import { isoTimeText } from '../platform/time-zone'

/** A vehicle in a few words: "2014 Honda Civic, silver, 7ABC123". */
export function vehicleLine(v: Pick<JobVehicle, 'year' | 'make' | 'model' | 'color' | 'plate'>): string {
  const car = [v.year, v.make, v.model].filter(Boolean).join(' ')
  return [car, v.color, v.plate].filter(Boolean).join(', ')
}

/** "12 min", "3 h 05 min", "2 d 4 h": how long a job has waited. */
export function ageText(fromIso: string, nowMs: number): string {
  const min = Math.max(0, Math.floor((nowMs - Date.parse(fromIso)) / 60_000))
  if (min < 60) return `${min} min`
  const h = Math.floor(min / 60)
  if (h < 24) return `${h} h ${String(min % 60).padStart(2, '0')} min`
  return `${Math.floor(h / 24)} d ${h % 24} h`
}

/** The customer's newest message on a card: a reply by text or a tracking-page message, cut to a glance. */
function messageLine(m: LatestCustomerMessage): string {
  const via = m.via === 'sms' ? 'by text' : m.via === 'tracking_page' ? 'on the tracking page' : ''
  const text = m.text.length > 140 ? `${m.text.slice(0, 139)}…` : m.text
  const label = `${m.count > 1 ? `Customer (${m.count} messages), latest` : 'Customer wrote'}${via ? ` ${via}` : ''}:`
  return `<p class="card-message" data-message-at="${e(m.at)}"><span class="card-message-label">${e(label)}</span> ${e(text)}</p>`
}

/** One job's card, as the board shows it and as its script redraws it (same markup both ways); `zone` is the company's, where its time is said. */
export function boardCard(job: JobView, nowMs: number, zone: string, message?: LatestCustomerMessage): string {
  const vehicle = vehicleLine(job.vehicle)
  return `<li class="card${job.urgency ? ` urgency-${e(job.urgency.toLowerCase().replace(/[^a-z0-9]+/g, '-'))}` : ''}" data-job-id="${e(job.id)}" data-created-at="${e(job.created_at)}">
<a class="card-title" href="/jobs/${e(job.id)}">${e(job.customer.name)}</a>
<p class="card-pickup">${e(job.pickup.location)}</p>
${vehicle ? `<p class="card-vehicle">${e(vehicle)}</p>` : ''}
${message ? messageLine(message) : ''}
<p class="card-meta"><span class="card-unit">${job.unit ? e(job.unit.name) : 'No unit'}</span>${job.urgency ? ` · <span class="card-urgency">${e(job.urgency)}</span>` : ''} · <span class="card-age" title="Waiting since ${e(isoTimeText(job.created_at, zone))}">${ageText(job.created_at, nowMs)}</span></p>
</li>`
}

/** The board's columns: one per unfinished status, in board order, each with its jobs. */
export function boardColumns(jobs: JobView[], nowMs: number, zone: string, messages: ReadonlyMap<string, LatestCustomerMessage> = new Map()): string {
  return BOARD_STATUSES.map((status) => {
    const mine = jobs.filter((j) => j.status === status)
    return `<section class="column board-column" data-status="${status}" aria-labelledby="col-${status}">
<h2 id="col-${status}">${STATUS_LABELS[status]}</h2>
<p class="column-count" aria-live="off">${mine.length} ${mine.length === 1 ? 'job' : 'jobs'}</p>
<ol class="cards">${mine.map((j) => boardCard(j, nowMs, zone, messages.get(j.id))).join('\n')}</ol>
</section>`
  }).join('\n')
}

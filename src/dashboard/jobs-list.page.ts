import { checkboxField, formAlert, inputField, selectField, type FormState } from '../pages/form'
import { html, timeTag, type Html } from '../pages/html'
import { MAX_SEARCH_CHARS, type JobSearchHit, type JobSearchPage } from '../jobs/search-jobs'
import { STATUSES } from '../jobs/job-status'
import { vehicleLine } from './board.page'
import { STATUS_LABELS } from './labels'

/** The search form's fields as the query string names them. */
export interface JobsQuery { q: string; from: string; to: string; status: string; archived: boolean; cursor: string }

/** The form's labels by field name (pages.md's words), for the refusal's summary. */
export const SEARCH_LABELS: Record<string, string> = { q: 'Search', from: 'From', to: 'To', status: 'Status', archived: 'Include archived', cursor: 'Page' }

const STATUS_OPTIONS = [
  { value: 'unfinished', label: 'Unfinished' },
  { value: 'finished', label: 'Finished' },
  ...STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] })),
]


/** The CSV export of this search: every job it finds, on every page. */
export function jobsExportUrl(q: JobsQuery): string {
  const params = new URLSearchParams()
  for (const name of ['q', 'from', 'to', 'status'] as const) if (q[name]) params.set(name, q[name])
  if (q.archived) params.set('archived', 'on')
  const qs = params.toString()
  return `/jobs/export.csv${qs ? `?${qs}` : ''}`
}

/** The list's address for these search values from `cursor` on (the next page keeps the query). */
export function jobsListUrl(q: JobsQuery, cursor: string): string {
  const params = new URLSearchParams()
  for (const name of ['q', 'from', 'to', 'status'] as const) if (q[name]) params.set(name, q[name])
  if (q.archived) params.set('archived', 'on')
  params.set('cursor', cursor)
  return `/jobs?${params}`
}

function searchForm(form: FormState, zone: string): Html {
  return html`<form method="get" action="/jobs" role="search" novalidate>
${formAlert(form)}
${inputField(form, { name: 'q', label: 'Search', type: 'search', hint: 'Customer name, phone, plate, reference or job id.', maxlength: MAX_SEARCH_CHARS, autocomplete: 'off' })}
<div class="search-dates">
<p class="field-hint">From and To are the days the jobs were created on, both included, in the company's time zone (${zone}).</p>
${inputField(form, { name: 'from', label: 'From', type: 'date' })}
${inputField(form, { name: 'to', label: 'To', type: 'date' })}
</div>
${selectField(form, { name: 'status', label: 'Status', placeholder: 'Any', options: STATUS_OPTIONS })}
${checkboxField(form, { name: 'archived', label: 'Include archived' })}
<button type="submit">Search</button>
</form>`
}

function row(j: JobSearchHit, zone: string): Html {
  return html`<tr data-job-id="${j.id}">
<td>${timeTag(new Date(j.createdAt).toISOString(), zone)}</td>
<td>${STATUS_LABELS[j.status] ?? j.status}${j.archived ? html` <span class="tag">Archived</span>` : ''}</td>
<td><a href="/jobs/${j.id}">${j.customerName}</a>${j.customerPhone ? html`<br><span class="muted">${j.customerPhone}</span>` : ''}</td>
<td>${j.pickup}</td>
<td>${vehicleLine(j.vehicle)}</td>
<td>${j.unit ? j.unit.name : 'No unit'}</td>
<td>${j.externalRef ?? ''}</td>
</tr>`
}

function results(q: JobsQuery, page: JobSearchPage, zone: string): Html {
  const searched = Boolean(q.q || q.from || q.to || q.status || q.archived)
  if (!page.hits.length) return html`<p class="notice notice-ok" role="status">${q.cursor ? 'No more jobs match this search.' : searched ? 'No jobs match this search.' : 'No jobs yet.'}</p>`
  const caption = `${searched ? 'Jobs found' : 'Recent jobs'}, newest first${q.cursor ? ' (continued)' : ''}`
  return html`<div class="table-scroll" role="region" aria-labelledby="jobs-caption" tabindex="0">
<table class="jobs-table">
<caption id="jobs-caption">${caption}</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Status</th><th scope="col">Customer</th><th scope="col">Pickup</th><th scope="col">Vehicle</th><th scope="col">Unit</th><th scope="col">Reference</th></tr></thead>
<tbody>
${page.hits.map((j) => row(j, zone))}
</tbody>
</table>
</div>
${page.nextCursor ? html`<nav class="pager" aria-label="Pages"><a href="${jobsListUrl(q, page.nextCursor)}" rel="next">Next page</a></nav>` : ''}
<p><a href="${jobsExportUrl(q)}" download>Export CSV</a> <span class="muted">every job this search finds, on every page, with every milestone time</span></p>`
}

/** The jobs list: the search form, then the page of jobs it found, or nothing when the search was refused; days and times in the company's `zone`. */
export function jobsListBody(form: FormState, q: JobsQuery, page: JobSearchPage | null, zone: string): string {
  return html`<h1>Jobs</h1>
${searchForm(form, zone)}
${page ? results(q, page, zone) : ''}`.text
}

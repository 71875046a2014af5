import { requirePermission } from '../accounts/actor'
import { isStatus, STATUSES } from '../jobs/job-status'
import type { JobRow } from '../jobs/job.view'
import { searchJobs, type SearchJobsInput } from '../jobs/search-jobs'
import type { OperationContext } from '../operations/operation-context'
import { validationFailed } from '../platform/errors'
import { readIsoTime } from '../platform/time'
import { readDay, startOfDayIn } from '../platform/time-zone'
import { unitsByIds } from '../units/unit.queries'
import { EXPORT_COLUMNS } from './csv-columns'
import { csvLine, UTF8_BOM } from './csv-text'
import { commercialAccountRefsByIds } from '../commercial-accounts/commercial-account.queries'
import { jobsByIds, jobsInWindow, type ExportWindow } from './jobs-csv.queries'

/** Jobs read per batch: the export holds one batch at a time, however many jobs match. */
const BATCH = 500

/** The header line of every export (after the BOM). */
export const EXPORT_HEADER = csvLine(EXPORT_COLUMNS.map((c) => c.name))

/** One batch of jobs as CSV lines, their unit and commercial account named. */
function batchLines(ctx: OperationContext, jobs: JobRow[]): string {
  const units = unitsByIds(ctx.db, jobs.flatMap((j) => (j.unitId ? [j.unitId] : [])))
  const accounts = commercialAccountRefsByIds(ctx.db, ctx.scope.accountId, jobs.flatMap((j) => (j.commercialAccountId ? [j.commercialAccountId] : [])))
  let out = ''
  for (const j of jobs) {
    const names = { unit: j.unitId ? units.get(j.unitId)?.name ?? null : null, commercialAccount: j.commercialAccountId ? accounts.get(j.commercialAccountId)?.name ?? null : null }
    out += csvLine(EXPORT_COLUMNS.map((c) => c.cell!(j, names)))
  }
  return out
}

/** The CSV text in chunks: the BOM and header, then one chunk per batch the source gives. */
function* chunks(ctx: OperationContext, first: JobRow[], more: () => JobRow[] | null): Generator<string> {
  yield UTF8_BOM + EXPORT_HEADER
  let batch: JobRow[] | null = first
  while (batch && batch.length) {
    yield batchLines(ctx, batch)
    batch = more()
  }
}

/**
 * Exports the jobs the jobs list finds for a search (all pages, archived ones when asked), as
 * CSV chunks: every column of csv-columns.ts, newest first. The search is checked before the
 * first chunk (a bad one is 422, nothing sent); then jobs are read a batch at a time.
 */
export function exportSearchedJobs(ctx: OperationContext, input: Omit<SearchJobsInput, 'cursor' | 'pageSize'>): Generator<string> {
  requirePermission(ctx.actor, 'jobs:read')
  let page = searchJobs(ctx, { ...input, pageSize: BATCH })
  const first = jobsByIds(ctx.db, page.hits.map((h) => h.id))
  return chunks(ctx, first, () => {
    if (!page.nextCursor) return null
    page = searchJobs(ctx, { ...input, cursor: page.nextCursor, pageSize: BATCH })
    return jobsByIds(ctx.db, page.hits.map((h) => h.id))
  })
}

/** What the console's export is asked for, as typed. */
export interface ExportWindowInput { since?: string; until?: string; statuses?: string[] }

/** Reads the console's window (ISO times, or days starting at midnight in the company's `zone`; statuses by name or comma list); 422 naming each bad one. */
export function readExportWindow(input: ExportWindowInput, zone: string): ExportWindow {
  const problems: { path: string; message: string }[] = []
  // A day is all of that day where the company works, as the jobs list's From and To: since its
  // midnight, until the next one (a time is taken as it is: until is the first instant left out).
  const time = (path: 'since' | 'until', raw: string | undefined) => {
    if (raw === undefined) return undefined
    const day = readDay(raw.trim())
    const ms = day ? startOfDayIn(day[0], day[1], day[2] + (path === 'until' ? 1 : 0), zone) : readIsoTime(raw.trim())
    if (ms === null) problems.push({ path, message: `must be an ISO 8601 time with a zone, such as 2026-11-21T09:30:00Z, or a day, 2026-11-21 (the whole day in ${zone})` })
    return ms ?? undefined
  }
  const since = time('since', input.since)
  const until = time('until', input.until)
  const statuses = (input.statuses ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean)
  const bad = statuses.filter((s) => !isStatus(s))
  if (bad.length) problems.push({ path: 'status', message: `${bad.join(', ')} ${bad.length > 1 ? 'are not statuses' : 'is not a status'}: use ${STATUSES.join(', ')}` })
  if (since !== undefined && until !== undefined && until <= since) problems.push({ path: 'until', message: 'must be later than --since' })
  if (problems.length) throw validationFailed(problems)
  return { since, until, statuses }
}

/** Exports the jobs created in the window (since inclusive, until exclusive), archived ones too, as CSV chunks, newest first. */
export function exportJobsInWindow(ctx: OperationContext, window: ExportWindow): Generator<string> {
  requirePermission(ctx.actor, 'jobs:read')
  let batch = jobsInWindow(ctx.db, ctx.scope, window, null, BATCH)
  return chunks(ctx, batch, () => {
    const last = batch.at(-1)
    if (batch.length < BATCH || !last) return null
    batch = jobsInWindow(ctx.db, ctx.scope, window, [last.createdAt, last.id], BATCH)
    return batch
  })
}

/** The template: the header and one example row, as the import reads them. */
export function importTemplate(): string {
  const example: Record<string, string> = {
    external_ref: 'MC-88412', status: 'completed', created_at: '2026-03-02T14:05:00-08:00',
    'customer.name': 'Ann Lee', 'customer.phone': '+15035550142', 'customer.sms_consent': 'false',
    'vehicle.year': '2019', 'vehicle.make': 'Honda', 'vehicle.model': 'Civic', 'vehicle.color': 'Blue', 'vehicle.plate': '7ABC123', 'vehicle.drive_type': 'fwd',
    'pickup.location': 'I-5 N at exit 299B, right shoulder', destination: "Joe's Garage, 1200 SE Grand Ave",
    service_type: 'flatbed', payer_type: 'motor_club', urgency: 'urgent', source: 'motor_club',
    quote_cents: '18500', final_price_cents: '19750', payment_method: 'card',
    confirmed_at: '2026-03-02T14:05:00-08:00', completed_at: '2026-03-02T15:40:00-08:00',
  }
  const columns = EXPORT_COLUMNS.filter((c) => c.name !== 'id')
  return UTF8_BOM + csvLine(columns.map((c) => c.name)) + csvLine(columns.map((c) => example[c.name] ?? null))
}

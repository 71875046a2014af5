import { getTableConfig } from 'drizzle-orm/sqlite-core'
import type { Db } from '../db/client'
import { jobs } from './job.table'
import { commercialAccountOfJob, commercialAccountsOfJobs } from '../commercial-accounts/commercial-account-for-job'
import { notFound } from '../platform/errors'
import { findUnit, positionOf, unitsByIds, type UnitRow } from '../units/unit.queries'
import { jobView, type JobRow, type JobView } from './job.view'
import type { JobLinks } from './job-links'
import { canSeeJob, toJobRow, type JobScope } from './job.queries'

/** The single job as GET /jobs/{id} (and webhooks) show it: with its unit, the unit's position and its commercial account. */
export function presentJob(db: Db, links: JobLinks, row: JobRow): JobView {
  const unit = row.unitId ? findUnit(db, row.accountId, row.unitId) : undefined
  return jobView(row, links, { unit: unit ? { id: unit.id, name: unit.name } : null, commercialAccount: commercialAccountOfJob(db, row.accountId, row.commercialAccountId) }, positionOf(unit))
}

/** A page of jobs as lists show them: with their units and commercial accounts (one query each for the page), without positions. */
export function presentJobs(db: Db, links: JobLinks, rows: JobRow[]): JobView[] {
  const units = unitsByIds(db, rows.flatMap((r) => (r.unitId ? [r.unitId] : [])))
  const commercialAccounts = commercialAccountsOfJobs(db, rows)
  return rows.map((r) => {
    const u = r.unitId ? units.get(r.unitId) : undefined
    const c = r.commercialAccountId ? commercialAccounts.get(r.commercialAccountId) ?? null : null
    return jobView(r, links, { unit: u ? { id: u.id, name: u.name } : null, commercialAccount: c })
  })
}

// The job, its unit's name and last position, and its commercial account's name in one statement:
// every read opens (and closes) a read transaction, which here costs two file-lock calls, more than
// the rest of the read. (Correlated subqueries: SQLite takes a LEFT JOIN here three times as long.)
// Every column of the job but search_text, which is derived for the jobs list's search and never shown.
const JOB_COLUMNS = getTableConfig(jobs).columns.map((c) => c.name).filter((name) => name !== 'search_text').map((name) => `j.${name}`).join(', ')
const JOB_WITH_UNIT = `SELECT ${JOB_COLUMNS}, (SELECT json_object('name', name, 'lat', lat, 'lng', lng, 'accuracyM', accuracy_m, 'heading', heading,
  'speedKph', speed_kph, 'positionAt', position_at) FROM units WHERE id = j.unit_id AND account_id = j.account_id) AS unit_json,
  (SELECT name FROM commercial_accounts WHERE id = j.commercial_account_id AND account_id = j.account_id) AS commercial_account_name
  FROM jobs j WHERE j.id = ?`

// Prepared once per connection: query() would look the statement up by its text on every read.
const prepared = new WeakMap<Db, ReturnType<Db['$client']['prepare']>>()
const jobWithUnitOf = (db: Db) => {
  let statement = prepared.get(db)
  if (!statement) prepared.set(db, statement = db.$client.prepare(JOB_WITH_UNIT))
  return statement as { get(id: string): Record<string, any> | null }
}

/** Reads a job the caller may see with its unit, position and commercial account in one query, as GET /jobs/{id} shows it; 404 if unseen. */
export function readJobView(db: Db, links: JobLinks, scope: JobScope, id: string): JobView {
  return viewOfRead(links, readJobRow(db, scope, id))
}

/** The row of JOB_WITH_UNIT for a job the caller may see; 404 if unseen (another account's answers as an unknown one). */
function readJobRow(db: Db, scope: JobScope, id: string): Record<string, any> {
  const r = jobWithUnitOf(db).get(id)
  if (!r || !canSeeJob(scope, r)) throw notFound('job', id)
  return r
}

/** The view of one row of JOB_WITH_UNIT. */
function viewOfRead(links: JobLinks, r: Record<string, any>): JobView {
  const unit = r.unit_json === null ? null : (JSON.parse(r.unit_json) as UnitRow)
  const commercialAccount = r.commercial_account_name === null ? null : { id: r.commercial_account_id as string, name: r.commercial_account_name as string }
  return jobView(toJobRow(r), links, { unit: unit ? { id: r.unit_id, name: unit.name } : null, commercialAccount }, positionOf(unit))
}

/** A job's JSON as last written by readJobJson, with the row it was made from. */
interface WrittenJob { row: Record<string, any>; links: JobLinks; json: string }
/** The jobs read by readJobJson, per connection, least recently read first. */
interface Written { jobs: Map<string, WrittenJob>; chars: number }
const written = new WeakMap<Db, Written>()
/**
 * How much JSON is kept, in characters (the rows beside it are about as large again): about
 * 1,300 jobs of 1.5 KB, the jobs a company has open many times over; fewer when they are long.
 */
const WRITTEN_CHARS = 2_000_000

/**
 * readJobView as JSON text, for the read integrators poll and pages hammer (GET /jobs/{id}).
 * The row is read every time, as readJobView reads it; the view is a function of that row and
 * the links alone, so when every column is what it was at this job's last read the JSON made
 * then is the answer, and only a changed job is put together and serialised again.
 */
export function readJobJson(db: Db, links: JobLinks, scope: JobScope, id: string): string {
  const r = readJobRow(db, scope, id)
  let kept = written.get(db)
  if (!kept) written.set(db, kept = { jobs: new Map(), chars: 0 })
  const last = kept.jobs.get(id)
  if (last) {
    kept.jobs.delete(id) // read again: the most recently read now, whatever follows
    kept.chars -= last.json.length
  }
  const json = last && last.links === links && sameRow(last.row, r) ? last.json : JSON.stringify(viewOfRead(links, r))
  kept.jobs.set(id, { row: r, links, json })
  kept.chars += json.length
  for (const [oldest, job] of kept.jobs) {
    if (kept.chars <= WRITTEN_CHARS) break
    kept.jobs.delete(oldest)
    kept.chars -= job.json.length
  }
  return json
}

/** Whether two rows of one statement hold the same value in every column. */
function sameRow(a: Record<string, any>, b: Record<string, any>): boolean {
  for (const column in b) if (a[column] !== b[column]) return false
  return true
}

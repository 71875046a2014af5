import type { Db } from '../db/client'
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
const JOB_WITH_UNIT = `SELECT j.*, (SELECT json_object('name', name, 'lat', lat, 'lng', lng, 'accuracyM', accuracy_m, 'heading', heading,
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
  const r = jobWithUnitOf(db).get(id)
  if (!r || !canSeeJob(scope, r)) throw notFound('job', id)
  const unit = r.unit_json === null ? null : (JSON.parse(r.unit_json) as UnitRow)
  const commercialAccount = r.commercial_account_name === null ? null : { id: r.commercial_account_id as string, name: r.commercial_account_name as string }
  return jobView(toJobRow(r), links, { unit: unit ? { id: r.unit_id, name: unit.name } : null, commercialAccount }, positionOf(unit))
}

import type { Db } from '../db/client'
import { notFound } from '../platform/errors'
import { findUnit, positionOf, unitsByIds, type UnitRow } from '../units/unit.queries'
import { jobView, type JobRow, type JobView } from './job.view'
import type { JobLinks } from './job-links'
import { canSeeJob, toJobRow, type JobScope } from './job.queries'

/** The single job as GET /jobs/{id} (and webhooks) show it: with its unit and the unit's position. */
export function presentJob(db: Db, links: JobLinks, row: JobRow): JobView {
  const unit = row.unitId ? findUnit(db, row.accountId, row.unitId) : undefined
  return jobView(row, links, unit ? { id: unit.id, name: unit.name } : null, positionOf(unit))
}

/** A page of jobs as lists show them: with their units, without positions. */
export function presentJobs(db: Db, links: JobLinks, rows: JobRow[]): JobView[] {
  const units = unitsByIds(db, rows.flatMap((r) => (r.unitId ? [r.unitId] : [])))
  return rows.map((r) => {
    const u = r.unitId ? units.get(r.unitId) : undefined
    return jobView(r, links, u ? { id: u.id, name: u.name } : null)
  })
}

// The job and its unit's name and last position in one statement: every read opens (and closes)
// a read transaction, which here costs two file-lock calls, more than the rest of the read. (A
// correlated subquery: SQLite takes a LEFT JOIN here three times as long.)
const JOB_WITH_UNIT = `SELECT j.*, (SELECT json_object('name', name, 'lat', lat, 'lng', lng, 'accuracyM', accuracy_m, 'heading', heading,
  'speedKph', speed_kph, 'positionAt', position_at) FROM units WHERE id = j.unit_id AND account_id = j.account_id) AS unit_json
  FROM jobs j WHERE j.id = ?`

/** Reads a job the caller may see with its unit and position in one query, as GET /jobs/{id} shows it; 404 if unseen. */
export function readJobView(db: Db, links: JobLinks, scope: JobScope, id: string): JobView {
  const r = db.$client.query<Record<string, any>, [string]>(JOB_WITH_UNIT).get(id)
  if (!r || !canSeeJob(scope, r)) throw notFound('job', id)
  const unit = r.unit_json === null ? null : (JSON.parse(r.unit_json) as UnitRow)
  return jobView(toJobRow(r), links, unit ? { id: r.unit_id, name: unit.name } : null, positionOf(unit))
}

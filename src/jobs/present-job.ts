import type { Db } from '../db/client'
import { findUnit, positionOf, unitsByIds } from '../units/unit.queries'
import { jobView, type JobRow, type JobView } from './job.view'
import type { JobLinks } from './job-links'

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

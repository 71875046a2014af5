import { inTransaction } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import { findUnit, findVisibleUnit, servesSite } from '../units/unit.queries'
import type { TextRequest } from '../texts/queue-text'
import { applyMove, commitJobChange, driverText, loadWritableJob, statusText, type JobContext } from './job-context'
import type { NewJobEvent } from './job-events'
import { isFinished } from './job-status'
import type { JobRow } from './job.view'
import { mintLinkToken } from './job-links'

/**
 * Hands a job to a unit: a pending or confirmed job moves to dispatched. Emits job.assigned,
 * or job.reassigned when another unit held it; the new driver gets their job link (a fresh
 * link, so the previous driver's stops working) and the previous driver is told.
 */
export function assignJob(ctx: JobContext, id: string, unitId: string): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id)
    // An id in a body that names nothing the caller can see is a bad request (422), not a missing page.
    const unit = findVisibleUnit(tx, ctx.scope, unitId)
    if (!unit) throw validationFailed([{ path: 'unit_id', message: `names no unit of this account${ctx.scope.siteIds ? ' at your sites' : ''} (${unitId})` }])
    if (!servesSite(unit, job.siteId)) throw validationFailed([{ path: 'unit_id', message: `unit ${unit.name} does not serve this job's site` }])
    // Same unit again: nothing to do, unless the job is back at confirmed still holding it (after a reopen).
    const moves = job.status === 'pending' || job.status === 'confirmed'
    if (job.unitId === unit.id && !moves) return job
    if (isFinished(job.status)) {
      throw new AppError('job_transition_refused', `The job is ${job.status}; a finished job cannot be assigned. Reopen it first.`, { from: job.status, to: 'dispatched', reason: 'job_finished' })
    }
    const previous = job.unitId && job.unitId !== unit.id ? findUnit(tx, job.accountId, job.unitId) : undefined
    const ref = (u: { id: string; name: string }) => ({ id: u.id, name: u.name })
    const link = mintLinkToken(ctx.links)
    let set: Partial<JobRow> = { unitId: unit.id, driverTokenHash: link.hash, driverTokenSealed: link.sealed }
    const events: NewJobEvent[] = [previous
      ? { type: 'job.reassigned', detail: { unit: ref(unit), previous_unit: ref(previous) } }
      : { type: 'job.assigned', detail: { unit: ref(unit) } }]
    if (moves) {
      set = { ...set, ...applyMove(job, 'dispatched', 'assign', true, ctx.clock.now()) }
      events.push({ type: 'job.status_changed', from: job.status, to: 'dispatched', detail: { unit: ref(unit) } })
    }
    return commitJobChange(tx, ctx, job, set, events, (after, rows) => {
      const texts: TextRequest[] = [driverText(ctx, after, unit, 'driver_job_link', rows[0])]
      if (previous) texts.push(driverText(ctx, { ...after, driverTokenHash: null, driverTokenSealed: null }, previous, 'driver_job_removed', rows[0]))
      if (moves) texts.push(statusText(ctx, after, rows[1]))
      return texts
    }).after
  })
}

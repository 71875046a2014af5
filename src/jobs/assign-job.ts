import { inTransaction } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { findUnit, findVisibleUnit, servesSite } from '../units/unit.queries'
import { commitJobChange, type JobChange } from './commit-job-change'
import { loadWritableJob, type ActionGuard } from './job-context'
import { mintLinkToken } from './job-links'
import { isFinished } from './job-status'
import type { JobRow } from './job.view'

/**
 * Hands a job to a unit: a pending or confirmed job moves to dispatched. Emits job.assigned,
 * or job.reassigned when another unit held it (the texts policy sends the new driver a fresh
 * job link and tells the previous driver; the previous link is retired and answers 410).
 */
export function assignJob(ctx: OperationContext, id: string, unitId: string, guard: ActionGuard = {}): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id, 'jobs:write', guard)
    // An id in a body that names nothing the caller can see is a bad request (422), not a missing page.
    const unit = findVisibleUnit(tx, ctx.scope, unitId)
    if (!unit) throw validationFailed([{ path: 'unit_id', message: `names no unit of this account${ctx.scope.siteIds ? ' at your sites' : ''}` }])
    if (!servesSite(unit, job.siteId)) throw validationFailed([{ path: 'unit_id', message: `names unit ${unit.name}, which does not serve this job's site` }])
    // A finished job is refused whatever the unit, the one it kept included.
    if (isFinished(job.status)) {
      throw new AppError('job_transition_refused', `The job is ${job.status}; a finished job cannot be assigned. Reopen it first.`, { from: job.status, to: 'dispatched', reason: 'job_finished' })
    }
    // Same unit again: nothing to do, unless the job is back at confirmed still holding it (after a reopen).
    const moves = job.status === 'pending' || job.status === 'confirmed'
    if (job.unitId === unit.id && !moves) return job
    const previous = job.unitId && job.unitId !== unit.id ? findUnit(tx, job.accountId, job.unitId) : undefined
    const ref = (u: { id: string; name: string }) => ({ id: u.id, name: u.name })
    const link = mintLinkToken(ctx.links)
    const change: JobChange = {
      set: { unitId: unit.id, driverTokenHash: link.hash, driverTokenSealed: link.sealed },
      events: [previous
        ? { type: 'job.reassigned', detail: { unit: ref(unit), previous_unit: ref(previous) } }
        : { type: 'job.assigned', detail: { unit: ref(unit) } }],
      ...(moves ? { move: { to: 'dispatched', via: 'assign', detail: { unit: ref(unit) } } } : {}),
      // The link the job held dies with this change: the other unit's driver's, or the same
      // unit's from the run before a reopen (its driver gets the fresh one).
      ...(job.driverTokenHash ? { retireLinks: { driver: job.unitId !== unit.id ? 'reassigned' : 'replaced' } } : {}),
    }
    return commitJobChange(tx, ctx, job, change).after
  })
}

import { inTransaction } from '../db/client'
import { AppError } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { findUnit } from '../units/unit.queries'
import { commitJobChange } from './commit-job-change'
import { loadWritableJob, type ActionGuard } from './job-context'
import { isFinished, NEEDS_UNIT } from './job-status'
import type { JobRow } from './job.view'

/**
 * Takes a job off its unit: back to confirmed, job.unassigned (+ job.status_changed); the texts
 * policy tells the driver, and, like every status change, the customer; the driver's link is
 * retired (it answers 410). No-op when no unit holds it.
 */
export function unassignJob(ctx: OperationContext, id: string, guard: ActionGuard = {}): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id, 'jobs:write', guard)
    if (!job.unitId) return job
    if (isFinished(job.status)) {
      throw new AppError('job_transition_refused', `The job is ${job.status}; a finished job keeps its unit. Reopen it first.`, { from: job.status, to: 'confirmed', reason: 'job_finished' })
    }
    const unit = findUnit(tx, job.accountId, job.unitId)
    const moves = (NEEDS_UNIT as readonly string[]).includes(job.status)
    return commitJobChange(tx, ctx, job, {
      set: { unitId: null, driverTokenHash: null, driverTokenSealed: null },
      events: [{ type: 'job.unassigned', detail: { unit: unit ? { id: unit.id, name: unit.name } : { id: job.unitId } } }],
      ...(moves ? { move: { to: 'confirmed' as const, via: 'unassign' as const } } : {}),
      ...(job.driverTokenHash ? { retireLinks: { driver: 'unassigned' as const } } : {}),
    }).after
  })
}

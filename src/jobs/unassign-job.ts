import { inTransaction } from '../db/client'
import { AppError } from '../platform/errors'
import { findUnit } from '../units/unit.queries'
import type { TextRequest } from '../texts/queue-text'
import { applyMove, commitJobChange, driverText, loadWritableJob, statusText, type JobContext } from './job-context'
import type { NewJobEvent } from './job-events'
import { isFinished, NEEDS_UNIT, type JobStatus } from './job-status'
import type { JobRow } from './job.view'

/**
 * Takes a job off its unit: back to confirmed, job.unassigned (+ job.status_changed), and the
 * driver is told. Like every status change, the step back texts the customer. No-op when no
 * unit holds it.
 */
export function unassignJob(ctx: JobContext, id: string): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id)
    if (!job.unitId) return job
    if (isFinished(job.status)) {
      throw new AppError('job_transition_refused', `The job is ${job.status}; a finished job keeps its unit. Reopen it first.`, { from: job.status, to: 'confirmed', reason: 'job_finished' })
    }
    const unit = findUnit(tx, job.accountId, job.unitId)
    let set: Partial<JobRow> = { unitId: null, driverTokenHash: null, driverTokenSealed: null }
    const events: NewJobEvent[] = [{ type: 'job.unassigned', detail: { unit: unit ? { id: unit.id, name: unit.name } : { id: job.unitId } } }]
    const moves = (NEEDS_UNIT as readonly string[]).includes(job.status)
    if (moves) {
      set = { ...set, ...applyMove(job, 'confirmed' as JobStatus, 'unassign', false, ctx.clock.now()) }
      events.push({ type: 'job.status_changed', from: job.status, to: 'confirmed' })
    }
    return commitJobChange(tx, ctx, job, set, events, (after, rows) => {
      const texts: TextRequest[] = unit ? [driverText(ctx, after, unit, 'driver_job_removed', rows[0])] : []
      if (moves) texts.push(statusText(ctx, after, rows[1]))
      return texts
    }).after
  })
}

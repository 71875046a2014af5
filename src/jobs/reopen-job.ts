import { inTransaction } from '../db/client'
import { AppError } from '../platform/errors'
import { iso } from '../platform/clock'
import { applyMove, commitJobChange, loadWritableJob, requireReason, statusText, type JobContext } from './job-context'
import { isFinished } from './job-status'
import type { JobRow } from './job.view'

/**
 * Brings a finished job back to confirmed: reopen_count + 1, reopened_at set, cancel_reason
 * and the rating cleared. What the move erases is written to the timeline first
 * (job.reopened), then job.status_changed from the finished status to confirmed.
 */
export function reopenJob(ctx: JobContext, id: string, rawReason: string | undefined): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id)
    if (!isFinished(job.status)) {
      throw new AppError('job_transition_refused', `The job is ${job.status}; only completed, cancelled or goa jobs can be reopened.`, { from: job.status, to: 'confirmed', reason: 'not_finished' })
    }
    const reason = requireReason(rawReason, 'reason', 'Reopening a job')
    const move = applyMove(job, 'confirmed', 'reopen', job.unitId !== null, ctx.clock.now())
    const reopenCount = job.reopenCount + 1
    const set: Partial<JobRow> = { ...move, reopenCount, cancelReason: null, rating: null, ratingComment: null, ratedAt: null }
    return commitJobChange(tx, ctx, job, set, [
      {
        type: 'job.reopened', from: job.status, to: 'confirmed',
        detail: {
          reason, reopen_count: reopenCount, previous_reopen_count: job.reopenCount, cancel_reason: job.cancelReason,
          rating: job.rating, rating_comment: job.ratingComment, rated_at: iso(job.ratedAt), reopened_at: iso(move.milestones.reopened_at),
        },
      },
      { type: 'job.status_changed', from: job.status, to: 'confirmed', detail: { reopen: true } },
    ], (after, rows) => [statusText(ctx, after, rows[1])]).after
  })
}

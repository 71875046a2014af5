import { inTransaction } from '../db/client'
import { iso } from '../platform/clock'
import type { OperationContext } from '../operations/operation-context'
import { checkMove, commitJobChange } from './commit-job-change'
import { loadWritableJob, requireReason, type ActionGuard } from './job-context'
import type { JobRow } from './job.view'

/**
 * Brings a finished job back to confirmed: reopen_count + 1, reopened_at set, cancel_reason
 * and the rating cleared. What the move erases is written to the timeline first
 * (job.reopened), then job.status_changed from the finished status to confirmed.
 */
export function reopenJob(ctx: OperationContext, id: string, rawReason: string | null | undefined, guard: ActionGuard = {}): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id, 'jobs:write', guard)
    checkMove(job, 'confirmed', 'reopen')
    const reason = requireReason(rawReason, 'reason', 'Reopening a job')
    const reopenCount = job.reopenCount + 1
    const now = ctx.clock.now()
    return commitJobChange(tx, ctx, job, {
      set: { reopenCount, cancelReason: null, rating: null, ratingComment: null, ratedAt: null },
      events: [{
        type: 'job.reopened', from: job.status, to: 'confirmed',
        detail: {
          reason, reopen_count: reopenCount, previous_reopen_count: job.reopenCount, cancel_reason: job.cancelReason,
          rating: job.rating, rating_comment: job.ratingComment, rated_at: iso(job.ratedAt), reopened_at: iso(now),
        },
      }],
      move: { to: 'confirmed', via: 'reopen', detail: { reopen: true } },
      nowMs: now,
    }).after
  })
}

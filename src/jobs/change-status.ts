import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { AppError } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { checkMove, commitJobChange } from './commit-job-change'
import { loadWritableJob, requireReason } from './job-context'
import type { JobStatus, MoveVia } from './job-status'
import type { JobRow } from './job.view'

/** A status change as a button asks for it: the status the page showed, and a reason where the move needs one. */
export interface StatusChange {
  to: JobStatus
  /** The status the actor saw; another one now is 409 job_stale and nothing is written. */
  expectedStatus?: JobStatus
  /** cancel_reason for cancelled (required) and goa (optional). */
  reason?: string
}

/**
 * Moves a job to another status and nothing else. Who asks decides the road: a driver's link
 * (only their own job) takes the table's `driver` moves (one step forward, goa on scene); a
 * dispatcher or a key takes the board's. The milestone, job.status_changed (with the actor) and
 * the customer's text come with the move.
 */
export function changeStatus(ctx: OperationContext, id: string, change: StatusChange): JobRow {
  const via: MoveVia = ctx.actor.kind === 'driver' ? 'driver' : 'patch'
  requirePermission(ctx.actor, via === 'driver' ? 'jobs:drive' : 'jobs:write')
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id, via === 'driver' ? 'jobs:drive' : 'jobs:write', { expectedStatus: change.expectedStatus })
    if (ctx.actor.kind === 'driver' && job.unitId !== ctx.actor.unitId) {
      throw new AppError('forbidden', 'This job was handed to another driver.', { actor: 'driver', required_permission: 'jobs:drive' })
    }
    // The move is checked before its reason: a finished job answers 409, reason or not.
    checkMove(job, change.to, via)
    const cancelReason = change.to === 'cancelled' ? requireReason(change.reason, 'cancel_reason', 'Cancelling a job')
      : change.to === 'goa' && change.reason !== undefined ? requireReason(change.reason, 'cancel_reason', 'A GOA (gone on arrival)')
      : undefined
    return commitJobChange(tx, ctx, job, {
      ...(cancelReason !== undefined ? { set: { cancelReason } } : {}),
      move: { to: change.to, via, detail: cancelReason !== undefined ? { cancel_reason: cancelReason } : {} },
    }).after
  })
}

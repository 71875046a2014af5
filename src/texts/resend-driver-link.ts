import { inTransaction } from '../db/client'
import { loadWritableJob, type ActionGuard } from '../jobs/job-context'
import { findLatestJobEvent } from '../jobs/job-events'
import { isFinished } from '../jobs/job-status'
import type { OperationContext } from '../operations/operation-context'
import { AppError } from '../platform/errors'
import { queueText } from './queue-text'
import { driverJobLinkText } from './text-policy'

/**
 * Resend driver link: queues the job-link text again to the driver of the unit holding the job,
 * with the same template and rules as on assign, tied to the assignment (job.assigned or
 * job.reassigned) that minted the link. The link itself is kept: the driver may have it open,
 * and a resend must not kill it (New tracking link is the way to replace a link). Not a job
 * change: no event, the job untouched. 409 invalid_state for a job with no unit, a finished or
 * an archived one.
 */
export function resendDriverLink(ctx: OperationContext, jobId: string, guard: ActionGuard = {}): { textId: string; skipReason: string | null } {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:write', guard)
    if (isFinished(job.status)) {
      throw new AppError('invalid_state', `This job is ${job.status}; a finished job's driver link is not sent again.`, { reason: 'job_finished', status: job.status })
    }
    const assignment = findLatestJobEvent(tx, job.id, ['job.assigned', 'job.reassigned'])
    const nowMs = ctx.clock.now()
    const text = job.driverTokenSealed ? driverJobLinkText(tx, ctx, job, assignment?.id ?? null, nowMs) : null
    if (!text) throw new AppError('invalid_state', 'No unit holds this job, so there is no driver link to send. Assign a unit first.', { reason: 'no_unit' })
    const textId = queueText(tx, text, nowMs)
    const row = tx.$client.query<{ skip_reason: string | null }, [string]>('SELECT skip_reason FROM texts WHERE id = ?').get(textId)
    return { textId, skipReason: row?.skip_reason ?? null }
  })
}

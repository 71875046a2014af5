import { inTransaction, type Db } from '../db/client'
import { AppError } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { loadWritableJob, type ActionGuard } from './job-context'
import { findLatestJobEvent } from './job-events'
import { isFinished } from './job-status'

/** Whether the unit holding the job acknowledged it since it was handed to them (a reassign asks again). */
export function isAcknowledged(db: Db, jobId: string): boolean {
  const ack = findLatestJobEvent(db, jobId, ['job.driver_acknowledged'])
  if (!ack) return false
  const handed = findLatestJobEvent(db, jobId, ['job.assigned', 'job.reassigned'])
  return !handed || ack.seq > handed.seq
}

/**
 * The driver's **Acknowledge**: once per hand-over, on a job that is not finished, by the driver
 * whose link it is. The timeline gets job.driver_acknowledged (actor driver, detail.unit_id).
 */
export function acknowledgeJob(ctx: OperationContext, jobId: string, guard: ActionGuard = {}): void {
  const actor = ctx.actor
  if (actor.kind !== 'driver') throw new AppError('forbidden', 'Only the driver of the job acknowledges it.', { actor: actor.kind, required_permission: 'jobs:drive' })
  inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:drive', guard)
    if (job.unitId !== actor.unitId) throw new AppError('forbidden', 'This job was handed to another driver.', { actor: 'driver', required_permission: 'jobs:drive' })
    if (isFinished(job.status)) throw new AppError('invalid_state', `The job is ${job.status}: there is nothing left to acknowledge.`, { reason: 'job_finished' })
    if (isAcknowledged(tx, job.id)) throw new AppError('invalid_state', 'The job was already acknowledged.', { reason: 'already_acknowledged' })
    commitJobChange(tx, ctx, job, { events: [{ type: 'job.driver_acknowledged' }] })
  })
}

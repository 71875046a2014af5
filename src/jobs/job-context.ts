import { requirePermission, type Permission } from '../accounts/actor'
import type { Db } from '../db/client'
import { AppError } from '../platform/errors'
import { charCount } from '../platform/chars'
import type { OperationContext } from '../operations/operation-context'
import { findJobOrThrow } from './job.queries'
import type { JobRow } from './job.view'

/** What an action saw before it acted: the status its page showed (another one now is 409 job_stale, nothing written). */
export interface ActionGuard {
  expectedStatus?: string
  /** The unit the caller saw holding the job (null: none); a page's Assign and Unassign send it. */
  expectedUnitId?: string | null
}

/**
 * Loads a job the actor may change: checks the permission first (403), then finds the job in
 * the actor's scope (404 if unseen), then refuses an archived one (409 invalid_state), then one
 * no longer in the status the caller expected (409 job_stale). Called inside the operation's
 * transaction, so nobody moves the job between the check and the write.
 */
export function loadWritableJob(ctx: OperationContext, db: Db, id: string, permission: Permission = 'jobs:write', guard: ActionGuard = {}): JobRow {
  requirePermission(ctx.actor, permission)
  const job = findJobOrThrow(db, ctx.scope, id)
  if (job.archivedAt !== null) throw new AppError('invalid_state', 'This job is archived and cannot be changed. Restore it first.', { archived_at: new Date(job.archivedAt).toISOString() })
  checkExpected(job, guard)
  return job
}

/** 409 job_stale when the job is no longer in the status, or with the unit, the caller saw. */
export function checkExpected(job: Pick<JobRow, 'status'> & { unitId?: string | null }, guard: ActionGuard): void {
  if (guard.expectedStatus !== undefined && job.status !== guard.expectedStatus) throw jobStale(guard.expectedStatus, job.status)
  if (guard.expectedUnitId !== undefined && job.unitId !== undefined && (job.unitId ?? null) !== guard.expectedUnitId) {
    throw new AppError('job_stale', 'The job is held by another unit than the one expected; nothing was written.', {
      expected_status: guard.expectedStatus ?? job.status, current_status: job.status, expected_unit_id: guard.expectedUnitId, current_unit_id: job.unitId ?? null,
    })
  }
}

/** The 409 job_stale of an action taken from a status the job is no longer in (a page's expected_status, PATCH's). */
function jobStale(expected: string, current: string): AppError {
  return new AppError('job_stale', `The job is ${current}, not ${expected} as expected; nothing was written.`, { expected_status: expected, current_status: current })
}

/**
 * Reads a cancel or reopen reason: 3 to 500 characters after trimming; 422 job_reason_required
 * otherwise. Characters are counted as people (and JSON Schema) count them, by code point: an
 * emoji is one, not the two UTF-16 units JavaScript's length gives it.
 */
export function requireReason(raw: string | undefined | null, field: 'cancel_reason' | 'reason', what: string): string {
  const reason = (raw ?? '').trim()
  // Invisible characters alone (zero-width spaces, joiners) are no reason: such a text counts as empty.
  const length = reason.replace(/[\p{Cf}\s]/gu, '') === '' ? 0 : charCount(reason)
  if (length < 3 || length > 500) {
    throw new AppError('job_reason_required', `${what} needs a ${field} of 3 to 500 characters.`, { field, length })
  }
  return reason
}

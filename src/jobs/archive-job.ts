import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { checkExpected, type ActionGuard } from './job-context'
import { findJobOrThrow } from './job.queries'
import type { JobRow } from './job.view'

/** Archives a job (it then refuses every write with 409 invalid_state); no-op if already archived. */
export function archiveJob(ctx: OperationContext, id: string, guard: ActionGuard = {}): JobRow {
  requirePermission(ctx.actor, 'jobs:write')
  return inTransaction(ctx.db, (tx) => {
    const job = findJobOrThrow(tx, ctx.scope, id)
    checkExpected(job, guard)
    if (job.archivedAt !== null) return job
    return commitJobChange(tx, ctx, job, { set: { archivedAt: ctx.clock.now() }, events: [{ type: 'job.archived' }] }).after
  })
}

/** Restores an archived job so it can be changed again; no-op if not archived. */
export function restoreJob(ctx: OperationContext, id: string, guard: ActionGuard = {}): JobRow {
  requirePermission(ctx.actor, 'jobs:write')
  return inTransaction(ctx.db, (tx) => {
    const job = findJobOrThrow(tx, ctx.scope, id)
    checkExpected(job, guard)
    if (job.archivedAt === null) return job
    return commitJobChange(tx, ctx, job, { set: { archivedAt: null }, events: [{ type: 'job.restored' }] }).after
  })
}

import { inTransaction } from '../db/client'
import { commitJobChange, type JobContext } from './job-context'
import { findJobOrThrow } from './job.queries'
import type { JobRow } from './job.view'

/** Archives a job (it then refuses every write with 409 invalid_state); no-op if already archived. */
export function archiveJob(ctx: JobContext, id: string): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = findJobOrThrow(tx, ctx.scope, id)
    if (job.archivedAt !== null) return job
    return commitJobChange(tx, ctx, job, { archivedAt: ctx.clock.now() }, [{ type: 'job.archived' }]).after
  })
}

/** Restores an archived job so it can be changed again; no-op if not archived. */
export function restoreJob(ctx: JobContext, id: string): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = findJobOrThrow(tx, ctx.scope, id)
    if (job.archivedAt === null) return job
    return commitJobChange(tx, ctx, job, { archivedAt: null }, [{ type: 'job.restored' }]).after
  })
}

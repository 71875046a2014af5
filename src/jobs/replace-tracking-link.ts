import { inTransaction } from '../db/client'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { loadWritableJob, type ActionGuard } from './job-context'
import { mintLinkToken } from './job-links'
import type { JobRow } from './job.view'

/**
 * New tracking link: gives the job a fresh tracking token. The old link answers 410 from now on
 * (its hash goes to retired_links) and the change is a job.updated with detail.fields
 * ["tracking_url"], so webhooks and live boards see the new URL. Nobody is texted: the customer
 * who still holds the old link is told to ask the company. A finished job may get one too.
 */
export function replaceTrackingLink(ctx: OperationContext, jobId: string, guard: ActionGuard = {}): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:write', guard)
    const link = mintLinkToken(ctx.links)
    return commitJobChange(tx, ctx, job, {
      set: { trackingTokenHash: link.hash, trackingTokenSealed: link.sealed },
      events: [{ type: 'job.updated', detail: { fields: ['tracking_url'] } }],
      retireLinks: { tracking: 'replaced' },
    }).after
  })
}

import { loadWritableJob } from './job-context'
import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import type { JobRow } from './job.view'

/** A customer's message as it reached us: a text (with its sender and Twilio id, and any photos) or the tracking page. */
export interface CustomerMessage {
  text: string
  via: 'sms' | 'tracking_page'
  from?: string
  messageSid?: string | null
  mediaUrls?: string[]
}

/** Puts a customer's message on their job's timeline (job.customer_message, actor customer). */
export function addCustomerMessage(ctx: OperationContext, jobId: string, msg: CustomerMessage): JobRow {
  requirePermission(ctx.actor, 'jobs:track')
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:track')
    const detail: Record<string, unknown> = { text: msg.text, via: msg.via }
    if (msg.from !== undefined) detail.from = msg.from
    if (msg.messageSid !== undefined) detail.message_sid = msg.messageSid
    if (msg.mediaUrls?.length) detail.media_urls = msg.mediaUrls
    return commitJobChange(tx, ctx, job, { events: [{ type: 'job.customer_message', detail }] }).after
  })
}

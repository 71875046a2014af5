import { can, requirePermission } from '../accounts/actor'
import type { Db } from '../db/client'
import type { OperationContext } from '../operations/operation-context'
import { iso } from '../platform/clock'
import { decodeCursor, page, pageLimit } from '../platform/paging'
import { findJobOrThrow } from '../jobs/job.queries'
import type { TextMessage } from './text.model'
import { openLinksIn, type JobLinks } from '../jobs/job-links'

/** A `texts` row as SQLite returns it. */
export type RawText = Record<string, any>

/** Renders an outbox row as the API and the CLI show it (its links opened). */
export function textView(links: JobLinks, r: RawText): TextMessage {
  return {
    object: 'text', id: r.id, job_id: r.job_id, event_id: r.event_id, recipient: r.recipient, to: r.to_phone,
    template: r.template, body: openLinksIn(links, r.body), status: r.status, skip_reason: r.skip_reason, provider: r.provider,
    provider_message_id: r.provider_message_id, error: r.error, attempts: r.attempts,
    created_at: iso(r.created_at)!, updated_at: iso(r.updated_at)!,
  }
}

/** The driver's job link in a text: it lets whoever holds it act as the driver. */
const DRIVER_LINK = /\bhttps?:\/\/\S+?\/d\/[A-Za-z0-9]+/g

/**
 * Shows a driver's text to an API key: the driver's job link is a capability (it moves the
 * job as the driver), so it is never shown; the driver's number is roster data (roster:read).
 */
function forApiKey(view: TextMessage, canReadRoster: boolean): TextMessage {
  if (view.recipient !== 'driver') return view
  return { ...view, to: canReadRoster ? view.to : null, body: view.body.replace(DRIVER_LINK, '[driver link]') }
}

/** Lists a job's texts oldest first, beside its timeline; 404 outside the caller's account or sites. */
export function listJobTexts(ctx: OperationContext, jobId: string, query: { limit?: string; cursor?: string }) {
  requirePermission(ctx.actor, 'jobs:read')
  const { db, links } = ctx
  const canReadRoster = can(ctx.actor, 'roster:read')
  const job = findJobOrThrow(db, ctx.scope, jobId)
  const limit = pageLimit(query.limit)
  const [afterAt, afterId] = query.cursor ? decodeCursor<[number, string]>(query.cursor, ['number', 'string'], { idPrefix: 'txt', owner: `texts of ${job.id}` }) : [-1, '']
  const rows = db.$client.query<RawText, [string, number, number, string, number]>(
    `SELECT * FROM texts WHERE job_id = ? AND (created_at > ? OR (created_at = ? AND id > ?)) ORDER BY created_at, id LIMIT ?`,
  ).all(job.id, afterAt, afterAt, afterId, limit + 1)
  return page(rows, limit, (r) => forApiKey(textView(links, r), canReadRoster), (r) => [r.created_at, r.id, `texts of ${job.id}`])
}

/** Lists the outbox newest first for the operator CLI, optionally for one job or status. */
export function listOutbox(db: Db, links: JobLinks, filter: { jobId?: string; status?: string; limit: number }): TextMessage[] {
  const where: string[] = []
  const params: (string | number)[] = []
  if (filter.jobId) { where.push('job_id = ?'); params.push(filter.jobId) }
  if (filter.status) { where.push('status = ?'); params.push(filter.status) }
  params.push(filter.limit)
  return db.$client.query<RawText, (string | number)[]>(
    `SELECT * FROM texts ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY created_at DESC, id DESC LIMIT ?`,
  ).all(...params).map((r) => textView(links, r))
}

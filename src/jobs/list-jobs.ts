import { requirePermission } from '../accounts/actor'
import { validationFailed } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { decodeCursor, page, pageLimit, queryTime } from '../platform/paging'
import { isStatus, STATUSES } from './job-status'
import { findJobOrThrow, listJobRows } from './job.queries'
import type { ListJobsQuery, PageQuery } from './job.model'
import { jobEventView, listJobEventRows } from './job-events'
import { presentJobs, readJobJson, readJobView } from './present-job'

/** GET /jobs: newest first, cursor-paged, filtered by status, since, updated_since and external_ref. */
export function listJobs(ctx: OperationContext, query: ListJobsQuery) {
  requirePermission(ctx.actor, 'jobs:read')
  const { db, links, scope } = ctx
  const limit = pageLimit(query.limit)
  const statuses = query.status?.split(',').map((s) => s.trim()).filter(Boolean)
  if (statuses?.some((s) => !isStatus(s))) {
    throw validationFailed([{ path: 'status', message: `must be one of ${STATUSES.join(', ')}, or several of them separated by commas` }])
  }
  const after = query.cursor ? decodeCursor<[number, string]>(query.cursor, ['number', 'string'], { idPrefix: 'job' }) : undefined
  const rows = listJobRows(db, scope, {
    statuses,
    since: queryTime('since', query.since),
    updatedSince: queryTime('updated_since', query.updated_since),
    externalRef: query.external_ref,
    after,
  }, limit + 1)
  const views = presentJobs(db, links, rows.slice(0, limit))
  const env = page(rows, limit, (r) => r, (r) => [r.createdAt, r.id])
  return { ...env, data: views }
}

/** GET /jobs/{id}/events: the timeline, oldest first, cursor-paged. */
export function listJobEvents(ctx: OperationContext, id: string, query: PageQuery) {
  requirePermission(ctx.actor, 'jobs:read')
  const job = findJobOrThrow(ctx.db, ctx.scope, id)
  const limit = pageLimit(query.limit)
  const after = query.cursor ? decodeCursor<[number]>(query.cursor, ['number'], { owner: `events of ${job.id}` })[0] : 0
  return page(listJobEventRows(ctx.db, job.id, after, limit + 1), limit, jobEventView, (e) => [e.seq, `events of ${job.id}`])
}

/** GET /jobs/{id}: one job with its unit, the unit's last position and the tracking link. */
export function getJob(ctx: OperationContext, id: string) {
  requirePermission(ctx.actor, 'jobs:read')
  return readJobView(ctx.db, ctx.links, ctx.scope, id)
}

/** getJob as JSON text (the pre-routed GET /jobs/{id}: the same answer, serialised once per change of the job). */
export function getJobJson(ctx: OperationContext, id: string): string {
  requirePermission(ctx.actor, 'jobs:read')
  return readJobJson(ctx.db, ctx.links, ctx.scope, id)
}

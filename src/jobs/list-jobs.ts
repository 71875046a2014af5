import type { Db } from '../db/client'
import { validationFailed } from '../platform/errors'
import { decodeCursor, page, pageLimit, queryTime } from '../platform/paging'
import { isStatus } from './job-status'
import { findJobOrThrow, listJobRows, type JobScope } from './job.queries'
import type { ListJobsQuery, PageQuery } from './job.model'
import { jobEventView, listJobEventRows } from './job-events'
import { presentJobs } from './present-job'
import type { JobLinks } from './job-links'

/** GET /jobs: newest first, cursor-paged, filtered by status, since, updated_since and external_ref. */
export function listJobs(db: Db, links: JobLinks, scope: JobScope, query: ListJobsQuery) {
  const limit = pageLimit(query.limit)
  const statuses = query.status?.split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = statuses?.find((s) => !isStatus(s))
  if (unknown) throw validationFailed([{ path: 'status', message: `"${unknown}" is not a job status` }])
  const after = query.cursor ? decodeCursor<[number, string]>(query.cursor, ['number', 'string']) : undefined
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
export function listJobEvents(db: Db, scope: JobScope, id: string, query: PageQuery) {
  const job = findJobOrThrow(db, scope, id)
  const limit = pageLimit(query.limit)
  const after = query.cursor ? decodeCursor<[number]>(query.cursor, ['number'])[0] : 0
  return page(listJobEventRows(db, job.id, after, limit + 1), limit, jobEventView, (e) => [e.seq])
}

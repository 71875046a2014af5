import { and, asc, desc, eq, gt, gte, inArray, lt, or, type SQL } from 'drizzle-orm'
import type { Db } from '../db/client'
import { notFound } from '../platform/errors'
import { jobEvents, jobs } from './job.table'
import type { JobRow } from './job.view'

/** Which jobs a caller may see: its account, and its sites when the key is limited. */
export interface JobScope {
  accountId: string
  siteIds: string[] | null
}

const visible = (scope: JobScope): SQL =>
  scope.siteIds ? and(eq(jobs.accountId, scope.accountId), inArray(jobs.siteId, scope.siteIds))! : eq(jobs.accountId, scope.accountId)

/** Finds a job the caller may see, or throws 404 (other accounts' jobs answer exactly as unknown ones). */
export function findJobOrThrow(db: Db, scope: JobScope, id: string): JobRow {
  const row = db.select().from(jobs).where(and(eq(jobs.id, id), visible(scope))).get()
  if (!row) throw notFound('job', id)
  return row
}

/** Finds a job by its external_ref in the account (for conflict reporting). */
export function findJobByExternalRef(db: Db, accountId: string, ref: string): JobRow | undefined {
  return db.select().from(jobs).where(and(eq(jobs.accountId, accountId), eq(jobs.externalRef, ref))).get()
}

export interface JobFilter {
  statuses?: string[]
  since?: number
  updatedSince?: number
  externalRef?: string
  /** Position after which the page starts: (created_at, id) of the last job seen. */
  after?: [number, string]
}

/**
 * Lists jobs newest first by (created_at, id). The order never depends on fields that change,
 * so paging while jobs are updated neither skips nor repeats a job.
 */
export function listJobRows(db: Db, scope: JobScope, filter: JobFilter, limit: number): JobRow[] {
  return listJobsQuery(db, scope, filter, limit).all()
}

/** The query behind listJobRows (tests read its plan to prove every filter uses an index). */
export function listJobsQuery(db: Db, scope: JobScope, filter: JobFilter, limit: number) {
  const where: SQL[] = [visible(scope)]
  if (filter.statuses?.length) where.push(filter.statuses.length === 1 ? eq(jobs.status, filter.statuses[0]!) : inArray(jobs.status, filter.statuses))
  if (filter.since !== undefined) where.push(gte(jobs.createdAt, filter.since))
  if (filter.updatedSince !== undefined) where.push(gte(jobs.updatedAt, filter.updatedSince))
  if (filter.externalRef !== undefined) where.push(eq(jobs.externalRef, filter.externalRef))
  if (filter.after) {
    const [at, id] = filter.after
    where.push(or(lt(jobs.createdAt, at), and(eq(jobs.createdAt, at), lt(jobs.id, id)))!)
  }
  return db.select().from(jobs).where(and(...where)).orderBy(desc(jobs.createdAt), desc(jobs.id)).limit(limit)
}

/** Lists a job's timeline oldest first, after the given sequence number. */
export function listJobEventRows(db: Db, jobId: string, afterSeq: number, limit: number) {
  return db.select().from(jobEvents).where(and(eq(jobEvents.jobId, jobId), gt(jobEvents.seq, afterSeq))).orderBy(asc(jobEvents.seq)).limit(limit).all()
}

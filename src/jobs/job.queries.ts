import type { Db } from '../db/client'
import { notFound } from '../platform/errors'
import type { JobRow } from './job.view'
import type { OperationScope } from '../operations/operation-context'

/** Which jobs a caller may see: its account, its sites when limited, its one job when it holds a link. */
export type JobScope = OperationScope

/** A jobs row as SQLite returns it (snake_case, JSON as text). */
export type RawJob = Record<string, any>

/**
 * Maps a raw jobs row to a JobRow. Hot reads use cached bun:sqlite statements and this mapper
 * instead of drizzle's builder, which re-prepares its SQL on every call (job.queries.test.ts
 * checks the mapping against drizzle's for every column).
 */
export function toJobRow(r: RawJob): JobRow {
  return {
    id: r.id, accountId: r.account_id, siteId: r.site_id, externalRef: r.external_ref, source: r.source,
    payerType: r.payer_type, serviceType: r.service_type, urgency: r.urgency,
    customer: JSON.parse(r.customer), vehicle: JSON.parse(r.vehicle), pickup: JSON.parse(r.pickup),
    destination: r.destination, status: r.status, cancelReason: r.cancel_reason, rating: r.rating,
    ratingComment: r.rating_comment, ratedAt: r.rated_at, reopenCount: r.reopen_count, etaAt: r.eta_at,
    quoteCents: r.quote_cents, finalPriceCents: r.final_price_cents, paymentMethod: r.payment_method,
    unitId: r.unit_id, commercialAccountId: r.commercial_account_id, trackingTokenHash: r.tracking_token_hash, trackingTokenSealed: r.tracking_token_sealed,
    driverTokenHash: r.driver_token_hash, driverTokenSealed: r.driver_token_sealed,
    milestones: JSON.parse(r.milestones), eventSeq: r.event_seq, imported: r.imported === 1 || r.imported === true,
    archivedAt: r.archived_at, createdAt: r.created_at, updatedAt: r.updated_at,
  }
}

/** Tells whether the caller may see a raw jobs row: its account, its sites, its one job for a link. */
export const canSeeJob = (scope: JobScope, row: RawJob) =>
  row.account_id === scope.accountId && (!scope.siteIds || scope.siteIds.includes(row.site_id)) && (scope.jobId === undefined || scope.jobId === row.id)

/** Finds a job the caller may see, or throws 404 (other accounts' jobs answer exactly as unknown ones). */
export function findJobOrThrow(db: Db, scope: JobScope, id: string): JobRow {
  const raw = db.$client.query<RawJob, [string]>('SELECT * FROM jobs WHERE id = ?').get(id)
  if (!raw || !canSeeJob(scope, raw)) throw notFound('job', id)
  return toJobRow(raw)
}

/** Finds a job by its external_ref in the account (for conflict reporting). */
export function findJobByExternalRef(db: Db, accountId: string, ref: string): JobRow | undefined {
  const raw = db.$client.query<RawJob, [string, string]>('SELECT * FROM jobs WHERE account_id = ? AND external_ref = ?').get(accountId, ref)
  return raw ? toJobRow(raw) : undefined
}

/**
 * The jobs of the account holding any of these references (id, site, reference), read in one
 * statement: one moment's answer, even while another instance commits an import (one look-up per
 * reference could see part of it).
 */
export function jobsByExternalRefs(db: Db, accountId: string, refs: string[]): Map<string, { id: string; siteId: string }> {
  const found = new Map<string, { id: string; siteId: string }>()
  // 500 references at most (an import): well within both engines' limit on parameters.
  if (!refs.length) return found
  const rows = db.$client.query<{ id: string; site_id: string; external_ref: string }, string[]>(
    `SELECT id, site_id, external_ref FROM jobs WHERE account_id = ? AND external_ref IN (${refs.map(() => '?').join(', ')})`,
  ).all(accountId, ...refs)
  for (const r of rows) found.set(r.external_ref, { id: r.id, siteId: r.site_id })
  return found
}

export interface JobFilter {
  statuses?: string[]
  since?: number
  updatedSince?: number
  externalRef?: string
  /** Position after which the page starts: (created_at, id) of the last job seen. */
  after?: [number, string]
}

/** Below this many jobs updated since the given time, sorting them beats scanning by creation. */
const SPARSE_UPDATES = 2000

/**
 * Builds the GET /jobs query: newest first by (created_at, id), which never changes, so paging
 * while jobs are updated neither skips nor repeats a job. With updated_since the plan is
 * chosen by how many jobs match (counted on the index, up to SPARSE_UPDATES): few → take them
 * from the updated_at index and sort just those; many → walk the created_at index newest first,
 * where matches are dense. Either way a page reads a bounded number of index entries.
 */
export function listJobsQuery(db: Db, scope: JobScope, filter: JobFilter, limit: number): { sql: string; params: (string | number)[] } {
  const where: string[] = ['account_id = ?']
  const params: (string | number)[] = [scope.accountId]
  if (scope.siteIds) { where.push(`site_id IN (${scope.siteIds.map(() => '?').join(',')})`); params.push(...scope.siteIds) }
  if (scope.jobId !== undefined) { where.push('id = ?'); params.push(scope.jobId) }
  if (filter.statuses?.length) { where.push(`status IN (${filter.statuses.map(() => '?').join(',')})`); params.push(...filter.statuses) }
  if (filter.since !== undefined) { where.push('created_at >= ?'); params.push(filter.since) }
  if (filter.updatedSince !== undefined) { where.push('updated_at >= ?'); params.push(filter.updatedSince) }
  if (filter.externalRef !== undefined) { where.push('external_ref = ?'); params.push(filter.externalRef) }
  if (filter.after) { where.push('(created_at < ? OR (created_at = ? AND id < ?))'); params.push(filter.after[0], filter.after[0], filter.after[1]) }
  const order = 'ORDER BY created_at DESC, id DESC'
  const conditions = where.join(' AND ')
  if (filter.updatedSince !== undefined && filter.externalRef === undefined) {
    const { n } = db.$client.query<{ n: number }, [string, number, number]>(
      'SELECT count(*) AS n FROM (SELECT 1 FROM jobs INDEXED BY jobs_account_updated_idx WHERE account_id = ? AND updated_at >= ? LIMIT ?) AS m',
    ).get(scope.accountId, filter.updatedSince, SPARSE_UPDATES)!
    if (n < SPARSE_UPDATES) {
      return {
        sql: `SELECT * FROM jobs WHERE rowid IN (SELECT rowid FROM jobs INDEXED BY jobs_account_updated_idx WHERE ${conditions} ${order} LIMIT ?) ${order}`,
        params: [...params, limit],
      }
    }
    return { sql: `SELECT * FROM jobs INDEXED BY jobs_account_created_idx WHERE ${conditions} ${order} LIMIT ?`, params: [...params, limit] }
  }
  return { sql: `SELECT * FROM jobs WHERE ${conditions} ${order} LIMIT ?`, params: [...params, limit] }
}

/** Lists jobs per listJobsQuery. */
export function listJobRows(db: Db, scope: JobScope, filter: JobFilter, limit: number): JobRow[] {
  const { sql, params } = listJobsQuery(db, scope, filter, limit)
  return db.$client.query<RawJob, (string | number)[]>(sql).all(...params).map(toJobRow)
}

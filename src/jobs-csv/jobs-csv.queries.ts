import type { Db } from '../db/client'
import { toJobRow, type RawJob } from '../jobs/job.queries'
import type { JobRow } from '../jobs/job.view'
import type { OperationScope } from '../operations/operation-context'

/** Loads jobs by id, in the order of `ids`. */
export function jobsByIds(db: Db, ids: string[]): JobRow[] {
  if (!ids.length) return []
  const rows = db.$client.query<RawJob, string[]>(`SELECT * FROM jobs WHERE id IN (${ids.map(() => '?').join(',')})`).all(...ids)
  const byId = new Map(rows.map((r) => [r.id as string, toJobRow(r)]))
  return ids.flatMap((id) => byId.get(id) ?? [])
}

/** What the console's export selects: created in [since, until), in one of the statuses (any when empty). */
export interface ExportWindow { since?: number; until?: number; statuses: string[] }

/** One batch of the window's jobs, newest first by (created_at, id), after the position `after`. */
export function jobsInWindow(db: Db, scope: OperationScope, w: ExportWindow, after: [number, string] | null, limit: number): JobRow[] {
  const where = ['account_id = ?']
  const params: (string | number)[] = [scope.accountId]
  if (scope.siteIds) { where.push(`site_id IN (${scope.siteIds.map(() => '?').join(',')})`); params.push(...scope.siteIds) }
  if (w.since !== undefined) { where.push('created_at >= ?'); params.push(w.since) }
  if (w.until !== undefined) { where.push('created_at < ?'); params.push(w.until) }
  if (w.statuses.length) { where.push(`status IN (${w.statuses.map(() => '?').join(',')})`); params.push(...w.statuses) }
  if (after) { where.push('(created_at < ? OR (created_at = ? AND id < ?))'); params.push(after[0], after[0], after[1]) }
  params.push(limit)
  return db.$client.query<RawJob, (string | number)[]>(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`).all(...params).map(toJobRow)
}

import { validationFailed } from './errors'
import { readIsoTime } from './time'

/** Encodes a page position as an opaque cursor. */
export function encodeCursor(parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url')
}

/**
 * Decodes a cursor made by `encodeCursor`, checking its shape and, with `idPrefix`, that the id
 * it holds is of that kind (`job` for `job_…`), so that one list's cursor is not taken by another
 * list of the same shape; with `owner`, that its last part is that id (the job or endpoint whose
 * list it pages: one job's timeline cursor is not another job's). 422 if it is not one of this list's.
 */
export function decodeCursor<T extends (string | number)[]>(cursor: string, shape: ('string' | 'number')[], check: { idPrefix?: string; owner?: string } = {}): T {
  try {
    const parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    const own = check.owner === undefined ? 0 : 1
    if (Array.isArray(parts) && parts.length === shape.length + own && shape.every((type, i) => typeof parts[i] === type)
      && (check.idPrefix === undefined || String(parts[shape.length - 1]).startsWith(`${check.idPrefix}_`))
      && (check.owner === undefined || parts[shape.length] === check.owner)) return parts.slice(0, shape.length) as T
  } catch {}
  throw validationFailed([{ path: 'cursor', message: 'is not a cursor this list returned' }])
}

/** Reads `limit` (1 to 100, default 25). */
export function pageLimit(raw: string | undefined): number {
  if (raw === undefined) return 25
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > 100) throw validationFailed([{ path: 'limit', message: 'must be a whole number from 1 to 100' }])
  return n
}

/** Reads an ISO 8601 time (or a date alone, as midnight UTC) from the query; 422 naming the parameter if it is not one. */
export function queryTime(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const ms = readIsoTime(raw, { dateOnly: true })
  if (ms === null) throw validationFailed([{ path: name, message: 'must be an ISO 8601 time such as 2026-11-21T09:00:00Z (or a date, 2026-11-21), on a date that exists' }])
  return ms
}

/** Builds the list envelope from one extra row fetched beyond the limit. */
export function page<R, V>(rows: R[], limit: number, view: (r: R) => V, cursorOf: (r: R) => (string | number)[]) {
  const has_more = rows.length > limit
  const items = has_more ? rows.slice(0, limit) : rows
  return {
    object: 'list' as const,
    data: items.map(view),
    has_more,
    next_cursor: has_more ? encodeCursor(cursorOf(items[items.length - 1]!)) : null,
  }
}

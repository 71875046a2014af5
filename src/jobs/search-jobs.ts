import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { validationFailed } from '../platform/errors'
import { decodeCursor, encodeCursor } from '../platform/paging'
import { normalizePhone } from '../platform/phone'
import { readDay, startOfDayIn } from '../platform/time-zone'
import { unitsByIds } from '../units/unit.queries'
import { FINISHED, isStatus, STATUSES, type JobStatus } from './job-status'
import type { JobVehicle } from './job.table'
import type { UnitRef } from './job.view'
import { charCount, searchFold } from '../platform/chars'

/** What the jobs list asks for, as typed: every part optional, all text (a form's query string). */
export interface SearchJobsInput {
  /** Customer name, phone, plate, reference or job id. */
  q?: string
  /** First day of creation (YYYY-MM-DD, in the account's time zone), inclusive. */
  from?: string
  /** Last day of creation (YYYY-MM-DD, in the account's time zone), inclusive. */
  to?: string
  /** A status, `unfinished`, `finished`, or empty for any. */
  status?: string
  /** Archived jobs are left out unless this is true. */
  includeArchived?: boolean
  /** Where the page starts: a cursor a previous page returned. */
  cursor?: string
  /** Jobs per page, 1 to MAX_PAGE_SIZE (the list shows PAGE_SIZE; the CSV export reads larger pages). */
  pageSize?: number
}

/** One job as the jobs list shows it. */
export interface JobSearchHit {
  id: string
  createdAt: number
  status: JobStatus
  customerName: string
  customerPhone: string | null
  pickup: string
  vehicle: JobVehicle
  unit: UnitRef | null
  externalRef: string | null
  archived: boolean
}

/** A page of hits, newest first, and the cursor of the next page (null on the last). */
export interface JobSearchPage { hits: JobSearchHit[]; nextCursor: string | null }

/** The status choices besides single statuses. */
const STATUS_GROUPS = { unfinished: STATUSES.filter((s) => !FINISHED.includes(s)), finished: [...FINISHED] } as const

/** Longest search text taken, in characters. */
export const MAX_SEARCH_CHARS = 100
/** Jobs per page. */
const PAGE_SIZE = 50
/** The largest page a caller may ask for. */
const MAX_PAGE_SIZE = 1000
const PHONE_LIKE = /^[+\d\s().\-\/]+$/
const JOB_ID = /^job_[0-9a-z]{10,40}$/i

/** The parts of a search a row is tested against (see `matchesText`). */
interface TextSearch {
  /** The typed text, trimmed, case-folded. */
  folded: string
  /** A job id: nothing else is looked for. */
  id?: string
  /** The number in E.164, when the text reads as one in the account's country. */
  e164?: string
  /** Four or more digits a phone number may end with, when the text is only a phone number's characters. */
  digits?: string
  /** The text without spaces and hyphens, case-folded, for plates. */
  plate: string
}

type Row = { id: string; created_at: number; status: string; customer: string; vehicle: string; pickup: string; external_ref: string | null; archived_at: number | null; unit_id: string | null }

const fold = searchFold
const compactPlate = (s: string) => fold(s).replace(/[\s-]+/g, '')

const escapeLike = (part: string) => part.replace(/[\\%_]/g, (c) => `\\${c}`)
/** What JSON text may hold other than as typed: non-ASCII, and what JSON writes escaped (quote, backslash, controls). */
const JSON_GAPS = /[^\x20-\x7e]+|["\\]+/

/**
 * A LIKE pattern matching every text holding these characters in order, whatever stands between
 * them: a plate's spaces and hyphens (cheaper than taking them out of every job's vehicle text).
 */
const spreadPattern = (text: string) => `%${[...text.replace(new RegExp(JSON_GAPS.source, 'g'), '')].map(escapeLike).join('%')}%`

/** Tells whether a job matches the search text (the one rule; the SQL only narrows the rows down). */
function matchesText(r: Row, s: TextSearch): boolean {
  if (s.id) return r.id.toLowerCase() === s.id.toLowerCase()
  const customer = JSON.parse(r.customer) as { name: string; phone: string | null }
  if (fold(customer.name).includes(s.folded)) return true
  if (customer.phone && ((s.e164 && customer.phone === s.e164) || (s.digits && customer.phone.endsWith(s.digits)))) return true
  const plate = (JSON.parse(r.vehicle) as JobVehicle).plate
  if (plate && s.plate && compactPlate(plate).includes(s.plate)) return true
  return r.external_ref !== null && fold(r.external_ref).includes(s.folded)
}

/**
 * Searches the account's jobs, finished and (when asked) archived ones included: by customer
 * name, phone (typed any common way, or its last four or more digits), plate, reference or job
 * id; by the day created (in the account's time zone); by status or group. Newest first,
 * cursor-paged. Bad input is one 422 naming every field at fault.
 */
export function searchJobs(ctx: OperationContext, input: SearchJobsInput): JobSearchPage {
  requirePermission(ctx.actor, 'jobs:read')
  const problems: { path: string; message: string }[] = []
  const q = (input.q ?? '').normalize('NFC').trim().replace(/\s+/g, ' ')
  if (charCount(q) > MAX_SEARCH_CHARS) problems.push({ path: 'q', message: `must be at most ${MAX_SEARCH_CHARS} characters` })
  const from = input.from?.trim() ? readDay(input.from.trim()) : undefined
  const to = input.to?.trim() ? readDay(input.to.trim()) : undefined
  const zone = ctx.account.timeZone
  // A day runs from its first instant in the company's zone to the next day's (23 or 25 hours when the clocks change).
  const fromMs = from ? startOfDayIn(...from, zone) : undefined
  const toMs = to ? startOfDayIn(to[0], to[1], to[2] + 1, zone) : undefined
  if (from === null) problems.push({ path: 'from', message: 'must be a date that exists, such as 2026-11-21' })
  if (to === null) problems.push({ path: 'to', message: 'must be a date that exists, such as 2026-11-21' })
  if (fromMs !== undefined && toMs !== undefined && toMs <= fromMs) problems.push({ path: 'to', message: 'must be the same day as From or later' })
  const status = input.status?.trim() ?? ''
  let statuses: readonly string[] | undefined
  if (status === 'unfinished' || status === 'finished') statuses = STATUS_GROUPS[status]
  else if (isStatus(status)) statuses = [status]
  else if (status !== '') problems.push({ path: 'status', message: `must be unfinished, finished or one of ${STATUSES.join(', ')}` })
  let after: [number, string] | undefined
  try {
    if (input.cursor) after = decodeCursor<[number, string]>(input.cursor, ['number', 'string'], { idPrefix: 'job' })
  } catch {
    problems.push({ path: 'cursor', message: 'is not a page this list gave; start the search again' })
  }
  if (problems.length) throw validationFailed(problems)
  const limit = Math.min(Math.max(Math.trunc(input.pageSize ?? PAGE_SIZE), 1), MAX_PAGE_SIZE)

  const where = ['account_id = ?']
  const params: (string | number)[] = [ctx.scope.accountId]
  if (ctx.scope.siteIds) { where.push(`site_id IN (${ctx.scope.siteIds.map(() => '?').join(',')})`); params.push(...ctx.scope.siteIds) }
  if (fromMs !== undefined) { where.push('created_at >= ?'); params.push(fromMs) }
  if (toMs !== undefined) { where.push('created_at < ?'); params.push(toMs) }
  if (statuses) { where.push(`status IN (${statuses.map(() => '?').join(',')})`); params.push(...statuses) }
  if (!input.includeArchived) where.push('archived_at IS NULL')

  let text: TextSearch | undefined
  if (q) {
    text = { folded: fold(q), plate: compactPlate(q) }
    if (JOB_ID.test(q)) {
      text.id = q
      where.push('id = ?')
      params.push(`job_${q.slice(4).toUpperCase()}`)
    } else {
      // Each term lets through at least every job the text matches (matchesText decides), reading
      // the JSON columns as text: a search that matches one old job reads every job of the account.
      // The name and the reference through their folded copy (no accents, lower case), exactly; a
      // row from before it existed (null until the server's start fills it) goes to matchesText.
      const terms = [`search_text LIKE ? ESCAPE '\\'`, 'search_text IS NULL']
      const termParams: string[] = [`%${escapeLike(text.folded)}%`]
      if (text.plate) { terms.push(`vehicle LIKE ? ESCAPE '\\'`); termParams.push(spreadPattern(text.plate)) }
      if (PHONE_LIKE.test(q)) {
        const e164 = normalizePhone(q, ctx.account.defaultCountry)
        if (e164) { text.e164 = e164; terms.push(`customer LIKE ?`); termParams.push(`%${e164}%`) }
        const digits = q.replace(/\D/g, '')
        if (digits.length >= 4) { text.digits = digits; terms.push(`customer LIKE ?`); termParams.push(`%${digits}%`) }
      }
      where.push(`(${terms.join(' OR ')})`)
      params.push(...termParams)
    }
  }

  // Newest first by (created_at, id), which never changes: a page boundary neither skips nor repeats a job.
  const read = (start: [number, string] | undefined) => ctx.db.$client.query<Row, (string | number)[]>(
    `SELECT id, created_at, status, customer, vehicle, pickup, external_ref, archived_at, unit_id FROM jobs
    WHERE ${where.join(' AND ')}${start ? ' AND (created_at < ? OR (created_at = ? AND id < ?))' : ''}
    ORDER BY created_at DESC, id DESC LIMIT ?`,
  ).all(...params, ...(start ? [start[0], start[0], start[1]] : []), limit + 1)
  const found: Row[] = []
  // The SQL may let through a row the text does not match (letters SQLite cannot fold): read on until a page is full.
  for (;;) {
    const rows = read(after)
    for (const r of rows) if (!text || matchesText(r, text)) found.push(r)
    if (found.length > limit || rows.length <= limit) break
    const last = rows[rows.length - 1]!
    after = [last.created_at, last.id]
  }

  const page = found.slice(0, limit)
  const units = unitsByIds(ctx.db, page.flatMap((r) => (r.unit_id ? [r.unit_id] : [])))
  const hits = page.map((r): JobSearchHit => {
    const customer = JSON.parse(r.customer) as { name: string; phone: string | null }
    const unit = r.unit_id ? units.get(r.unit_id) : undefined
    return {
      id: r.id, createdAt: r.created_at, status: r.status as JobStatus, customerName: customer.name, customerPhone: customer.phone ?? null,
      pickup: (JSON.parse(r.pickup) as { location: string }).location, vehicle: JSON.parse(r.vehicle) as JobVehicle,
      unit: unit ? { id: unit.id, name: unit.name } : null, externalRef: r.external_ref, archived: r.archived_at !== null,
    }
  })
  const last = page[page.length - 1]
  return { hits, nextCursor: found.length > limit && last ? encodeCursor([last.created_at, last.id]) : null }
}

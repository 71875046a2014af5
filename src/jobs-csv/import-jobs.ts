import { requirePermission } from '../accounts/actor'
import { charCount } from '../platform/chars'
import { inTransaction } from '../db/client'
import { createJob, readCreateInput, type HistoricJob } from '../jobs/create-job'
import { FINISHED, isFinished, NEEDS_UNIT, STATUSES, type JobStatus } from '../jobs/job-status'
import { CreateJobBody, UpdateJobBody } from '../jobs/job.model'
import { jobsByExternalRefs } from '../jobs/job.queries'
import type { OperationContext } from '../operations/operation-context'
import { iso } from '../platform/clock'
import { AppError, validationProblemsOf } from '../platform/errors'
import { parseDollars } from '../platform/money'
import { readIsoTime } from '../platform/time'
import { compileChecker, type FieldProblem } from '../platform/validation'
import { listUnits } from '../units/unit.queries'
import { columnNamed, CSV_COLUMNS, MILESTONE_COLUMNS, REQUIRED_COLUMNS, type CsvColumn } from './csv-columns'
import { CsvShapeError, decodeCsv, detectDelimiter, readCell, readRecords, type CsvRecord } from './csv-text'
import { findCommercialAccountByName } from '../commercial-accounts/find-commercial-account-by-name'

/** The largest file an import takes: 2 MB. */
export const IMPORT_MAX_BYTES = 2 * 1024 * 1024
/** The most jobs (data rows) one file may hold. */
export const IMPORT_MAX_ROWS = 500

/** One problem of a file: the row as a spreadsheet numbers it (header = 1; null for the whole file) and the column (null for the whole row or file). */
export interface RowError { row: number | null; column: string | null; message: string }

/** What an import (or its dry run) found and did. */
export interface ImportResult {
  dryRun: boolean
  /** Data rows read (blank rows aside). */
  rows: number
  /** Jobs written: 0 on a dry run or a refusal. */
  imported: number
  jobIds: string[]
  /** Every problem; the import writes nothing while there is one. */
  errors: RowError[]
}

/** The refusal of a file over IMPORT_MAX_BYTES (the console says it without reading such a file). */
export function tooLargeError(bytes: number, opts: { atLeast?: boolean } = {}): RowError {
  return { row: null, column: null, message: `The file is ${opts.atLeast ? 'more than ' : ''}${(opts.atLeast ? IMPORT_MAX_BYTES : bytes).toLocaleString('en-US')} bytes; at most 2 MB (${IMPORT_MAX_BYTES.toLocaleString('en-US')} bytes) can be imported at once. Split it into smaller files.` }
}

type Cell = string | number | boolean | null
const checkCreate = compileChecker(CreateJobBody, 'body')
const checkUpdate = compileChecker(UpdateJobBody, 'body')
const UNIT_STATUSES = NEEDS_UNIT.filter((s) => !isFinished(s))
const NO_ZONE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/
const HAS_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i
const TIME_EXAMPLE = 'such as 2026-11-21T09:30:00Z or 2026-11-21T01:30:00-08:00'

/** Reads one cell by its column's kind: the value (null when blank) or why it cannot be read. */
function readValue(col: CsvColumn, raw: string): { value: Cell } | { error: string } {
  const s = readCell(raw).trim()
  if (s === '') return { value: null }
  switch (col.kind) {
    case 'text': return { value: s }
    case 'time': {
      // A space between date and time is how spreadsheets and people write it.
      const t = s.replace(/^(\d{4}-\d{2}-\d{2}) (\d)/, '$1T$2')
      const ms = readIsoTime(t)
      if (ms !== null) return { value: ms }
      if (NO_ZONE.test(t)) return { error: `has no time zone: write the time with Z (UTC) or its offset, ${TIME_EXAMPLE}` }
      if (HAS_ZONE.test(t)) return { error: 'is not a date and time that exists' }
      return { error: `is not a time: write ISO 8601 with a zone, ${TIME_EXAMPLE}` }
    }
    case 'cents': return /^\d{1,12}$/.test(s) ? { value: Number(s) } : { error: 'must be a whole number of cents, such as 18500 for $185.00' }
    case 'dollars': {
      const cents = parseDollars(s)
      return typeof cents === 'number' ? { value: cents } : { error: 'must be an amount in dollars, such as 185.00' }
    }
    case 'number': return /^-?\d{1,3}(\.\d+)?$/.test(s) ? { value: Number(s) } : { error: 'must be a number, such as 45.5231' }
    case 'whole': return /^\d{1,6}$/.test(s) ? { value: Number(s) } : { error: 'must be a whole number' }
    case 'boolean': {
      const b = s.toLowerCase()
      if (['true', 'yes', 'y', '1'].includes(b)) return { value: true }
      if (['false', 'no', 'n', '0'].includes(b)) return { value: false }
      return { error: 'must be true or false' }
    }
  }
}

/** A row that passed every check, ready to be written. */
interface Prepared { row: number; body: CreateJobBody; createdAt: number; historic: HistoricJob; externalRef: string | null }

/** What every row is checked against: the header, the clock, the account's units. */
interface Env {
  ctx: OperationContext
  now: number
  header: (CsvColumn | null)[]
  /** The column a money field was given in (cents or dollars). */
  moneyColumn: { quote: string; final: string }
  units: Map<string, { id: string; name: string }[]>
}

/** Checks one data row; every problem is reported (at most one per column). */
function checkRow(env: Env, rec: CsvRecord): { prepared?: Prepared; errors: RowError[] } {
  const errors = new Map<string, string>()
  const add = (column: string, message: string) => { if (!errors.has(column)) errors.set(column, message) }
  const values = new Map<string, Cell>()
  let extra = 0
  rec.cells.forEach((raw, i) => {
    const col = env.header[i]
    if (i >= env.header.length) { if (raw.trim() !== '') extra++; return }
    if (!col) return
    const read = readValue(col, raw)
    if ('error' in read) add(col.name, read.error)
    else values.set(col.name, read.value)
  })
  const list: RowError[] = []
  if (extra) list.push({ row: rec.row, column: null, message: `has more cells than the header has columns (${rec.cells.length} for ${env.header.length}); a cell holding a comma must be in double quotes` })
  const str = (n: string) => (typeof values.get(n) === 'string' ? (values.get(n) as string) : null)
  const num = (n: string) => (typeof values.get(n) === 'number' ? (values.get(n) as number) : null)
  const money = (field: 'quote' | 'final') => num(env.moneyColumn[field])

  // The body POST /jobs takes, checked by its own schema and its own normalisation.
  const body = {
    external_ref: str('external_ref'), source: str('source'), payer_type: str('payer_type'), service_type: str('service_type'), urgency: str('urgency'),
    customer: { name: str('customer.name') ?? '', phone: str('customer.phone'), sms_consent: values.get('customer.sms_consent') === true },
    vehicle: Object.fromEntries(['year', 'make', 'model', 'color', 'plate', 'vin', 'drive_type'].map((k) => [k, str(`vehicle.${k}`)])),
    pickup: { location: str('pickup.location') ?? '', lat: num('pickup.lat'), lng: num('pickup.lng') },
    destination: str('destination'),
    eta_at: iso(num('eta_at')),
    quote_cents: money('quote'),
  }
  const columnOf = (path: string) => (path === 'quote_cents' ? env.moneyColumn.quote : path === 'final_price_cents' ? env.moneyColumn.final : path.replace(/^body\.?/, ''))
  if (!str('customer.name')) add('customer.name', 'must not be empty')
  if (!str('pickup.location')) add('pickup.location', 'must not be empty')
  const problems: FieldProblem[] = [...(checkCreate(body) ?? []), ...(checkUpdate({ final_price_cents: money('final'), payment_method: str('payment_method') }) ?? [])]
  // A blank cell is the API's null.
  for (const p of problems) add(columnOf(p.path), p.message.replace(/, or null$/, ', or empty'))
  // Every error of the row: the operation's own checks (a phone that cannot be texted...) beside the schema's.
  for (const f of validationProblemsOf(() => readCreateInput(env.ctx, body as CreateJobBody))) add(columnOf(f.path), f.message)

  // The history: a status of the table, its times in order and not in the future.
  const rawStatus = str('status')?.toLowerCase() ?? null
  const status = rawStatus && (STATUSES as readonly string[]).includes(rawStatus) ? rawStatus as JobStatus : null
  if (!status && !errors.has('status')) add('status', `${rawStatus ? 'must be' : 'is required: one of'} ${rawStatus ? 'one of ' : ''}${STATUSES.join(', ')}`)
  const createdAt = num('created_at')
  if (createdAt === null && !errors.has('created_at')) add('created_at', `is required: when the job was created, ${TIME_EXAMPLE}`)
  const past = (name: string) => {
    const at = num(name)
    if (at === null) return
    if (at > env.now) add(name, `is later than now (${iso(env.now)}): an imported job is history`)
    else if (createdAt !== null && name !== 'created_at' && at < createdAt) add(name, `is before created_at (${iso(createdAt)})`)
  }
  for (const name of ['created_at', ...MILESTONE_COLUMNS, 'rated_at', 'archived_at']) past(name)
  const milestones: Record<string, number> = {}
  for (const m of MILESTONE_COLUMNS) { const at = num(m); if (at !== null) milestones[m] = at }
  if (status && createdAt !== null) {
    const own = `${status}_at`
    if (milestones[own] === undefined && !errors.has(own)) {
      // Creating a job stamps its first status at once. A later status whose time the file does not
      // give (a cancelled row with only created_at, as a history export often has) happened at or
      // after every time the row gives: it takes the latest of them, so the job's times stay in order.
      milestones[own] = Math.max(createdAt, ...Object.values(milestones))
    }
    const finishedTimes = FINISHED.map((s) => milestones[`${s}_at`]).filter((t): t is number => t !== undefined)
    if (isFinished(status)) milestones.closed_at ??= Math.min(...finishedTimes)
    else if ((finishedTimes.length || milestones.closed_at !== undefined) && milestones.reopened_at === undefined && !errors.has('reopened_at')) {
      add('reopened_at', `is required: a job that is ${status} now but has a finished time was reopened since`)
    }
  }
  const reopenCount = num('reopen_count') ?? (milestones.reopened_at !== undefined ? 1 : 0)
  if (milestones.reopened_at !== undefined && reopenCount < 1) add('reopen_count', 'must be at least 1 when reopened_at is set')

  const cancelReason = str('cancel_reason')
  if (status === 'cancelled' && (!cancelReason || charCount(cancelReason) < 3 || charCount(cancelReason) > 500)) add('cancel_reason', 'is required for a cancelled job: 3 to 500 characters')
  else if (status === 'goa' && cancelReason && (charCount(cancelReason) < 3 || charCount(cancelReason) > 500)) add('cancel_reason', 'must be 3 to 500 characters')
  else if (status && status !== 'cancelled' && status !== 'goa' && cancelReason) add('cancel_reason', 'can only be set on a cancelled or goa job')

  const unitName = str('unit')
  let unitId: string | null = null
  if (unitName) {
    const found = env.units.get(unitName.toLowerCase()) ?? []
    if (found.length === 1) unitId = found[0]!.id
    else add('unit', found.length ? 'names more than one unit; give them different names first' : 'names no unit of this account')
  } else if (status && (UNIT_STATUSES as readonly string[]).includes(status)) {
    add('unit', `is required for a ${status} job (a unit holds it): name one of your units`)
  }
  const accountName = str('commercial_account')
  let commercialAccountId: string | null = null
  if (accountName) {
    const found = findCommercialAccountByName(env.ctx.db, env.ctx.scope.accountId, accountName)
    if (found) commercialAccountId = found.id
    else add('commercial_account', 'names no commercial account in your directory')
  }

  const rating = num('rating')
  const ratingComment = str('rating_comment')
  if (rating !== null && (rating < 1 || rating > 5)) add('rating', 'must be a whole number from 1 to 5')
  else if (rating !== null && status && status !== 'completed') add('rating', 'can only be set on a completed job')
  if (ratingComment !== null && rating === null) add('rating_comment', 'needs a rating')
  else if (ratingComment !== null && charCount(ratingComment) > 1000) add('rating_comment', 'must be at most 1000 characters')
  if (num('rated_at') !== null && rating === null) add('rated_at', 'needs a rating')

  for (const [column, message] of errors) list.push({ row: rec.row, column, message })
  if (list.length || !status || createdAt === null) return { errors: list }
  return {
    errors: [],
    prepared: {
      row: rec.row, body: body as CreateJobBody, createdAt, externalRef: body.external_ref,
      historic: {
        status, milestones, cancelReason, finalPriceCents: money('final'), paymentMethod: str('payment_method'), unitId, commercialAccountId,
        rating, ratingComment, ratedAt: rating !== null ? num('rated_at') ?? milestones.completed_at ?? null : null, reopenCount, archivedAt: num('archived_at'),
      },
    },
  }
}

/** Reads the header: each cell's column (null for the ignored `id`), or the header's problems. */
function readHeader(rec: CsvRecord): { header: (CsvColumn | null)[]; moneyColumn: Env['moneyColumn']; errors: RowError[] } {
  const errors: RowError[] = []
  const names = rec.cells.map((c) => c.trim().toLowerCase())
  const header = names.map((n) => (n === 'id' ? null : columnNamed(n) ?? null))
  const unknown = names.filter((n, i) => n !== 'id' && !header[i] && n !== '')
  for (const n of unknown) errors.push({ row: 1, column: n, message: 'is not a column this import knows; the template lists them all' })
  names.forEach((n, i) => {
    if (n === '' && rec.cells.slice(i).some((c) => c.trim() !== '')) errors.push({ row: 1, column: null, message: `column ${i + 1} has no name in the header` })
  })
  for (const n of new Set(names.filter((n, i) => n !== '' && names.indexOf(n) !== i))) errors.push({ row: 1, column: n, message: 'appears twice in the header' })
  for (const n of REQUIRED_COLUMNS) if (!names.includes(n)) errors.push({ row: 1, column: n, message: 'is missing: every file needs this column' })
  const pick = (field: 'quote' | 'final_price') => {
    const both = names.includes(`${field}_cents`) && names.includes(`${field}_dollars`)
    if (both) errors.push({ row: 1, column: `${field}_dollars`, message: `and ${field}_cents are both in the header: keep one` })
    return names.includes(`${field}_dollars`) ? `${field}_dollars` : `${field}_cents`
  }
  return { header, moneyColumn: { quote: pick('quote'), final: pick('final_price') }, errors }
}

/**
 * Imports jobs from a CSV file, or with `dryRun` only checks it: one operation for the dashboard
 * and the console. The file is refused whole over 2 MB or 500 data rows; every row is checked
 * as POST /jobs checks a body, plus the history rules (docs/csv.md), and a reference already in
 * the file or on the account is a row error. Then every job is written in ONE transaction,
 * through the same create as every job (createJob with its history): each keeps its status and
 * times, is `imported`, emits job.created with detail.imported true (dated its created_at), and
 * texts no one. Any error: nothing is written.
 */
export function importJobs(ctx: OperationContext, bytes: Uint8Array, opts: { dryRun: boolean }): ImportResult {
  const checked = checkImport(ctx, bytes, opts)
  return 'done' in checked ? checked.done : writeImport(ctx, checked.checked, bytes)
}

/** What `checkImport` found ready to write: every row passed. */
export interface CheckedImport { rows: number; prepared: Prepared[] }

/**
 * The first half of `importJobs`: reads and checks the file (no write), and answers at once
 * (`done`) when a row fails, the file is refused, or it is a dry run; otherwise hands over the rows.
 */
export function checkImport(ctx: OperationContext, bytes: Uint8Array, opts: { dryRun: boolean }): { done: ImportResult } | { checked: CheckedImport } {
  requirePermission(ctx.actor, 'jobs:write')
  const result = (errors: RowError[], rows = 0): { done: ImportResult } => ({ done: { dryRun: opts.dryRun, rows, imported: 0, jobIds: [], errors } })
  if (bytes.byteLength > IMPORT_MAX_BYTES) return result([tooLargeError(bytes.byteLength)])
  const { text } = decodeCsv(bytes)
  if (text.trim() === '') return result([{ row: null, column: null, message: 'The file is empty: it needs a header row and at least one job.' }])
  let records: CsvRecord[]
  try {
    records = readRecords(text, detectDelimiter(text))
  } catch (err) {
    if (err instanceof CsvShapeError) return result([{ row: err.row, column: null, message: err.message }])
    throw err
  }
  const head = readHeader(records[0]!)
  const data = records.slice(1).filter((r) => r.cells.some((c) => c.trim() !== ''))
  if (data.length > IMPORT_MAX_ROWS) {
    return result([{ row: null, column: null, message: `The file has ${data.length} rows of jobs; at most ${IMPORT_MAX_ROWS} rows can be imported at once. Split it into smaller files.` }], data.length)
  }
  if (head.errors.length) return result(head.errors, data.length)
  if (!data.length) return result([{ row: null, column: null, message: 'The file has a header but no jobs.' }])

  const units = new Map<string, { id: string; name: string }[]>()
  for (const u of listUnits(ctx.db, ctx.scope, 10_000)) {
    const k = u.name.trim().toLowerCase()
    units.set(k, [...(units.get(k) ?? []), { id: u.id, name: u.name }])
  }
  const env: Env = { ctx, now: ctx.clock.now(), header: head.header, moneyColumn: head.moneyColumn, units }
  const errors: RowError[] = []
  const prepared: Prepared[] = []
  const refRows = new Map<string, number>()
  const refAt = env.header.findIndex((c) => c?.name === 'external_ref')
  const refOf = (rec: CsvRecord) => (refAt >= 0 ? readCell(rec.cells[refAt] ?? '').trim() : '')
  const taken = jobsByExternalRefs(ctx.db, ctx.scope.accountId, [...new Set(data.map(refOf).filter(Boolean))])
  for (const rec of data) {
    const checked = checkRow(env, rec)
    errors.push(...checked.errors)
    // A reference is checked on every row, passed or not: a later duplicate names the first row either way.
    const ref = refOf(rec)
    let refused = false
    if (ref) {
      const first = refRows.get(ref)
      const existing = first === undefined ? taken.get(ref) : undefined
      if (first !== undefined) errors.push({ row: rec.row, column: 'external_ref', message: `is also on row ${first}: a reference names one job` })
      else if (existing) {
        const seen = !ctx.scope.siteIds || ctx.scope.siteIds.includes(existing.siteId)
        errors.push({ row: rec.row, column: 'external_ref', message: `is already the reference of another job of this account${seen ? ` (${existing.id})` : ''}` })
      }
      refused = first !== undefined || existing !== undefined
      if (first === undefined) refRows.set(ref, rec.row)
    }
    if (checked.prepared && !refused) prepared.push(checked.prepared)
  }
  errors.sort((a, b) => (a.row ?? 0) - (b.row ?? 0) || columnRank(a.column) - columnRank(b.column))
  if (errors.length || opts.dryRun) return result(errors, data.length)
  return { checked: { rows: data.length, prepared } }
}

/**
 * The second half: writes checked rows in one transaction (or inside the caller's); a row refused
 * meanwhile writes nothing. Refused, the file `bytes` is checked again against what changed (an
 * import of the same file by another instance, say), so the answer lists every row's problem as
 * if the two imports had run one after the other, not only the first row the write reached.
 */
export function writeImport(ctx: OperationContext, checked: CheckedImport, bytes: Uint8Array): ImportResult {
  const written = writeAll(ctx, checked.prepared)
  if ('error' in written) {
    const again = checkImport(ctx, bytes, { dryRun: true })
    const errors = 'done' in again && again.done.errors.length ? again.done.errors : [written.error]
    return { dryRun: false, rows: checked.rows, imported: 0, jobIds: [], errors }
  }
  return { dryRun: false, rows: checked.rows, imported: written.ids.length, jobIds: written.ids, errors: [] }
}

const columnRank = (name: string | null) => (name === null ? -1 : CSV_COLUMNS.findIndex((c) => c.name === name))

/** A row the write refused: it ends the transaction (nothing is kept) and names the row. */
class RowRefused extends Error {
  constructor(readonly row: number, readonly refusal: AppError) { super(refusal.message) }
}

/** Writes every row in one transaction; a refusal of any row (a reference taken meanwhile, say) writes nothing. */
function writeAll(ctx: OperationContext, rows: Prepared[]): { ids: string[] } | { error: RowError } {
  try {
    const ids = inTransaction(ctx.db, () => rows.map((p) => {
      try {
        return createJob(ctx, p.body, { createdAt: p.createdAt, historic: p.historic }).id
      } catch (err) {
        if (err instanceof AppError) throw new RowRefused(p.row, err)
        throw err
      }
    }))
    return { ids }
  } catch (err) {
    if (!(err instanceof RowRefused)) throw err
    const field = (err.refusal.details.fields as FieldProblem[] | undefined)?.[0]
    return { error: { row: err.row, column: field?.path ?? (err.refusal.errorCode === 'conflict' ? 'external_ref' : null), message: field?.message ?? err.refusal.message } }
  }
}

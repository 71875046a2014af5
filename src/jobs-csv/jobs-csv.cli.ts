import { closeSync, fchmodSync, fstatSync, openSync, readSync, writeSync } from 'node:fs'
import { isatty } from 'node:tty'
import type { Command } from '../cli/cli'
import { asUsage, DB_OPTIONS, printJson, UsageError, withDb } from '../cli/cli'
import { findAccountById } from '../accounts/account.queries'
import { ensureDefaultAccount } from '../accounts/create-account'
import type { Db } from '../db/client'
import { createContextFactory } from '../operations/context-factory'
import { systemClock } from '../platform/clock'
import type { JobLinks } from '../jobs/job-links'
import { exportJobsInWindow, readExportWindow } from './export-jobs'
import { importJobs, IMPORT_MAX_BYTES, tooLargeError, type ImportResult, type RowError } from './import-jobs'

/** The operator's context on `--account` (or the default account). */
function operatorOn(db: Db, links: JobLinks, accountId: string | undefined) {
  const account = accountId ? findAccountById(db, accountId) : undefined
  if (accountId && !account) throw new UsageError(`no account ${accountId} (towline accounts list shows them)`)
  return createContextFactory({ db, clock: systemClock, links }).forOperator(account?.id ?? ensureDefaultAccount(db, systemClock).account.id)
}

/** One problem as the console prints it: `row 3, customer.name: must not be empty`; what came from the file can hold no terminal control characters (they are written \u001b). */
export const errorLine = (e: RowError) => `${e.row === null ? 'file' : `row ${e.row}`}${e.column ? `, ${e.column}` : ''}: ${e.message}`
  .replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`)

/**
 * Reads the file for an import, or says it is too large without reading past the limit. `-` is
 * standard input; a pipe or other stream (`/dev/stdin`, `<(...)`) is read to its end.
 */
function readImportFile(path: string): Uint8Array | RowError {
  let fd: number
  try { fd = path === '-' ? 0 : openSync(path, 'r') } catch { throw new UsageError(`cannot read ${path}`) }
  if (fd === 0 && isatty(0)) process.stderr.write('Reading the CSV from standard input: paste it, then press Ctrl-D (or give a file instead of -).\n')
  try {
    const stat = fstatSync(fd)
    if (stat.isDirectory()) throw new UsageError(`cannot read ${path}: it is a folder`)
    if (stat.isFile()) {
      if (stat.size > IMPORT_MAX_BYTES) return tooLargeError(stat.size)
      const bytes = new Uint8Array(stat.size)
      readSync(fd, bytes, 0, stat.size, 0)
      return bytes
    }
    // A stream says its size only at its end: read one byte past the limit at most.
    const chunks: Uint8Array[] = []
    let total = 0
    for (;;) {
      const chunk = new Uint8Array(64 * 1024)
      const n = readSync(fd, chunk, 0, chunk.length, null)
      if (n === 0) break
      chunks.push(chunk.subarray(0, n))
      total += n
      if (total > IMPORT_MAX_BYTES) return tooLargeError(total, { atLeast: true })
    }
    return Buffer.concat(chunks)
  } finally {
    if (fd !== 0) closeSync(fd)
  }
}

const jobsImport: Command = {
  name: 'jobs import',
  summary: 'Import past jobs from a CSV file (at most 500 rows, 2 MB); --dry-run only checks it',
  usage: `towline jobs import FILE|- [--dry-run] [--account ID] [--db FILE] [--json]

Imports jobs from a CSV file, as the dashboard's Import page does (docs/csv.md: the columns,
times, money, limits): every row is checked, and the jobs are written in one transaction only
when no row has an error. Each keeps its status and times, is marked imported, emits job.created
with detail.imported true, and texts no one. Errors are printed one a line
(row 3, customer.name: must not be empty), rows numbered as a spreadsheet shows them (the header
is row 1). FILE - reads standard input. --dry-run checks and writes nothing. Exit 0 only when every row passes (dry run or
not), 1 when the file has errors (nothing written), 2 for a usage mistake.`,
  options: { ...DB_OPTIONS, 'dry-run': { type: 'boolean' }, account: { type: 'string' } },
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, (db, _config, links) => {
    const path = positionals[0]
    if (!path) throw new UsageError('which file? give the CSV file to import')
    const ctx = operatorOn(db, links, values.account)
    const dryRun = Boolean(values['dry-run'])
    const bytes = readImportFile(path)
    const result: ImportResult = bytes instanceof Uint8Array ? importJobs(ctx, bytes, { dryRun }) : { dryRun, rows: 0, imported: 0, jobIds: [], errors: [bytes] }
    if (values.json) printJson({ dry_run: result.dryRun, rows: result.rows, imported: result.imported, job_ids: result.jobIds, errors: result.errors })
    else if (result.errors.length) {
      process.stdout.write(result.errors.map(errorLine).join('\n') + '\n')
      process.stderr.write(`${result.errors.length} ${result.errors.length === 1 ? 'error' : 'errors'}; nothing was ${dryRun ? 'written (dry run)' : 'imported'}.\n`)
    } else if (dryRun) process.stdout.write(`${result.rows === 1 ? 'The 1 row passes' : `All ${result.rows} rows pass`}; nothing was written (dry run).\n`)
    else process.stdout.write(`Imported ${result.imported} ${result.imported === 1 ? 'job' : 'jobs'}.\n`)
    return result.errors.length ? 1 : 0
  }),
}

const jobsExport: Command = {
  name: 'jobs export',
  summary: 'Write jobs as CSV (every milestone time, unit, commercial account, final price)',
  usage: `towline jobs export [--since TIME] [--until TIME] [--status S]... [--account ID] [--out FILE] [--db FILE]

Writes the account's jobs as CSV (docs/csv.md), newest first, archived ones included: the columns
the import reads, so a file exported here imports elsewhere as the same jobs. --since and --until
take ISO 8601 times with a zone (2026-11-21T09:30:00Z) or days (2026-11-21, the whole day in the
company's time zone, see accounts update --time-zone): jobs created at or after --since and
before --until, or on the --until day (--since 2026-11-21 --until 2026-11-21 is that one day). --status S picks statuses (repeat it, or a comma
list). Without --out the CSV goes to stdout; --out FILE writes it there, readable by its owner only.`,
  options: { db: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, status: { type: 'string', multiple: true }, account: { type: 'string' }, out: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, async (db, _config, links) => {
    const ctx = operatorOn(db, links, values.account)
    const window = await asUsage(() => readExportWindow({ since: values.since, until: values.until, statuses: values.status }, ctx.account.timeZone))
    const chunks = exportJobsInWindow(ctx, window)
    if (values.out) {
      // Customers' names and phones: the file is its owner's only, from its first byte.
      const fd = openSync(values.out, 'w', 0o600)
      try {
        fchmodSync(fd, 0o600)
        for (const chunk of chunks) writeSync(fd, chunk)
      } finally { closeSync(fd) }
      process.stderr.write(`Wrote ${values.out}.\n`)
      return
    }
    const out = Bun.stdout.writer()
    for (const chunk of chunks) {
      out.write(chunk)
      await out.flush()
    }
    await out.end()
  }),
}

/** Operator commands of the CSV import and export. */
export const jobsCsvCommands: Command[] = [jobsImport, jobsExport]

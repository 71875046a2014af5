import { existsSync, realpathSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError, defaultLinkKeyFile, readConfig, type Config } from '../config'
import { openDatabase, closeDatabase, type Db } from '../db/client'
import { embeddedMigrations, migrateDatabase, pendingMigrations } from '../db/migrate'
import { embeddedPgMigrations } from '../db/pg/migrate-postgres'
import { checkLinkKeyPath, migrateWithKey, openLinkKey, recordLinkKey } from '../db/link-key'
import type { JobLinks } from '../jobs/job-links'
import { AppError } from '../platform/errors'
import { findAccountById, type AccountRow } from '../accounts/account.queries'
import { ensureDefaultAccount } from '../accounts/create-account'
import { systemClock } from '../platform/clock'
import { describeDatabase, isPostgresUrl } from '../db/location'
import { COMPILED } from '../platform/compiled'

/** A command-line mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>

/** One `towline` command: its usage text, options and what it does. */
export interface Command {
  name: string
  summary: string
  usage: string
  options: OptionSpec
  positionals?: number
  run(args: { values: Record<string, any>; positionals: string[] }): Promise<number | void> | number | void
}

/** Options every command that touches the database accepts. */
export const DB_OPTIONS: OptionSpec = { db: { type: 'string' }, json: { type: 'boolean' } }

/** Parses argv for a command, refusing unknown options. */
export function parseFor(cmd: Command, argv: string[]) {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
    if (cmd.positionals !== undefined && positionals.length > cmd.positionals) throw new UsageError(`unexpected argument "${positionals[cmd.positionals]}"`)
    return { values: values as Record<string, any>, positionals }
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError((err as Error).message.split('\n')[0]!)
  }
}

/** Reads settings for an operator command from the environment and its flags. */
export function configFrom(values: Record<string, any>): Config {
  return readConfig(process.env, values)
}

/**
 * How an operator runs a command of this very program: the binary's path; `npm run towline --` in
 * the source tree; for the package, `npx towline` where this folder has it installed, else Bun on
 * this copy's own entry (never a bare `bunx towline`, which would fetch whatever package holds that
 * name on the registry).
 */
export function selfCommand(): string {
  if (COMPILED) return process.execPath
  const entry = process.argv[1] ?? ''
  if (!entry.endsWith('bin/towline.ts')) return 'npm run towline --'
  const installed = join(process.cwd(), 'node_modules', 'towline', 'bin', 'towline.ts')
  return existsSync(installed) && realpathSync(installed) === realpathSync(entry) ? 'npx towline' : `bun ${entry}`
}

/**
 * A command as the operator should type it to reach this database: the program (selfCommand),
 * with TOWLINE_LINK_KEY_FILE in front when serve was given a key file of its own (a command
 * without it would look for the default one and be refused), then `sub` and ` --db` when needed.
 */
export function commandFor(config: Config, sub: string): string {
  const key = config.linkKeyFile === defaultLinkKeyFile(config.dbPath) ? '' : `TOWLINE_LINK_KEY_FILE=${config.linkKeyFile} `
  return `${key}${selfCommand()} ${sub}${dbFlag(config)}`
}

/** ` --db FILE` when the database is not the default one, so a printed command hits the same file (a URL without its password). */
export function dbFlag(config: Config): string {
  return config.dbPath === './towline.db' ? '' : ` --db ${describeDatabase(config.dbPath)}`
}

/**
 * Opens the database for an operator command, runs `fn`, then closes it. Only `create: true`
 * commands (migrate, demo) may make a new database or upgrade an older one: for the others a
 * missing file is a typo or the wrong folder (an empty database would hide that), and a database
 * an older towline made is refused until `migrate` upgrades it; `asItIs` (backup) takes it as it is.
 */
export async function withDb<T>(values: Record<string, any>, fn: (db: Db, config: Config, links: JobLinks, opened: { applied: string[]; keyCreated: boolean }) => T | Promise<T>, opts: { create?: boolean; asItIs?: boolean } = {}): Promise<T> {
  const config = configFrom(values)
  const create = opts.create ?? false
  const missing = () => new ConfigError(`no database at ${describeDatabase(config.dbPath)} (nothing was created); to start one run ${selfCommand()} migrate${dbFlag(config)} (serve creates it too), or point --db or TOWLINE_DB at yours`)
  // An empty file is no database either (opening it would write SQLite's header into it).
  if (!create && !isPostgresUrl(config.dbPath) && (!existsSync(config.dbPath) || statSync(config.dbPath).size === 0)) throw missing()
  checkLinkKeyPath(config.linkKeyFile, config.dbPath)
  const db = openDatabase(config.dbPath, { create })
  try {
    if (!create) {
      // A database without towline's tables (an empty file, another program's) is the wrong one,
      // or one never migrated; one made by an older towline is upgraded only when asked (migrate,
      // serve), after a backup: a listing command must not change it, irreversibly, on the side.
      const pending = pendingMigrations(db)
      const all = (db.engine === 'postgres' ? embeddedPgMigrations() : embeddedMigrations()).length
      if (pending.length === all) throw missing()
      if (pending.length && !opts.asItIs) {
        throw new ConfigError(`the database at ${describeDatabase(config.dbPath)} was made by an older towline: ${pending.length} migration${pending.length === 1 ? '' : 's'} to apply (${pending[0]}${pending.length > 1 ? ` to ${pending.at(-1)}` : ''}); nothing was changed. Back it up (${selfCommand()} backup FILE${dbFlag(config)}), then run ${selfCommand()} migrate${dbFlag(config)} (serve also does it)`)
      }
    }
    const opened = openLinkKey(db, config.linkKeyFile)
    const { key } = opened
    let applied: string[] = []
    if (!opts.asItIs) {
      applied = migrateWithKey(config.linkKeyFile, opened, () => migrateDatabase(db, { linkKey: () => key }))
      recordLinkKey(db, config.linkKeyFile, opened, Date.now())
    }
    return await fn(db, config, { publicUrl: config.publicUrl, key }, { applied, keyCreated: opened.created })
  } finally {
    closeDatabase(db)
  }
}

/**
 * Runs an operation for a command and turns its refusals into the one-line usage error the
 * console shows: each field problem as `--<flag> <message>`, a not-found with `notFoundHint`
 * after it (where to list what exists).
 */
export async function asUsage<T>(work: () => T | Promise<T>, notFoundHint = ''): Promise<T> {
  try { return await work() } catch (err) {
    if (err instanceof AppError && err.errorCode === 'validation_failed') {
      const fields = (err.details as { fields?: { path: string; message: string }[] }).fields ?? []
      throw new UsageError(fields.map((f) => `--${f.path.replace(/_/g, '-')} ${f.message}`).join('; ') || err.message)
    }
    if (err instanceof AppError && err.errorCode === 'not_found') throw new UsageError(`${err.message}${notFoundHint ? ` ${notFoundHint}` : ''}`)
    throw err
  }
}

/** The account --account names (refused when it names none), else the default one. */
export function accountFor(db: Db, id: string | undefined): AccountRow {
  if (id) {
    const found = findAccountById(db, id)
    if (!found) throw new UsageError(`no account ${id}; towline accounts list shows them`)
    return found
  }
  return ensureDefaultAccount(db, systemClock).account
}

/** Refuses an --account that names no account (a list of every account's rows filtered by a typo would read as empty). */
export function requireKnownAccount(db: Db, accountId: string | undefined): void {
  if (accountId !== undefined) accountFor(db, accountId)
}

/** Prints a value as JSON on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

/** Formats rows as an aligned text table. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))]
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)))
  return cells.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n'
}

export { ConfigError }

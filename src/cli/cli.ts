import { parseArgs } from 'node:util'
import { ConfigError, readConfig, type Config } from '../config'
import { openDatabase, closeDatabase, type Db } from '../db/client'
import { migrateDatabase } from '../db/migrate'
import { openLinkKey } from '../db/link-key'
import type { JobLinks } from '../jobs/job-links'

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

/** Opens and migrates the database for an operator command, runs `fn`, then closes it. */
export async function withDb<T>(values: Record<string, any>, fn: (db: Db, config: Config, links: JobLinks) => T | Promise<T>): Promise<T> {
  const config = configFrom(values)
  const db = openDatabase(config.dbPath)
  try {
    const { key } = openLinkKey(db, config.linkKeyFile)
    migrateDatabase(db, { linkKey: () => key })
    return await fn(db, config, { publicUrl: config.publicUrl, key })
  } finally {
    closeDatabase(db)
  }
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

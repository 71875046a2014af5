import { existsSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Command } from '../cli/cli'
import { ConfigError, printJson, UsageError } from '../cli/cli'
import { closeDatabase, createOwnerOnly, openDatabase, type Db } from './client'
import { copyDatabase, CopyError, type TableCopy } from './copy-database'
import { openLinkKey, recordLinkKey } from './link-key'
import { describeDatabase, isPostgresUrl } from './location'
import { migrateDatabase } from './migrate'
import { loadKeyFile, writeKeyFile } from '../platform/sealed'

/** Where a database's link key is kept unless told: beside a SQLite file, ./towline.key for PostgreSQL. */
export function defaultKeyFile(location: string): string {
  return isPostgresUrl(location) ? './towline.key' : `${location}.key`
}

/**
 * Copies the database at `from` (with its link key) into a new database at `to`: a SQLite file
 * that must not exist yet, or a PostgreSQL database that holds no towline data. Both are migrated
 * first. The key goes to `toKey` (or must already be there, the same). Returns each table's count
 * and checksum, verified on the target. A SQLite target is removed again if anything fails.
 */
export function copyWithKey(from: { location: string; keyFile: string }, to: { location: string; keyFile: string }, onTable?: (t: TableCopy) => void): TableCopy[] {
  if (!isPostgresUrl(from.location) && !existsSync(from.location)) throw new ConfigError(`no database at ${from.location} (nothing was created)`)
  if (!isPostgresUrl(to.location)) {
    if (!isPostgresUrl(from.location) && resolve(to.location) === resolve(from.location)) throw new UsageError('the copy must go to another database')
    try { createOwnerOnly(to.location) } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfigError(`${to.location} exists; copy into a new file`)
      throw err
    }
  }
  let source: Db | undefined
  let target: Db | undefined
  let done = false
  try {
    source = openDatabase(from.location, { create: false })
    const opened = openLinkKey(source, from.keyFile)
    const { key } = opened
    migrateDatabase(source, { linkKey: () => key })
    recordLinkKey(source, from.keyFile, opened, Date.now())
    if (existsSync(to.keyFile)) {
      if (!loadKeyFile(to.keyFile, { create: false }).key.equals(key)) throw new ConfigError(`${to.keyFile} holds another link key than ${from.keyFile}; the copy's links need the source's key (choose another --to-key)`)
    }
    target = openDatabase(to.location)
    migrateDatabase(target, { linkKey: () => key })
    const copied = copyDatabase(source, target, { onTable })
    if (!existsSync(to.keyFile)) writeKeyFile(to.keyFile, key)
    done = true
    return copied
  } catch (err) {
    if (err instanceof CopyError) throw new ConfigError(err.message)
    throw err
  } finally {
    if (source) closeDatabase(source)
    if (target) closeDatabase(target)
    if (!done && !isPostgresUrl(to.location)) for (const f of [to.location, `${to.location}-wal`, `${to.location}-shm`]) rmSync(f, { force: true })
  }
}

const dbCopy: Command = {
  name: 'db copy',
  summary: "Copy a company's database to another engine (SQLite file <-> postgres:// URL), verified",
  usage: `towline db copy --from FILE|URL --to FILE|URL [--from-key FILE] [--to-key FILE] [--json]

Copies every row (jobs, events, outboxes, keys, users, photos...) of the database at --from into
--to: a new SQLite file, or a PostgreSQL database (it must exist) that holds no towline data yet.
Both are migrated first; the copy is written in one transaction, then read back: each table's
row count and SHA-256 must equal the source's, or the command fails. The link key the job links
are sealed with goes along: from --from-key (default FILE.key beside a SQLite file, ./towline.key
for PostgreSQL) to --to-key (same defaults; an existing file must hold the same key). Copy from a
stopped service, or from a backup: writes made during the copy are not in it.`,
  options: { from: { type: 'string' }, to: { type: 'string' }, 'from-key': { type: 'string' }, 'to-key': { type: 'string' }, json: { type: 'boolean' } },
  positionals: 0,
  run: ({ values }) => {
    if (!values.from || !values.to) throw new UsageError('give both --from and --to (a SQLite file or a postgres:// URL)')
    const from = { location: values.from as string, keyFile: (values['from-key'] as string | undefined) ?? defaultKeyFile(values.from) }
    const to = { location: values.to as string, keyFile: (values['to-key'] as string | undefined) ?? defaultKeyFile(values.to) }
    const lines: string[] = []
    const copied = copyWithKey(from, to, (t) => lines.push(`${t.table.padEnd(22)} ${String(t.rows).padStart(9)}  ${t.sha256.slice(0, 16)}`))
    if (values.json) return printJson({ from: describeDatabase(from.location), to: describeDatabase(to.location), link_key_file: to.keyFile, verified: true, tables: copied.map((t) => ({ table: t.table, rows: t.rows, sha256: t.sha256 })) })
    const rows = copied.reduce((n, t) => n + t.rows, 0)
    process.stdout.write(`${lines.join('\n')}\nCopied ${rows} rows in ${copied.length} tables from ${describeDatabase(from.location)} to ${describeDatabase(to.location)}; every table's count and SHA-256 match. The link key is in ${to.keyFile}: keep it with the copy.\n`)
  },
}

export const dbCommands: Command[] = [dbCopy]

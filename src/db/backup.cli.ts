import { existsSync, linkSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Command } from '../cli/cli'
import { ConfigError, configFrom, UsageError, withDb } from '../cli/cli'
import { copyWithKey } from './db.cli'
import { describeDatabase, isPostgresUrl } from './location'
import { createOwnerOnly } from './client'
import { writeKeyFile } from '../platform/sealed'

/** `towline backup FILE`: a consistent copy of the live database (VACUUM INTO), safe while serve runs. */
export const backupCommand: Command = {
  name: 'backup',
  summary: 'Write a consistent copy of the database to FILE (safe while serving)',
  usage: `towline backup FILE [--db FILE|URL]

Uses SQLite VACUUM INTO: a complete, compacted copy taken in one read transaction. The key the
job links are sealed with is written beside it as FILE.key (0600): keep the two together, a
restored database without its key file is refused. Both are readable by their owner only.
The copy is written as FILE.partial and takes its name only once complete.
On PostgreSQL (--db postgres://...) FILE is a SQLite copy of it, read in one snapshot and
verified table by table (towline db copy); pg_dump remains the PostgreSQL-native way.`,
  options: { db: { type: 'string' } },
  positionals: 1,
  run: ({ values, positionals }) => {
    const target = positionals[0]
    if (!target) throw new UsageError('where to? give a file name')
    const folder = dirname(resolve(target))
    if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new ConfigError(`the folder ${dirname(target)} does not exist; make it first (the backup and its key go there)`)
    // The database file taken first, the key after: name the one that is in the way.
    if (existsSync(target)) throw new ConfigError(`${target} exists; choose a new file name`)
    const config = configFrom(values)
    if (!isPostgresUrl(config.dbPath)) return backupSqlite(values, target)
    if (existsSync(`${target}.key`)) throw new UsageError(`${target}.key exists; choose a new file name (the backup's link key goes there)`)
    const copied = copyWithKey({ location: config.dbPath, keyFile: config.linkKeyFile }, { location: target, keyFile: `${target}.key` })
    process.stdout.write(`Backed up ${describeDatabase(config.dbPath)} to ${target} (SQLite, ${copied.reduce((n, t) => n + t.rows, 0)} rows, every table verified), and its link key to ${target}.key: keep them together.\n`)
  },
}

function backupSqlite(values: Record<string, any>, target: string) {
  return withDb(values, (db, config, links) => {
    if (resolve(target) === resolve(config.dbPath)) throw new UsageError('the backup must be another file')
    const keyTarget = `${target}.key`
    if (existsSync(keyTarget)) throw new UsageError(`${keyTarget} exists; choose a new file name (the backup's link key goes there)`)
    // Written under a name of its own and given the backup's name only once complete: a backup
    // cut short (killed, disk full) never leaves a file that looks like one (serve would start on
    // it as an empty database). Made 0600 before SQLite writes into it (it would create it 0644).
    const partial = `${target}.partial`
    rmSync(partial, { force: true })
    rmSync(`${partial}-journal`, { force: true })
    createOwnerOnly(partial)
    try {
      db.$client.run('VACUUM INTO ?', [partial])
      writeKeyFile(keyTarget, links.key)
      // A link, not a rename: it refuses a file that appeared at the name meanwhile.
      try {
        linkSync(partial, target)
      } catch (err) {
        rmSync(keyTarget, { force: true })
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${target} exists; choose a new file name`)
        throw err
      }
    } finally {
      rmSync(partial, { force: true })
    }
    process.stdout.write(`Backed up ${config.dbPath} to ${target}, and its link key to ${keyTarget}: keep them together.\n`)
  }, { asItIs: true })
}

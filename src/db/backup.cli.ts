import { existsSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Command } from '../cli/cli'
import { UsageError, withDb } from '../cli/cli'
import { createOwnerOnly } from './client'
import { writeKeyFile } from '../platform/sealed'

/** `towline backup FILE`: a consistent copy of the live database (VACUUM INTO), safe while serve runs. */
export const backupCommand: Command = {
  name: 'backup',
  summary: 'Write a consistent copy of the database to FILE (safe while serving)',
  usage: `towline backup FILE [--db FILE]

Uses SQLite VACUUM INTO: a complete, compacted copy taken in one read transaction. The key the
job links are sealed with is written beside it as FILE.key (0600): keep the two together, a
restored database without its key file is refused. Both are readable by their owner only.`,
  options: { db: { type: 'string' } },
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, (db, config, links) => {
    const target = positionals[0]
    if (!target) throw new UsageError('where to? give a file name')
    if (resolve(target) === resolve(config.dbPath)) throw new UsageError('the backup must be another file')
    const keyTarget = `${target}.key`
    if (existsSync(keyTarget)) throw new UsageError(`${keyTarget} exists; choose a new file name (the backup's link key goes there)`)
    // Made 0600 before SQLite writes into it (it would create it 0644); 'wx' also refuses an existing file.
    try {
      createOwnerOnly(target)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${target} exists; choose a new file name`)
      throw err
    }
    try {
      db.$client.run('VACUUM INTO ?', [target])
    } catch (err) {
      rmSync(target, { force: true })
      throw err
    }
    writeKeyFile(keyTarget, links.key)
    process.stdout.write(`Backed up ${config.dbPath} to ${target}, and its link key to ${keyTarget}: keep them together.\n`)
  }),
}

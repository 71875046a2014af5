import { createHash } from 'node:crypto'
import type { Db } from './client'
import { journal, SQL_BY_TAG } from './migrations.gen'

/** The database was migrated by a newer towline than this one; refusing to run on it. */
export class DatabaseTooNewError extends Error {}

/**
 * Applies every embedded migration the database has not seen, in one transaction, with
 * drizzle's own migrator (same rows and hashes as `drizzle-kit migrate`). Safe to run twice.
 * Returns the tags it applied. `through` stops after that tag (tests of a migration's data moves).
 */
export function migrateDatabase(db: Db, opts: { through?: string } = {}): string[] {
  const client = db.$client
  const hasTable = client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  const last = hasTable
    ? (client.query('SELECT created_at AS at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1').get() as { at: number } | null)
    : null
  const lastKnown = journal.entries.at(-1)?.when ?? 0
  if (last && Number(last.at) > lastKnown) {
    throw new DatabaseTooNewError('This database was migrated by a newer version of towline; run that version (or restore a backup).')
  }
  const stop = opts.through ? journal.entries.findIndex((e) => e.tag === opts.through) : journal.entries.length - 1
  if (stop < 0) throw new Error(`no migration ${opts.through}`)
  const entries = journal.entries.slice(0, stop + 1)
  const pending = entries.filter((e) => !last || e.when > Number(last.at)).map((e) => e.tag)
  const migrations = entries.map((e) => {
    const query = SQL_BY_TAG[e.tag]
    if (query === undefined) throw new Error(`migration ${e.tag} is not embedded; run bun run migrations:embed`)
    return {
      sql: query.split('--> statement-breakpoint'),
      bps: e.breakpoints,
      folderMillis: e.when,
      hash: createHash('sha256').update(query).digest('hex'),
    }
  })
  // db.dialect / db.session are what drizzle's migrate() itself calls; pinned drizzle-orm version.
  ;(db as any).dialect.migrate(migrations, (db as any).session, { migrationsTable: '__drizzle_migrations' })
  return pending
}

/** Lists the journal of embedded migrations (tag and timestamp), oldest first. */
export function embeddedMigrations(): { tag: string; when: number }[] {
  return journal.entries.map((e) => ({ tag: e.tag, when: e.when }))
}

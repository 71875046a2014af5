import { createHash } from 'node:crypto'
import { hasTable, type Db } from './client'
import { journal, pgJournal, PG_SQL_BY_TAG, SQL_BY_TAG } from './migrations.gen'
import { hashToken, seal } from '../platform/sealed'
import { sealLinksIn } from '../jobs/job-links'
import { embeddedPgMigrations, migratePostgres } from './pg/migrate-postgres'

/** The database was migrated by a newer towline than this one; refusing to run on it. */
export class DatabaseTooNewError extends Error {}
/** A database whose applied migrations are not the ones shipped (a development build's): refused like one too new, in one line. */
export class ForeignHistoryError extends DatabaseTooNewError {}

/**
 * Steps that need code between two migrations (SQLite has no SHA-256 or AES): each runs after its
 * migration is applied and before any later one, and is safe to run again.
 */
const DATA_STEPS: { after: string; run: (db: Db, linkKey: () => Buffer) => void }[] = [
  // 0007 adds hashed and sealed link tokens; 0008 drops the clear ones.
  { after: '0007_hardening_sites_leases_links', run: sealClearTokens },
]

/** Where links were stored in clear besides the jobs: texts' bodies, webhook payloads, kept idempotent responses. */
const LINK_COPIES = [
  { table: 'texts', column: 'body', key: 'id' },
  { table: 'webhook_events', column: 'data', key: 'seq' },
  { table: 'webhook_deliveries', column: 'data', key: 'id' },
  { table: 'idempotency_keys', column: 'response_body', key: 'rowid' },
] as const

/**
 * Moves clear tracking and driver tokens to their hash and sealed form, and seals the links in
 * every stored copy of them (one transaction).
 */
function sealClearTokens(db: Db, linkKey: () => Buffer): void {
  const rows = db.$client.query<{ id: string; tracking_token: string; driver_token: string | null }, []>(
    'SELECT id, tracking_token, driver_token FROM jobs WHERE tracking_token_hash IS NULL',
  ).all()
  if (!rows.length) return
  const key = linkKey()
  const update = db.$client.query('UPDATE jobs SET tracking_token_hash = ?, tracking_token_sealed = ?, driver_token_hash = ?, driver_token_sealed = ? WHERE id = ?')
  db.$client.transaction(() => {
    for (const r of rows) {
      update.run(hashToken(r.tracking_token), seal(key, r.tracking_token), r.driver_token ? hashToken(r.driver_token) : null, r.driver_token ? seal(key, r.driver_token) : null, r.id)
    }
    for (const c of LINK_COPIES) {
      const copies = db.$client.query<{ k: string | number; v: string }, []>(
        `SELECT ${c.key} AS k, ${c.column} AS v FROM ${c.table} WHERE ${c.column} LIKE '%/t/%' OR ${c.column} LIKE '%/d/%'`,
      ).all()
      const put = db.$client.query(`UPDATE ${c.table} SET ${c.column} = ? WHERE ${c.key} = ?`)
      for (const r of copies) put.run(sealLinksIn({ publicUrl: '', key }, r.v), r.k)
    }
  }).immediate()
}

/**
 * Applies every embedded migration the database has not seen, with drizzle's own migrator (same
 * rows and hashes as `drizzle-kit migrate`), running the data steps between them. Safe to run
 * twice. Returns the tags it applied. `through` stops after that tag (tests of a migration's data
 * moves); `linkKey` gives the key link tokens are sealed with (asked only when there are some).
 */
export function migrateDatabase(db: Db, opts: { through?: string; linkKey?: () => Buffer } = {}): string[] {
  checkMigrationHistory(db)
  if (db.engine === 'postgres') {
    if (opts.through) throw new Error('PostgreSQL databases start at the baseline; `through` is for SQLite migrations')
    return migratePostgres(db, (at, known) => new DatabaseTooNewError(tooNewMessage(at, known)))
  }
  const linkKey = opts.linkKey ?? (() => { throw new Error('this database holds job links to seal; a link key is needed to migrate it') })
  const target = opts.through ?? journal.entries.at(-1)?.tag
  const end = target ? journal.entries.findIndex((e) => e.tag === target) : -1
  const applied: string[] = []
  for (const step of DATA_STEPS) {
    const at = journal.entries.findIndex((e) => e.tag === step.after)
    // Only while the migration after the step is still to come (the step reads what it drops).
    if (at < 0 || end <= at || appliedThrough(db) > at) continue
    applied.push(...migrateThrough(db, step.after))
    // Another process that opened the database at once may have gone past the step meanwhile.
    if (appliedThrough(db) > at) continue
    step.run(db, linkKey)
  }
  applied.push(...migrateThrough(db, target))
  if (applied.includes(CLEAR_TOKENS_DROPPED) && db.$client.query('SELECT 1 FROM jobs LIMIT 1').get()) {
    // Sealed rows and dropped columns leave the clear tokens' old bytes in free pages and in the
    // WAL: rebuild the file without them, once, so a copy of the database reveals no link.
    db.$client.exec('VACUUM')
    db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  }
  return applied
}

/**
 * Refuses a database whose record of applied migrations names one this towline does not ship
 * (a time no migration of its journal has, or the same time with other SQL): it was made by a
 * build whose migrations were changed afterwards, and applying the rest to it would fail half way
 * or build a schema that is neither. Newer migrations are left to the too-new check.
 */
function checkMigrationHistory(db: Db): void {
  if (!hasTable(db, '__drizzle_migrations')) return
  const pg = db.engine === 'postgres'
  const shipped = pg ? pgJournal.entries.map((e) => ({ ...e, sql: PG_SQL_BY_TAG[e.tag] })) : journal.entries.map((e) => ({ ...e, sql: SQL_BY_TAG[e.tag] }))
  const lastKnown = shipped.at(-1)?.when ?? 0
  const rows = db.$client.query<{ hash: string; at: number }, []>('SELECT hash, created_at AS at FROM "__drizzle_migrations" ORDER BY created_at').all()
  for (const row of rows) {
    const at = Number(row.at)
    if (at > lastKnown) continue
    const entry = shipped.find((e) => e.when === at)
    if (entry && entry.sql !== undefined && createHash('sha256').update(entry.sql).digest('hex') === row.hash) continue
    throw new ForeignHistoryError(`This database was made by a development build of towline whose migrations were changed before release (its record names ${entry ? `${entry.tag} with other SQL` : `a migration of ${new Date(at).toISOString()} that no release has`}); no release can upgrade it, and nothing was changed. Keep running the build that made it, or start a new database and move the jobs with that build's export if it has one.`)
  }
}

/** What a database migrated by a newer towline is told: how much newer, so the operator can find the build it needs (`towline version` names its schema). */
export function tooNewMessage(newestAt: number, known: { tag: string; when: number }): string {
  return `This database was migrated by a newer towline than this one (its newest migration is of ${new Date(newestAt).toISOString()}; this towline's newest, ${known.tag}, is of ${new Date(known.when).toISOString()}; \`towline version\` names a build's); run that version or a later one, or restore a backup. Nothing was changed.`
}

/** The migration that drops the last clear link tokens. */
const CLEAR_TOKENS_DROPPED = '0008_drop_clear_tokens_unit_site'

/** The journal index of the newest migration the database has, or -1. */
function appliedThrough(db: Db): number {
  if (!hasTable(db, '__drizzle_migrations')) return -1
  const last = db.$client.query<{ at: number }, []>('SELECT created_at AS at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1').get()
  return last ? journal.entries.findLastIndex((e) => e.when <= Number(last.at)) : -1
}

/**
 * Applies the pending migrations up to and including `through` (all when undefined), with the
 * records drizzle's migrator keeps (`__drizzle_migrations`: hash and journal time), in ONE
 * IMMEDIATE transaction: the write lock is taken before the record is read, so two processes
 * opening one database at once (two serves, a serve and a console command) migrate it once, the
 * second waiting for the first and then finding nothing to do; a failed migration leaves the
 * database as it was.
 */
function migrateThrough(db: Db, through: string | undefined): string[] {
  const client = db.$client
  const stop = through ? journal.entries.findIndex((e) => e.tag === through) : journal.entries.length - 1
  if (stop < 0) throw new Error(`no migration ${through}`)
  return client.transaction(() => {
    client.exec('CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
    const last = client.query<{ at: number }, []>('SELECT created_at AS at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1').get()
    const lastKnown = journal.entries.at(-1)?.when ?? 0
    if (last && Number(last.at) > lastKnown) throw new DatabaseTooNewError(tooNewMessage(Number(last.at), journal.entries.at(-1)!))
    const applied: string[] = []
    for (const e of journal.entries.slice(0, stop + 1)) {
      if (last && e.when <= Number(last.at)) continue
      const query = SQL_BY_TAG[e.tag]
      if (query === undefined) throw new Error(`migration ${e.tag} is not embedded; run bun run migrations:embed`)
      for (const statement of query.split('--> statement-breakpoint')) if (statement.trim()) client.exec(statement)
      client.query('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)').run(createHash('sha256').update(query).digest('hex'), e.when)
      applied.push(e.tag)
    }
    return applied
  }).immediate()
}

/**
 * The embedded migrations this database has not had yet, oldest first (every one for a database
 * with no towline tables). Reads only: nothing is created or changed.
 */
export function pendingMigrations(db: Db): string[] {
  checkMigrationHistory(db)
  if (db.engine === 'postgres') {
    const last = hasTable(db, '__drizzle_migrations') ? db.$client.query<{ at: number }, []>('SELECT created_at AS at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1').get() : null
    return embeddedPgMigrations().filter((e) => !last || e.when > Number(last.at)).map((e) => e.tag)
  }
  return journal.entries.slice(appliedThrough(db) + 1).map((e) => e.tag)
}

/** Lists the journal of embedded migrations (tag and timestamp), oldest first. */
export function embeddedMigrations(): { tag: string; when: number }[] {
  return journal.entries.map((e) => ({ tag: e.tag, when: e.when }))
}

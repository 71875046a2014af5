import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, existsSync, openSync, readSync, statSync } from 'node:fs'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema'
import { PgClient } from './pg/pg-client'
import { isPostgresUrl } from './location'

/** One prepared statement, as both engines' clients give it. */
export interface SqlStatement<R = unknown, P extends unknown[] = any[]> {
  all(...params: P): R[]
  /** The first row, or null. */
  get(...params: P): R | null
  run(...params: P): { changes: number }
  values(...params: P): unknown[][]
}

/**
 * The statement layer the code is written against, once for both engines: bun:sqlite's Database
 * (SQLite, the default) or PgClient (PostgreSQL), which has the same synchronous shape. Statements
 * are written in SQLite's spelling; PgClient rewrites them (pg/to-postgres.ts), and what differs
 * in meaning is chosen by `db.engine` (dialect.ts).
 */
export interface SqlClient {
  query<R = unknown, P extends unknown[] = any[]>(sql: string): SqlStatement<R, P>
  prepare<R = unknown, P extends unknown[] = any[]>(sql: string): SqlStatement<R, P>
  exec(sql: string): void
  /** One statement with its parameters as an array. */
  run(sql: string, params?: unknown[]): unknown
  readonly inTransaction: boolean
  transaction<A extends any[], T>(fn: (...args: A) => T): ((...args: A) => T) & { immediate: (...args: A) => T }
  close(throwOnError?: boolean): void
}

export type Engine = 'sqlite' | 'postgres'

export type Db = Omit<BunSQLiteDatabase<typeof schema>, '$client'> & { $client: SqlClient; engine: Engine; /** The file (SQLite) or URL (PostgreSQL) it was opened from. */ location: string }


/** How long a SQLite statement waits for the write lock another connection holds (a CLI command, the import thread, a backup). */
export const BUSY_TIMEOUT_MS = 5000
/** WAL pages after which a commit on this connection checkpoints (PASSIVE), unless checkpointer.ts took that over. */
export const WAL_AUTOCHECKPOINT_PAGES = 4000

/**
 * Opens the SQLite file with the settings the service relies on: WAL (readers never block the
 * one writer), synchronous NORMAL, a busy timeout for other processes (CLI, backups) and
 * foreign keys. One connection per process; every write happens on the main thread.
 * With `create` (the default) a missing file is made readable by its owner only (0600);
 * without it a missing file is an error and nothing is created.
 */
export function openDatabase(path: string, opts: { create?: boolean } = {}): Db {
  if (isPostgresUrl(path)) return withEngine(drizzle(new PgClient(path) as unknown as Database, { schema }), 'postgres', path)
  const create = opts.create ?? true
  // SQLite would create the file 0644; made 0600 first, it keeps that mode, and SQLite gives
  // the -wal and -shm files the database file's mode.
  if (create && path !== ':memory:' && path !== '' && !existsSync(path)) {
    try { createOwnerOnly(path) } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err }
  }
  const sqlite = new Database(path, { create, readwrite: true, strict: true })
  // First: a new file's switch to WAL needs the lock another process opening it at the same
  // moment may hold, and without a busy timeout it would fail at once (database is locked).
  sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  // A new database gets 2 KiB pages (an existing one keeps its own): a commit rewrites whole
  // pages, and most commits touch a row or an index entry or two in each of many pages (the
  // webhooks bench: 38 → 31 MB/s written at 5,000 deliveries/s). A job row or a webhook event still fits in one.
  sqlite.exec('PRAGMA page_size = 2048')
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec('PRAGMA foreign_keys = ON')
  sqlite.exec('PRAGMA temp_store = MEMORY')
  // Checkpoint every ~8 MB of WAL rather than 2: a hot page rewritten by many commits is copied
  // into the database once per checkpoint (the webhooks bench: 44 → 38 MB/s written at 5,000 deliveries/s).
  // `serve` hands checkpoints to a thread of their own (checkpointer.ts) and raises this.
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`)
  return withEngine(drizzle(sqlite, { schema }), 'sqlite', path)
}

function withEngine(d: BunSQLiteDatabase<typeof schema>, engine: Engine, location: string): Db {
  return Object.assign(d, { engine, location }) as unknown as Db
}

/** Creates an empty file readable and writable by its owner only; throws EEXIST if it exists. */
export function createOwnerOnly(path: string): void {
  closeSync(openSync(path, 'wx', 0o600))
}

/**
 * Makes the database and its -wal, -shm and -journal files readable by their owner only, and
 * returns the files it had to change (an older towline created them 0644).
 */
export function restrictToOwner(path: string): string[] {
  const changed: string[] = []
  // A file that is not a SQLite database (opening it is refused next) is left as it was.
  if (!looksLikeSqlite(path)) return changed
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    if (!existsSync(file)) continue
    const mode = statSync(file).mode
    if ((mode & 0o077) === 0) continue
    // Others lose their access; the owner's own bits stay as they are (a read-only file stays read-only).
    chmodSync(file, mode & 0o700)
    changed.push(file)
  }
  return changed
}

/**
 * Makes the link key file (src/db/link-key.ts) readable by its owner only, as the database: a
 * copy of the database and its key reveals every link. Returns what was done: `changed` (it was
 * readable by others), `readable` (it is, and this user may not change that), or null.
 */
export function restrictKeyToOwner(path: string): 'changed' | 'readable' | null {
  if (!existsSync(path)) return null
  const mode = statSync(path).mode
  if ((mode & 0o077) === 0) return null
  try {
    chmodSync(path, mode & 0o700)
    return 'changed'
  } catch {
    return 'readable'
  }
}

/** Whether the database (either engine; PostgreSQL's current schema) has a table of this name. */
export function hasTable(db: Db, name: string): boolean {
  return db.engine === 'sqlite'
    ? db.$client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== null
    : db.$client.query('SELECT 1 FROM information_schema.tables WHERE table_name = ? AND table_schema = current_schema()').get(name) !== null
}

/** True for a missing or empty file, or one that starts as a SQLite database does. */
function looksLikeSqlite(path: string): boolean {
  if (!existsSync(path) || statSync(path).size === 0) return true
  const fd = openSync(path, 'r')
  try {
    const head = Buffer.alloc(16)
    readSync(fd, head, 0, 16, 0)
    return head.toString('latin1') === 'SQLite format 3\0'
  } finally {
    closeSync(fd)
  }
}

/**
 * Closes the connection, finalizing every statement first (close(true)) (an explicit
 * `wal_checkpoint` can fail with "table is locked" while one is still busy); the last
 * connection to close then checkpoints the WAL into the main file and deletes it.
 */
export function closeDatabase(db: Db): void {
  db.$client.close(true)
}

/**
 * Runs `fn` in one IMMEDIATE transaction (bun:sqlite's own: rolled back on a throw), or inside
 * the transaction already open on this connection, so an operation can be part of a larger
 * atomic write (e.g. with its idempotency record). There is one connection, so `fn` gets the
 * same `db`. `fn` must be synchronous: work after an await would run outside the transaction,
 * so the type forbids a Promise.
 */
export function inTransaction<T>(db: Db, fn: (tx: Db) => T extends Promise<unknown> ? never : T): T {
  if (db.$client.inTransaction) return fn(db) as T
  return db.$client.transaction(() => fn(db) as T).immediate()
}

/**
 * Runs `fn` in a claim transaction: a worker taking due rows (webhook deliveries, texts) with
 * row locks rather than the one write lock, so instances claim side by side, and beside the job
 * writes, without queueing behind each other. On SQLite (one writer) it is inTransaction. On
 * PostgreSQL it takes no write lock: `fn` must lock each row it changes with `FOR UPDATE SKIP
 * LOCKED` (rowLock) before changing it, and never wait for a row another transaction holds,
 * so it can never be part of a deadlock; what it reads may change under it except the rows it
 * locked. Inside an open transaction it is part of that one.
 */
export function inClaimTransaction<T>(db: Db, fn: (tx: Db) => T extends Promise<unknown> ? never : T): T {
  if (db.engine === 'sqlite' || db.$client.inTransaction) return inTransaction(db, fn)
  return (db.$client as unknown as PgClient).transaction(() => fn(db) as T, { writeLock: false })()
}

/**
 * The row-lock clause a SELECT ends with on PostgreSQL (SQLite has one writer at a time and none):
 * `skip` for a claim transaction (rows another transaction holds are left out, never waited
 * for), `wait` for a write transaction that must hold a row before it changes rows that belong
 * to it (a webhook endpoint before its deliveries).
 */
export function rowLock(db: Db, kind: 'skip' | 'wait'): string {
  if (db.engine === 'sqlite') return ''
  return kind === 'skip' ? ' FOR UPDATE SKIP LOCKED' : ' FOR UPDATE'
}

/**
 * Runs a write that can be left for later (a key's or a session's last-used time) without
 * waiting for the write lock: on SQLite, when another connection holds it (an import writing for
 * a few hundred ms), it returns false at once instead of holding up this thread, and every
 * request behind it, for as long as that write takes. Inside a transaction, and on PostgreSQL
 * (an autocommit statement there takes no write lock), it just runs.
 */
export function writeIfFree(db: Db, write: () => void): boolean {
  if (db.engine !== 'sqlite' || db.$client.inTransaction) { write(); return true }
  db.$client.exec('PRAGMA busy_timeout = 0')
  try {
    write()
    return true
  } catch (err) {
    if (String((err as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY')) return false
    throw err
  } finally {
    db.$client.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  }
}

/** Returns a cheap check that the database still answers a query. */
export function databasePinger(db: Db): () => boolean {
  const ping = db.$client.prepare('SELECT 1 AS ok')
  return () => {
    try { return ping.get() !== null } catch { return false }
  }
}

import { createHmac } from 'node:crypto'
import { existsSync, unlinkSync } from 'node:fs'
import { isPostgresUrl } from './location'
import { hasTable, type Db } from './client'
import { keyFileProblem, loadKeyFile, SealKeyError, unseal } from '../platform/sealed'

/** Whether the jobs table already has sealed link tokens (migration 0007 or later). */
function sampleSealedToken(db: Db): string | null {
  if (!hasTable(db, 'jobs')) return null
  // PostgreSQL's schema starts after 0007; SQLite's may be older.
  if (db.engine === 'sqlite') {
    const cols = db.$client.query<{ name: string }, []>("SELECT name FROM pragma_table_info('jobs')").all()
    if (!cols.some((c) => c.name === 'tracking_token_sealed')) return null
  }
  return db.$client.query<{ s: string }, []>('SELECT tracking_token_sealed AS s FROM jobs WHERE tracking_token_sealed IS NOT NULL LIMIT 1').get()?.s ?? null
}

/** What the database keeps to name its link key: an HMAC of a fixed text under it, which reveals nothing of the key. */
export function linkKeyCheck(key: Buffer): string {
  return createHmac('sha256', key).update('towline link key check').digest('base64url')
}

/** The check the database recorded (migration 0017 and later), or null: none yet, or a database from before it. */
function recordedCheck(db: Db): string | null {
  if (!hasTable(db, 'installation')) return null
  return db.$client.query<{ c: string }, []>('SELECT link_key_check AS c FROM installation WHERE id = 1').get()?.c ?? null
}

const MISSING = (path: string) => `${path} is missing: this database's tracking and driver links are sealed with its link key. Point TOWLINE_LINK_KEY_FILE at the key file serve uses (or copy it here from where the database came from; towline backup writes it beside the backup as FILE.key). Nothing was changed.`
const FOREIGN = (path: string) => `${path} does not open this database's job links; it belongs to another database. Use the key file made with this database (towline backup writes it beside the backup as FILE.key), or point TOWLINE_LINK_KEY_FILE at it. Nothing was changed.`

/**
 * Opens the link key the database's tracking and driver tokens are sealed with: the file at
 * `path`. The database names its key (`installation.link_key_check`, recorded by
 * `recordLinkKey` once migrated); a key file that is not that key, or a missing one, is refused
 * loudly before anything is sealed: its links would still work (lookups use hashes) but could
 * never be shown again. Only a database that names no key and holds no sealed token yet (a new
 * one) gets a new key file, created 0600. A database from before the check is recognised by a
 * sealed token the key must open.
 */
export function openLinkKey(db: Db, path: string): { key: Buffer; created: boolean } {
  const recorded = recordedCheck(db)
  const sample = recorded === null ? sampleSealedToken(db) : null
  let loaded: { key: Buffer; created: boolean }
  try {
    loaded = loadKeyFile(path, { create: recorded === null && sample === null })
  } catch (err) {
    if (err instanceof SealKeyError && err.message === `the key file ${path} does not exist`) throw new SealKeyError(MISSING(path))
    throw err
  }
  const fits = recorded !== null ? linkKeyCheck(loaded.key) === recorded : sample === null || unseal(loaded.key, sample) !== null
  if (!fits) throw new SealKeyError(FOREIGN(path))
  return loaded
}

/**
 * Records which key the (migrated) database's links are sealed with, when it names none yet.
 * Two processes making a new database with different key files: the first to record wins, and
 * the other is refused here, before sealing anything, its new key file removed again.
 */
export function recordLinkKey(db: Db, path: string, opened: { key: Buffer; created: boolean }, nowMs: number): void {
  const check = linkKeyCheck(opened.key)
  // Already named (every start but the first): nothing to write, so a listing command writes nothing.
  if (recordedCheck(db) === check) return
  db.$client.query('INSERT INTO installation (id, link_key_check, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING').run(check, nowMs)
  if (recordedCheck(db) === check) return
  if (opened.created && existsSync(path)) unlinkSync(path)
  throw new SealKeyError(FOREIGN(path))
}

/**
 * Refuses, before a new SQLite database is made at `location`, a link key path that could never
 * be read or made: a folder, or a file whose folder is missing or not writable. Otherwise the new
 * database would be made and then refused, left behind empty for later commands to take for a
 * database. (Removing it afterwards is no answer: another start may be using the new file by
 * then.) An existing database's missing key is said by openLinkKey, which knows it had one.
 */
export function checkLinkKeyPath(path: string, location: string): void {
  if (isPostgresUrl(location) || existsSync(location)) return
  const problem = keyFileProblem(path)
  if (problem) throw new SealKeyError(problem)
}

/**
 * Runs the migrations of a database whose key was just opened, and takes back a key file made
 * for it (a new database) when they fail (PostgreSQL's refusal of a role that does not own the
 * database, say): nothing was sealed with it, and the next start makes the one it keeps.
 */
export function migrateWithKey<T>(path: string, opened: { created: boolean }, migrate: () => T): T {
  try {
    return migrate()
  } catch (err) {
    if (opened.created && existsSync(path)) unlinkSync(path)
    throw err
  }
}

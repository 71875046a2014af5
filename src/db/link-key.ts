import type { Db } from './client'
import { loadKeyFile, SealKeyError, unseal } from '../platform/sealed'

/** Whether the jobs table already has sealed link tokens (migration 0007 or later). */
function sampleSealedToken(db: Db): string | null {
  // PostgreSQL's schema starts after 0007; SQLite's may be older.
  if (db.engine === 'sqlite') {
    const cols = db.$client.query<{ name: string }, []>("SELECT name FROM pragma_table_info('jobs')").all()
    if (!cols.some((c) => c.name === 'tracking_token_sealed')) return null
  } else if (!db.$client.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'jobs' AND table_schema = current_schema()").get()) return null
  return db.$client.query<{ s: string }, []>('SELECT tracking_token_sealed AS s FROM jobs WHERE tracking_token_sealed IS NOT NULL LIMIT 1').get()?.s ?? null
}

/**
 * Opens the link key the database's tracking and driver tokens are sealed with: the file at
 * `path`, created (0600) beside a database that holds no sealed token yet. A database whose
 * tokens the file cannot open, or whose key file is missing, is refused loudly: its links would
 * still work (lookups use hashes) but could never be shown again.
 */
export function openLinkKey(db: Db, path: string): { key: Buffer; created: boolean } {
  const sample = sampleSealedToken(db)
  try {
    const loaded = loadKeyFile(path, { create: sample === null })
    if (sample !== null && unseal(loaded.key, sample) === null) {
      throw new SealKeyError(`${path} does not open this database's job links; it belongs to another database. Use the key file made with this database (towline backup writes it beside the backup as FILE.key).`)
    }
    return loaded
  } catch (err) {
    if (err instanceof SealKeyError && sample !== null && /does not exist/.test(err.message)) {
      throw new SealKeyError(`${path} is missing: this database's tracking and driver links are sealed with it. Copy it from where the database came from (towline backup writes it beside the backup as FILE.key), or point TOWLINE_LINK_KEY_FILE at it.`)
    }
    throw err
  }
}

/**
 * "Nothing was written", checked everywhere at once: a fingerprint of every table's rows.
 * The writes a refused request may make are left out: a key's throttled last_used_at, and on
 * PostgreSQL the key's rate-limit bucket (with the other tables only it has, which hold no data).
 */
import type { Db } from '../src/db/client'
import { POSTGRES_ONLY_TABLES } from '../src/db/pg/pg-ddl'

const IGNORED_COLUMNS: Record<string, string[]> = { api_keys: ['last_used_at'] }

/** Every table of the database, by name, on either engine. */
export function tableNames(db: Db): string[] {
  return db.$client.query<{ name: string }, []>(db.engine === 'sqlite'
    ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    : 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name').all().map((r) => r.name)
}

/** Returns `{ table: "<rows>:<hash>" }` for every table of the database. */
export function databaseFingerprint(db: Db): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of tableNames(db).filter((t) => !POSTGRES_ONLY_TABLES.has(t))) {
    // PostgreSQL's rows come in no set order: there they are sorted by their text.
    const rows = db.$client.query<Record<string, unknown>, []>(`SELECT * FROM "${name}"${db.engine === 'sqlite' ? ' ORDER BY rowid' : ''}`).all()
    const ignored = IGNORED_COLUMNS[name] ?? []
    const texts = rows.map((r) => { for (const c of ignored) delete r[c]; return JSON.stringify(r, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)) })
    if (db.engine !== 'sqlite') texts.sort()
    const text = `[${texts.join(',')}]`
    out[name] = `${rows.length}:${Bun.hash(text).toString(36)}`
  }
  return out
}

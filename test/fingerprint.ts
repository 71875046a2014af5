/**
 * "Nothing was written", checked everywhere at once: a fingerprint of every table's rows.
 * The one write a refused request may make is a key's throttled last_used_at, so it is left out.
 */
import type { Db } from '../src/db/client'

const IGNORED_COLUMNS: Record<string, string[]> = { api_keys: ['last_used_at'] }

/** Returns `{ table: "<rows>:<hash>" }` for every table of the database. */
export function databaseFingerprint(db: Db): Record<string, string> {
  const tables = db.$client.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all()
  const out: Record<string, string> = {}
  for (const { name } of tables) {
    const rows = db.$client.query<Record<string, unknown>, []>(`SELECT * FROM "${name}" ORDER BY rowid`).all()
    const ignored = IGNORED_COLUMNS[name] ?? []
    const text = JSON.stringify(rows.map((r) => { for (const c of ignored) delete r[c]; return r }), (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))
    out[name] = `${rows.length}:${Bun.hash(text).toString(36)}`
  }
  return out
}

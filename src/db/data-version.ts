import type { Db } from './client'
import type { PgClient } from './pg/pg-client'

/**
 * A number that changes soon after another connection commits a write to the database (a CLI
 * command, a second instance): SQLite's `PRAGMA data_version` (asking costs microseconds), or on
 * PostgreSQL the count of other connections' announced commits (LISTEN/NOTIFY; reading it costs nothing).
 */
export function dataVersionOf(db: Db): () => number {
  if (db.engine === 'postgres') {
    const client = db.$client as unknown as PgClient
    return () => client.dataVersion()
  }
  const version = db.$client.prepare<{ data_version: number }, []>('PRAGMA data_version')
  return () => version.get()!.data_version
}

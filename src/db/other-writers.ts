import type { Db } from './client'

/**
 * Calls `onChange` soon after another connection commits to the database: a CLI command
 * (`jobs archive`, `demo`), a second instance. SQLite's `PRAGMA data_version` changes exactly
 * then; asking costs microseconds, so it is asked every `intervalMs`. Returns a stop function.
 */
export function watchOtherWriters(db: Db, intervalMs: number, onChange: () => void, onError: (err: unknown) => void): () => void {
  const version = db.$client.prepare<{ data_version: number }, []>('PRAGMA data_version')
  let seen = version.get()!.data_version
  const timer = setInterval(() => {
    try {
      const now = version.get()!.data_version
      if (now !== seen) { seen = now; onChange() }
    } catch (err) {
      onError(err)
    }
  }, intervalMs)
  return () => clearInterval(timer)
}

import type { Db } from './client'
import { dataVersionOf } from './data-version'

/**
 * Calls `onChange` soon after another connection commits to the database: a CLI command
 * (`jobs archive`, `demo`), a second instance: the database's data version (data-version.ts)
 * is read every `intervalMs`. Returns a stop function.
 */
export function watchOtherWriters(db: Db, intervalMs: number, onChange: () => void, onError: (err: unknown) => void): () => void {
  const version = dataVersionOf(db)
  let seen = version()
  const timer = setInterval(() => {
    try {
      const now = version()
      if (now !== seen) { seen = now; onChange() }
    } catch (err) {
      onError(err)
    }
  }, intervalMs)
  return () => clearInterval(timer)
}

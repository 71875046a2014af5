/**
 * Another instance holding PostgreSQL locks, in a process of its own (the service's client waits
 * for PostgreSQL on its thread: a lock held by the test's own process could never be let go
 * while the service waits for it). `holdPgLocks` starts it: it opens a transaction, runs `lock`,
 * and ends the transaction when `until` (a query) first gives a row, or after `maxMs`. What the
 * test learns is whether the condition came while the locks were held.
 *
 * Run directly: bun test/pg-lock-holder.ts URL LOCK_SQL UNTIL_SQL MAX_MS
 */
import { SQL } from 'bun'

export interface HeldLocks {
  /** Resolves once the locks are held. */
  held: Promise<void>
  /** Resolves when they are let go: `condition` when `until` gave a row while they were held, `timeout` when maxMs ran out first. */
  released: Promise<'condition' | 'timeout'>
}

/** Holds the locks `lock` takes, in another process, until `until` gives a row (or `maxMs`). */
export function holdPgLocks(url: string, lock: string, until: string, maxMs = 10_000): HeldLocks {
  const proc = Bun.spawn([process.execPath, import.meta.path, url, lock, until, String(maxMs)], { stdout: 'pipe', stderr: 'inherit' })
  let onHeld!: () => void
  let failed!: (err: Error) => void
  const held = new Promise<void>((resolve, reject) => { onHeld = resolve; failed = reject })
  const released = (async () => {
    let out = ''
    const decoder = new TextDecoder()
    for await (const chunk of proc.stdout) {
      out += decoder.decode(chunk)
      if (out.includes('held\n')) onHeld()
    }
    await proc.exited
    const m = /released (condition|timeout)/.exec(out)
    if (!m) { const err = new Error(`the lock holder ended without letting go of its locks: ${out}`); failed(err); throw err }
    return m[1] as 'condition' | 'timeout'
  })()
  return { held, released }
}

if (import.meta.main) {
  const [url, lock, until, maxMs] = process.argv.slice(2)
  const sql = new SQL(url!, { max: 1 })
  const conn = await sql.reserve()
  await conn.unsafe('BEGIN')
  await conn.unsafe(lock!)
  process.stdout.write('held\n')
  const end = performance.now() + Number(maxMs)
  let outcome: 'condition' | 'timeout' = 'timeout'
  while (performance.now() < end) {
    if ((await conn.unsafe(until!)).length) { outcome = 'condition'; break }
    await Bun.sleep(10)
  }
  await conn.unsafe('COMMIT')
  conn.release()
  await sql.close()
  process.stdout.write(`released ${outcome}\n`)
}

/**
 * The WAL checkpointer's own thread (a Bun Worker; checkpointer.ts starts it): on its own
 * connection to the server's SQLite file, a PASSIVE checkpoint every `everyMs`. Passive: it
 * copies what the WAL holds into the database file without waiting for, or holding up, the
 * server's writer or readers; the copying and the fsync that ends it happen on this thread.
 * A "stop" message closes the connection and answers "closed".
 */
import { Database } from 'bun:sqlite'

declare const self: Worker

export interface CheckpointerStart { path: string; everyMs: number; busyTimeoutMs: number }
export type CheckpointerReply = { closed: true } | { failed: string }

let db: Database | undefined
let timer: ReturnType<typeof setInterval> | undefined

self.onmessage = (event: MessageEvent<CheckpointerStart | 'stop'>) => {
  if (event.data === 'stop') {
    if (timer) clearInterval(timer)
    // Every statement finalized (close(true)), so the connection really closes now: the server's
    // own close, the last, then checkpoints and deletes the WAL.
    try { db?.close(true) } catch { /* closed already */ }
    db = undefined
    postMessage({ closed: true } satisfies CheckpointerReply)
    return
  }
  const { path, everyMs, busyTimeoutMs } = event.data
  try {
    db = new Database(path, { readwrite: true, create: false })
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
    // This connection writes nothing, so it never checkpoints on commit; the loop below does.
    const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
    timer = setInterval(() => {
      try { checkpoint.get() } catch (err) {
        // Busy (a backup holding the file): the next turn tries again.
        if (!/busy|locked/i.test((err as Error).message)) throw err
      }
    }, everyMs)
  } catch (err) {
    postMessage({ failed: (err as Error).message } satisfies CheckpointerReply)
  }
}

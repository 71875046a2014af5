import type { Db } from './client'
import { BUSY_TIMEOUT_MS, WAL_AUTOCHECKPOINT_PAGES } from './client'
import type { Logger } from '../platform/log'
import { COMPILED } from '../platform/compiled'
import type { CheckpointerReply, CheckpointerStart } from './checkpoint-worker'

/** How often the checkpointer thread copies the WAL into the database file. */
export const CHECKPOINT_EVERY_MS = 250
/**
 * The server's own connection still checkpoints when the WAL passes this many pages (64 MiB at
 * 2 KiB pages): only if the thread has stopped, or never catches up under writes that never pause.
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 32_000

/** In the compiled binary the worker is embedded beside the main entry under its path from src/ (scripts/build.ts). */
const WORKER_URL = COMPILED ? new URL('./db/checkpoint-worker.ts', import.meta.url).href : new URL('./checkpoint-worker.ts', import.meta.url).href

export interface Checkpointer {
  /** Stops the thread and closes its connection (before the server closes its own, which then deletes the WAL). */
  stop(timeoutMs?: number): Promise<void>
}

/**
 * Moves WAL checkpoints off the server's thread for a SQLite file: every commit used to copy the
 * WAL into the database file, and fsync it, on the thread that answers requests whenever the WAL
 * passed 4,000 pages (several times a second under a webhook fan-out). A worker thread now does
 * that every CHECKPOINT_EVERY_MS on a connection of its own; the server's connection keeps a far
 * higher threshold as a fallback, and goes back to its own threshold if the thread dies.
 * Nothing to do for PostgreSQL or an in-memory database.
 */
export function startCheckpointer(db: Db, logger: Logger): Checkpointer | null {
  if (db.engine !== 'sqlite' || db.location === ':memory:' || db.location === '') return null
  const worker = new Worker(WORKER_URL)
  // An idle checkpointer must not keep the process alive.
  ;(worker as unknown as { unref(): void }).unref()
  let running = true
  let closed: (() => void) | undefined
  const fallBack = (why: string) => {
    if (!running) return
    running = false
    try { db.$client.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`) } catch { /* closing */ }
    logger.warn({ reason: why }, 'the WAL checkpointer thread stopped; the server checkpoints on its own thread again')
    worker.terminate()
  }
  worker.onmessage = (event: MessageEvent<CheckpointerReply>) => {
    if ('closed' in event.data) closed?.()
    else fallBack(event.data.failed)
  }
  worker.onerror = (event) => fallBack(event.message)
  worker.postMessage({ path: db.location, everyMs: CHECKPOINT_EVERY_MS, busyTimeoutMs: BUSY_TIMEOUT_MS } satisfies CheckpointerStart)
  db.$client.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`)
  return {
    async stop(timeoutMs = 2_000) {
      if (!running) return
      running = false
      const done = new Promise<void>((resolve) => { closed = resolve })
      worker.postMessage('stop')
      await Promise.race([done, Bun.sleep(timeoutMs)])
      worker.terminate()
    },
  }
}

/**
 * The CSV import's own thread (a Bun Worker; import-off-thread.ts starts it). It opens its own
 * SQLite connection to the server's database for each import and runs the same operation as the
 * console's `towline jobs import`, idempotency record included, in one transaction there: WAL
 * lets the server's readers go on meanwhile, and the server's thread never waits for the parse,
 * the checks or the write. At a lower CPU priority (this thread only, on Linux), so that on a busy
 * machine the server's requests come first.
 */
import { setPriority } from 'node:os'
import { closeDatabase, openDatabase } from '../db/client'
import { idempotencyOwner, withIdempotencyChecked } from '../idempotency/idempotency'
import { createContextFactory } from '../operations/context-factory'
import { AppError } from '../platform/errors'
import { checkImport, writeImport, type CheckedImport, type ImportResult } from './import-jobs'
import type { ImportReply, ImportTask } from './import-off-thread'

declare const self: Worker

// On Linux, setpriority with pid 0 applies to the calling thread only: the server's thread keeps
// its own. Nice 19, not SCHED_IDLE: this thread holds the database's write lock while it writes,
// and an unprivileged thread never leaves SCHED_IDLE; starved under full load, it would hold up
// every writer (every instance, on PostgreSQL).
try { setPriority(0, 19) } catch { /* not allowed here: the import runs at normal priority */ }

self.onmessage = (event: MessageEvent<ImportTask>) => {
  const task = event.data
  postMessage(runTask(task) satisfies ImportReply)
}

function runTask(task: ImportTask): ImportReply {
  let db: ReturnType<typeof openDatabase> | undefined
  try {
    db = openDatabase(task.dbPath, { create: false })
    const clock = { now: () => task.nowMs }
    const links = { publicUrl: task.publicUrl, key: Buffer.from(task.linkKey) }
    const ctx = createContextFactory({ db, clock, links }).forDispatcher(task.user, task.requestId)
    const bytes = new Uint8Array(task.bytes)
    const answer = (body: ImportResult) => ({ status: body.errors.length ? 422 : 200, body })
    // The file is read and checked outside any transaction: the write lock (which the server's own
    // writes would wait for) is held only while the checked rows are written.
    const check = () => {
      const checked = checkImport(ctx, bytes, { dryRun: task.dryRun })
      return 'done' in checked ? { done: answer(checked.done) } : checked
    }
    const write = (checked: CheckedImport) => answer(writeImport(ctx, checked))
    const done = task.idempotency
      ? withIdempotencyChecked({ db, clock, links }, idempotencyOwner(ctx.actor), task.idempotency.key, { method: 'POST', path: '/import', body: { sha256: task.idempotency.sha256 } }, check, write)
      : (() => { const first = check(); return { ...('done' in first ? first.done : write(first.checked)), replayed: false } })()
    return { id: task.id, ok: done as { status: number; body: ImportResult; replayed: boolean } }
  } catch (err) {
    if (err instanceof AppError) return { id: task.id, refused: { code: err.errorCode, message: err.message, details: err.details } }
    return { id: task.id, crashed: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err) }
  } finally {
    if (db) closeDatabase(db)
  }
}

/**
 * One dashboard import as the import thread runs it (import-worker.ts loads this module there,
 * after lowering the thread's priority): its own SQLite connection to the server's database for
 * each import, and the same operation as the console's `towline jobs import`, idempotency record
 * included, in one transaction there.
 */
import { closeDatabase, openDatabase } from '../db/client'
import { idempotencyOwner, withIdempotencyChecked } from '../idempotency/idempotency'
import { createContextFactory } from '../operations/context-factory'
import { AppError } from '../platform/errors'
import { checkImport, writeImport, type CheckedImport, type ImportResult } from './import-jobs'
import type { ImportReply, ImportTask } from './import-off-thread'

/** Runs one task to its reply (a refusal or a crash is a reply too, never a throw). */
export function runTask(task: ImportTask): ImportReply {
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
    const write = (checked: CheckedImport) => answer(writeImport(ctx, checked, bytes))
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

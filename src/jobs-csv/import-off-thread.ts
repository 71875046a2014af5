import type { OperationContext } from '../operations/operation-context'
import { AppError, type ErrorCode } from '../platform/errors'
import { idempotencyOwner, withIdempotency } from '../idempotency/idempotency'
import type { JobLinks } from '../jobs/job-links'
import type { Clock } from '../platform/clock'
import type { Db } from '../db/client'
import { importJobs, type ImportResult } from './import-jobs'
import { COMPILED } from '../platform/compiled'

/** One import for the worker (structured-cloned): where the database is, who imports, the file. */
export interface ImportTask {
  id: number
  dbPath: string
  publicUrl: string
  linkKey: Uint8Array
  /** The request's time: the whole import is stamped with it (and a test's clock reaches the worker). */
  nowMs: number
  user: { userId: string; role: 'owner' | 'dispatcher'; accountId: string; siteIds: string[] | null }
  requestId?: string
  bytes: Uint8Array
  dryRun: boolean
  idempotency: { key: string; sha256: string } | null
}

/** The worker's answer to one task. */
export type ImportReply =
  | { id: number; ok: { status: number; body: ImportResult; replayed: boolean } }
  | { id: number; refused: { code: ErrorCode; message: string; details: Record<string, unknown> } }
  | { id: number; crashed: string }

/** What an import needs from the server. */
export interface ImportDeps { db: Db; clock: Clock; links: JobLinks; config: { dbPath: string; publicUrl: string } }

/**
 * The worker's entry: in the compiled binary every module's import.meta.url is the binary's, and
 * the worker is embedded beside it under its path from src/ (scripts/build.ts adds it as an entry point).
 */
const WORKER_URL = COMPILED ? new URL('./jobs-csv/import-worker.ts', import.meta.url).href : new URL('./import-worker.ts', import.meta.url).href

let worker: Worker | undefined
let nextId = 0
const waiting = new Map<number, { resolve: (r: ImportReply) => void; reject: (err: Error) => void }>()

/** The one import worker of this process, started on first use; imports queue on it one at a time. */
function importWorker(): Worker {
  if (worker) return worker
  const w = new Worker(WORKER_URL)
  // An idle worker must not keep a console command or a test process alive.
  ;(w as unknown as { unref(): void }).unref()
  w.onmessage = (event: MessageEvent<ImportReply>) => {
    const reply = event.data
    waiting.get(reply.id)?.resolve(reply)
    waiting.delete(reply.id)
  }
  w.onerror = (event) => {
    // The thread died: what it held fails (its transaction was never committed), the next import starts a new one.
    if (worker === w) worker = undefined
    for (const [id, p] of waiting) { p.reject(new Error(`the import thread stopped: ${event.message}`)); waiting.delete(id) }
    w.terminate()
  }
  worker = w
  return w
}

/**
 * Runs the dashboard's CSV import (check or import, with the form's idempotency key) on the
 * import worker, on its own connection to the same database file, and resolves with what the
 * same call in this thread would return (a refusal rethrown as the same AppError). A database
 * only this process can open (`:memory:`) is imported in this thread.
 */
export async function importOffThread(deps: ImportDeps, ctx: OperationContext, input: { bytes: Uint8Array; dryRun: boolean; idempotency: { key: string; sha256: string } | null }) {
  if (ctx.actor.kind !== 'dispatcher') throw new AppError('forbidden', 'Only a signed-in user imports jobs from the dashboard.')
  if (deps.config.dbPath === ':memory:' || deps.config.dbPath === '') {
    const run = () => { const body = importJobs(ctx, input.bytes, { dryRun: input.dryRun }); return { status: body.errors.length ? 422 : 200, body } }
    return input.idempotency
      ? withIdempotency(deps, idempotencyOwner(ctx.actor), input.idempotency.key, { method: 'POST', path: '/import', body: { sha256: input.idempotency.sha256 } }, run) as { status: number; body: ImportResult; replayed: boolean }
      : { ...run(), replayed: false }
  }
  const id = ++nextId
  const task: ImportTask = {
    id, dbPath: deps.config.dbPath, publicUrl: deps.links.publicUrl, linkKey: new Uint8Array(deps.links.key), nowMs: deps.clock.now(),
    user: { userId: ctx.actor.userId, role: ctx.actor.role, accountId: ctx.scope.accountId, siteIds: ctx.scope.siteIds },
    requestId: ctx.requestId, bytes: input.bytes, dryRun: input.dryRun, idempotency: input.idempotency,
  }
  const w = importWorker()
  const reply = await new Promise<ImportReply>((resolve, reject) => {
    waiting.set(id, { resolve, reject })
    w.postMessage(task)
  })
  if ('ok' in reply) return reply.ok
  if ('refused' in reply) throw new AppError(reply.refused.code, reply.refused.message, reply.refused.details)
  throw new Error(`the import thread failed: ${reply.crashed}`)
}

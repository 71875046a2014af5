import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads'
import { randomBytes } from 'node:crypto'
import { CHANGES, type PgAnswer, type PgReply, type PgRequest, type PgThreadData } from './pg-protocol'
import { toPostgres } from './to-postgres'
import { COMPILED } from '../../platform/compiled'

/** A statement PostgreSQL refused: its message, SQLSTATE and constraint as PostgreSQL gave them. */
export class PgError extends Error {
  constructor(message: string, readonly sqlstate?: string, readonly constraint?: string, readonly detail?: string) {
    super(message)
    this.name = 'PgError'
  }
}

/**
 * The thread's entry: embedded in the compiled binary under its path from src/ (scripts/build.ts),
 * found from the embedded root (this module is bundled into every entry: the server's and the
 * import thread's, each at its own path).
 */
const THREAD_URL = COMPILED
  ? new URL('./db/pg/pg-thread.ts', import.meta.url.replace(/(\/\$bunfs\/root\/|\/~BUN\/root\/).*$/, '$1'))
  : new URL('./pg-thread.ts', import.meta.url)

/**
 * Every write transaction takes this one lock first: writers queue as they do on SQLite (one at a
 * time, across every instance on the database), so what the code checks inside a transaction
 * still holds when it commits, and an id or position taken inside one is committed in order.
 */
export const WRITE_LOCK = 7_460_617_001

type Params = unknown[]

/** The longest a statement (with the lock waits before it) may take before the client gives up on its thread. */
const ANSWER_TIMEOUT_MS = 120_000

/**
 * bun:sqlite binds true/false as 1/0 and undefined as NULL; the same here. PostgreSQL's text cannot
 * hold U+0000: the API refuses it in what it is sent, and text from outside (a webhook receiver's
 * answer, a search typed with it) has it stored and compared as U+FFFD.
 */
function bindable(params: Params): unknown[] {
  const out = new Array(params.length)
  for (let i = 0; i < params.length; i++) {
    const p = params[i]
    out[i] = p === undefined ? null : p === true ? 1 : p === false ? 0 : typeof p === 'string' && p.includes('\u0000') ? p.replaceAll('\u0000', '\ufffd') : p
  }
  return out
}

/** One statement, used like bun:sqlite's: get (null when none), all, values, run. */
export class PgStatement<R = unknown, P extends Params = Params> {
  /** Whether the statement writes (so its commit is announced to other connections). */
  private readonly writes: boolean
  constructor(private readonly client: PgClient, readonly source: string, private readonly text: string, announce = true) {
    // A row lock (SELECT ... FOR UPDATE) changes nothing another instance could read.
    this.writes = announce && /\b(INSERT|UPDATE|DELETE)\b/i.test(text.replace(/\bFOR\s+(NO\s+KEY\s+)?UPDATE\b/gi, ''))
  }
  private send(op: 'all' | 'values' | 'run', params: P) {
    return this.client.send({ op, sql: this.text, params: bindable(params), announce: this.writes && this.client.wrote() })
  }
  all(...params: P): R[] { return this.send('all', params).rows as R[] }
  get(...params: P): R | null { return (this.all(...params)[0] as R | undefined) ?? null }
  values(...params: P): unknown[][] { return this.send('values', params).rows as unknown[][] }
  run(...params: P): { changes: number; lastInsertRowid: number } { return { changes: this.send('run', params).changes, lastInsertRowid: 0 } }
  finalize(): void {}
  toString(): string { return this.source }
}

type TxFn<A extends unknown[], T> = ((...args: A) => T) & { deferred: (...args: A) => T; immediate: (...args: A) => T; exclusive: (...args: A) => T }

/**
 * A PostgreSQL connection with the synchronous shape of bun:sqlite's Database, so the code above
 * it runs unchanged on either engine: statements go to the PostgreSQL thread and this thread
 * waits for each answer. Statements are written as for SQLite and rewritten once (toPostgres).
 */
export class PgClient {
  readonly engine = 'postgres' as const
  private readonly worker: Worker
  private readonly port: import('node:worker_threads').MessagePort
  private readonly flag: Int32Array
  /** The number of the last answer taken (pg-protocol.ts). */
  private answered = 0
  /** Slept on (Atomics.wait) while a posted answer is on its way to the port. */
  private readonly pause = new Int32Array(new SharedArrayBuffer(4))
  private readonly cache = new Map<string, PgStatement<any, any>>()
  private depth = 0
  /** Whether the open transaction wrote: its commit is then announced. */
  private dirty = false
  private closed = false
  /** This client's name in the announcements of commits. */
  private readonly instance = randomBytes(8).toString('hex')

  constructor(readonly url: string, opts: { connectTimeoutMs?: number; /** Tests only (PgThreadData). */ answerLagMs?: number } = {}) {
    const { port1, port2 } = new MessageChannel()
    const signal = new SharedArrayBuffer(8)
    this.flag = new Int32Array(signal)
    this.port = port1
    const data: PgThreadData = { url, port: port2, signal, instance: this.instance, answerLagMs: opts.answerLagMs }
    this.worker = new Worker(THREAD_URL, { workerData: data, transferList: [port2 as never] })
    this.worker.unref()
    // The thread answers first with its connection (or why it has none), as SQLite's open would.
    const first = this.answer(opts.connectTimeoutMs ?? 15_000)
    if (!first?.ok) {
      void this.worker.terminate()
      throw new PgError(`could not connect to PostgreSQL: ${first ? first.message : 'no answer'}`, first?.sqlstate)
    }
  }

  /**
   * Waits for the thread's next answer (numbered: the one after the last taken) and returns it,
   * or undefined after `timeoutMs`. The number comes in slot 0 of the signal once the answer is
   * posted, but the message itself can reach this thread's port a moment later: it is waited for,
   * never taken to be missing, and an answer of another number is never taken for it (each
   * statement gets its own answer, whatever the timing).
   */
  private answer(timeoutMs: number): PgAnswer | undefined {
    const want = (this.answered + 1) | 0
    const deadline = performance.now() + timeoutMs
    for (let seen = Atomics.load(this.flag, 0); seen !== want; seen = Atomics.load(this.flag, 0)) {
      const left = deadline - performance.now()
      if (left <= 0) return undefined
      Atomics.wait(this.flag, 0, seen, left)
    }
    for (;;) {
      const got = receiveMessageOnPort(this.port)?.message as PgAnswer | undefined
      if (got?.n === want) { this.answered = want; return got }
      // Posted, not arrived yet: look again in a moment.
      if (got === undefined) {
        if (performance.now() > deadline) return undefined
        Atomics.wait(this.pause, 0, 0, 0.05)
      }
    }
  }

  /**
   * Notes a write: inside a transaction its commit will be announced (true is returned only
   * outside one, where the write is announced as soon as it is done).
   */
  wrote(): boolean {
    if (this.depth === 0) return true
    this.dirty = true
    return false
  }

  /**
   * How many commits other connections have announced (another instance, a console command):
   * it changes soon after one commits a write, as SQLite's `PRAGMA data_version` does.
   */
  dataVersion(): number { return Atomics.load(this.flag, 1) }

  /**
   * Sends one request and waits for its answer on this thread. A thread that does not answer in
   * ANSWER_TIMEOUT_MS (it died, or PostgreSQL hangs) closes the client: what it would answer later
   * could be taken for the answer to another statement.
   */
  send(req: PgRequest): Extract<PgReply, { ok: true }> {
    if (this.closed) throw new PgError('the database connection is closed')
    this.port.postMessage(req)
    const reply = this.answer(ANSWER_TIMEOUT_MS)
    if (!reply) {
      this.close()
      throw new PgError(`PostgreSQL did not answer in ${ANSWER_TIMEOUT_MS / 1000} s; the connection is closed`)
    }
    if (!reply.ok) throw new PgError(reply.message, reply.sqlstate, reply.constraint, reply.detail)
    return reply
  }

  /** A statement, rewritten once and kept (as bun:sqlite's query() caches). */
  query<R = unknown, P extends Params = Params>(sql: string): PgStatement<R, P> {
    let s = this.cache.get(sql)
    if (!s) { s = new PgStatement(this, sql, toPostgres(sql)); this.cache.set(sql, s) }
    return s as PgStatement<R, P>
  }

  /**
   * A statement whose writes other instances need not hear of (their caches and boards are not
   * about it): the rate-limit buckets every request writes.
   */
  unannounced<R = unknown, P extends Params = Params>(sql: string): PgStatement<R, P> {
    return new PgStatement<R, P>(this, sql, toPostgres(sql), false)
  }

  prepare<R = unknown, P extends Params = Params>(sql: string): PgStatement<R, P> { return this.query<R, P>(sql) }

  /** Runs statements with no parameters (several, separated by `;`). */
  exec(sql: string): void {
    this.wrote()
    this.send({ op: 'exec', sql: toPostgres(sql) })
  }

  /** bun:sqlite's run(sql, params): the parameters as one array (or spread). */
  run(sql: string, ...params: Params): { changes: number; lastInsertRowid: number } {
    return this.query(sql).run(...(params.length === 1 && Array.isArray(params[0]) ? params[0] : params))
  }

  get inTransaction(): boolean { return this.depth > 0 }

  /**
   * bun:sqlite's transaction(): a function that runs `fn` in a transaction (a savepoint when one
   * is open), committed when it returns and rolled back when it throws. Every kind takes the write
   * lock, unless `writeLock` is false: a claim transaction (client.ts inClaimTransaction), which
   * takes row locks instead.
   */
  transaction<A extends unknown[], T>(fn: (...args: A) => T, opts: { writeLock?: boolean } = {}): TxFn<A, T> {
    const begin = opts.writeLock === false ? 'BEGIN' : `BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`
    const run = (...args: A): T => {
      const outer = this.depth === 0
      const name = `s${this.depth}`
      this.send({ op: 'exec', sql: outer ? begin : `SAVEPOINT ${name}` })
      if (outer) this.dirty = false
      this.depth++
      try {
        const result = fn(...args)
        this.depth--
        const announce = outer && this.dirty ? `SELECT pg_notify('${CHANGES}', '${this.instance}'); ` : ''
        this.send({ op: 'exec', sql: outer ? `${announce}COMMIT` : `RELEASE SAVEPOINT ${name}` })
        return result
      } catch (err) {
        this.depth--
        try { this.send({ op: 'exec', sql: outer ? 'ROLLBACK' : `ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}` }) } catch { /* the connection is gone: PostgreSQL rolls back */ }
        throw err
      }
    }
    return Object.assign(run, { deferred: run, immediate: run, exclusive: run }) as TxFn<A, T>
  }

  close(_throwOnError?: boolean): void {
    if (this.closed) return
    this.closed = true
    this.cache.clear()
    this.port.close()
    void this.worker.terminate()
  }
}

/**
 * The PostgreSQL thread (a worker_threads Worker; pg-client.ts starts it). It holds this
 * process's one PostgreSQL connection (Bun's own client) and runs each statement the server's
 * thread sends, which waits for the answer (Atomics.wait): the code above the database stays
 * synchronous, as it is on SQLite, and a transaction is one connection's statements in order.
 */
import { workerData } from 'node:worker_threads'
import { SQL } from 'bun'
import { CHANGES, type PgAnswer, type PgReply, type PgRequest, type PgThreadData } from './pg-protocol'

const { url, port, signal, instance, answerLagMs } = workerData as PgThreadData
const flag = new Int32Array(signal)

/** numeric's type id: sum() and avg() of integers come as its text. (int8 comes as BigInt.) */
const NUMERIC = 1700
/** json and jsonb: given back as JSON text, as SQLite gives JSON. */
const JSON_TYPES = new Set([114, 3802])

function toJs(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  return value
}

function convert(kind: 'number' | 'json', value: unknown): unknown {
  if (kind === 'number') return Number(value)
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Rows as bun:sqlite gives them: numbers for int8 and numeric (not BigInt or strings), JSON as text. */
function plain(result: { columns?: { name: string; type: number }[] } & unknown[], values: boolean): unknown[] {
  const kinds = (result.columns ?? []).map((c) => c.type === NUMERIC ? 'number' : JSON_TYPES.has(c.type) ? 'json' : null)
  const anyConverted = kinds.some(Boolean)
  const out: unknown[] = new Array(result.length)
  for (let i = 0; i < result.length; i++) {
    const row = result[i] as Record<string, unknown> | unknown[]
    if (values) {
      const r = (row as unknown[]).map(toJs)
      if (anyConverted) for (let c = 0; c < r.length; c++) if (kinds[c] && r[c] !== null) r[c] = convert(kinds[c]!, r[c])
      out[i] = r
    } else {
      const r: Record<string, unknown> = {}
      for (const k in row as Record<string, unknown>) r[k] = toJs((row as Record<string, unknown>)[k])
      if (anyConverted) result.columns!.forEach((c, ci) => { if (kinds[ci] && r[c.name] !== null && r[c.name] !== undefined) r[c.name] = convert(kinds[ci]!, r[c.name]) })
      out[i] = r
    }
  }
  return out
}

const sql = new SQL(url, { max: 1, bigint: true, idleTimeout: 0, connectionTimeout: 10 })
let conn: Awaited<ReturnType<typeof sql.reserve>>

/** Whether an error left the connection unusable (the server restarted, the network dropped it). */
function connectionLost(e: { errno?: unknown; code?: unknown }): boolean {
  const state = typeof e.errno === 'string' ? e.errno : ''
  return state.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03' || /CONNECTION|CLOSED|SOCKET/i.test(String(e.code ?? ''))
}

let lost = false

async function connect(): Promise<void> {
  conn = await sql.reserve()
  await conn.unsafe("SET TIME ZONE 'UTC'")
}

async function run(req: PgRequest): Promise<PgReply> {
  // After a lost connection the next statement gets a new one (the failed one's transaction, if
  // any, was rolled back by the server, and its caller was told).
  if (lost) {
    try {
      try { conn.release() } catch { /* already gone */ }
      await connect()
      lost = false
    } catch (err) {
      return { ok: false, message: `PostgreSQL is unreachable: ${String((err as Error).message ?? err)}`, sqlstate: '08006' }
    }
  }
  try {
    if (req.op === 'exec') {
      await conn.unsafe(req.sql).simple()
      return { ok: true, rows: [], changes: 0 }
    }
    let q = conn.unsafe(req.sql, req.params as unknown[])
    if (req.op === 'values') q = q.values() as typeof q
    const result = await q as unknown as { columns?: { name: string; type: number }[]; count: number } & unknown[]
    if (req.announce) await conn.unsafe('SELECT pg_notify($1, $2)', [CHANGES, instance])
    return { ok: true, rows: req.op === 'run' ? [] : plain(result, req.op === 'values'), changes: result.count ?? 0 }
  } catch (err) {
    const e = err as { message?: string; errno?: string; code?: string; detail?: string; constraint?: string }
    if (connectionLost(e)) lost = true
    return { ok: false, message: String(e.message ?? err), sqlstate: typeof e.errno === 'string' ? e.errno : undefined, detail: e.detail, constraint: e.constraint }
  }
}

// One statement at a time: the server's thread waits for each answer before sending the next.
port.on('message', async (req: PgRequest) => { answer(await run(req)) })

/** How many answers were posted: each carries its number, and slot 0 holds the last one's. */
let answers = 0

function answer(reply: PgReply): void {
  answers = (answers + 1) | 0
  const message: PgAnswer = { ...reply, n: answers }
  if (!answerLagMs) port.postMessage(message)
  Atomics.store(flag, 0, answers)
  Atomics.notify(flag, 0)
  if (answerLagMs) setTimeout(() => port.postMessage(message), answerLagMs)
}

// The first answer is the connection's: the server's thread waits for it as for any other.
try {
  await connect()
  // Other connections' commits (another instance, a console command) count in slot 1.
  await sql.listen(CHANGES, (payload) => { if (payload !== instance) Atomics.add(flag, 1, 1) })
  answer({ ok: true, rows: [], changes: 0 })
} catch (err) {
  const e = err as { message?: string; errno?: string }
  answer({ ok: false, message: String(e.message ?? err), sqlstate: typeof e.errno === 'string' ? e.errno : undefined })
}

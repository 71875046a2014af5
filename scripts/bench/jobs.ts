/**
 * The "jobs" section: the cost of the job endpoints over the database they write.
 *
 * 1. POST /api/v1/jobs (a unique external_ref per request) and GET /api/v1/jobs/{id} (1,000
 *    existing ids taken in turn) against the compiled binary, and the same against a bare
 *    Bun.serve + bun:sqlite (bare-jobs-server.ts) doing the same row writes (job, event, text
 *    in one transaction) and the same point read, on a database migrated by the binary. Same
 *    load tool, connections and duration; the ratio to the baseline is the figure.
 * 2. GET /api/v1/jobs?updated_since=...&limit=25 over 1,000,000 seeded jobs (seed-jobs.ts,
 *    cached under .tmp/), for several updated_since values, first as the service runs today
 *    (no ANALYZE), then after ANALYZE, because the query plan SQLite picks depends on it.
 *    Latency is measured on BENCH_LIST_CONNECTIONS connections (default 1): the target is the
 *    time one request takes, not the queue in front of a saturated server.
 */
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import type { BenchContext, LoadResult, LoadTarget, RunningServer, Section } from './lib'
import { fmt, fmtLatency, loadTest, pairedLoad, startServer } from './lib'
import { createBenchKey, medianRun, noteBackground, recordLoad, recordPaired, startTowline } from './frame'
import { copySeeded, fileMb, seededJobsDb } from './seed-jobs'

const TARGET_READ_RATIO = 0.7
const TARGET_CREATE_RATIO = 0.35
const TARGET_LIST_P99_MS = 20
const TARGET_SEED_SECONDS = 120
const LIST_JOBS = 1_000_000
const LIST_YEARS = 2
const READ_IDS = 1_000
/** Below this share of one core, a single-threaded server under full load was not the bottleneck. */
const SATURATED_CORES = 0.8
const MINUTE = 60_000
const DAY = 86_400_000

/** The POST body: the brief's example, with an external_ref unique to each request (`{seq}`). */
export const CREATE_BODY = JSON.stringify({
  external_ref: 'BENCH-{seq}', source: 'motor_club', payer_type: 'motor_club', service_type: 'flatbed', urgency: 'urgent',
  customer: { name: 'Ann Lee', phone: '+15552013344', sms_consent: true },
  vehicle: { year: '2019', make: 'Honda', model: 'Civic', drive_type: 'fwd' },
  pickup: { location: 'I-5 N mile 12' }, destination: "Joe's Garage",
})

/** The list query as drizzle sends it (src/jobs/job.queries.ts listJobRows), for EXPLAIN. */
const LIST_SQL = 'SELECT * FROM jobs WHERE (account_id = ? AND updated_at >= ?) ORDER BY created_at DESC, id DESC LIMIT ?'

/** Connections for the list latency runs, BENCH_LIST_CONNECTIONS (default 1). */
function listConnections(): number {
  const raw = process.env.BENCH_LIST_CONNECTIONS
  if (raw === undefined || raw === '') return 1
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_LIST_CONNECTIONS: "${raw}" is not a whole number of at least 1`)
  return n
}

/** Sends one request and throws unless it answers `status`; returns the body text. */
async function expectStatus(url: string, init: RequestInit, status: number): Promise<string> {
  const res = await fetch(url, init)
  const text = await res.text()
  if (res.status !== status) throw new Error(`${init.method ?? 'GET'} ${url} answered ${res.status}, expected ${status}: ${text.slice(0, 300)}`)
  return text
}

/** Picks up to `n` random job ids from a database (WAL: fine while the server runs). */
function sampleJobIds(path: string, n: number): { ids: string[]; total: number } {
  const db = new Database(path, { strict: true })
  try {
    const total = db.query<{ c: number }, []>('SELECT COUNT(*) AS c FROM jobs').get()!.c
    const ids = db.query<{ id: string }, [number]>('SELECT id FROM jobs ORDER BY random() LIMIT ?').all(n).map((r) => r.id)
    return { ids, total }
  } finally {
    db.close()
  }
}

/** Counts rows per table (to check that every create wrote its three rows). */
function rowCounts(path: string): { jobs: number; events: number; texts: number } {
  const db = new Database(path, { strict: true })
  try {
    const count = (t: string) => db.query<{ c: number }, []>(`SELECT COUNT(*) AS c FROM ${t}`).get()!.c
    return { jobs: count('jobs'), events: count('job_events'), texts: count('texts') }
  } finally {
    db.close()
  }
}

/** Loads POST /jobs on one running server, then picks the ids its GET /jobs/{id} load will read (written by that load). */
async function createThenPrepareRead(ctx: BenchContext, label: string, server: RunningServer, db: string, headers: Record<string, string>) {
  const post = { method: 'POST', headers: { ...headers, 'content-type': 'application/json' } }
  const created = await expectStatus(`${server.baseUrl}/api/v1/jobs`, { ...post, body: CREATE_BODY.replace('{seq}', `check-${Date.now()}`) }, 201)
  const createBytes = Buffer.byteLength(created)
  const create = await loadTest(ctx, { url: `${server.baseUrl}/api/v1/jobs`, method: 'POST', body: CREATE_BODY, headers: post.headers, pid: server.proc.pid })
  recordLoad(ctx, `${label} POST /jobs`, create)

  const { ids, total } = sampleJobIds(db, READ_IDS)
  const readBytes = Buffer.byteLength(await expectStatus(`${server.baseUrl}/api/v1/jobs/${ids[0]}`, { headers }, 200))
  ctx.log(`${label}: ${fmt(total)} jobs in the database; reading ${ids.length} of them in turn`)
  const readTarget: LoadTarget = { url: server.baseUrl, paths: ids.map((id) => `/api/v1/jobs/${id}`), headers, pid: server.proc.pid }
  return { create, createBytes, readBytes, rowsAtRead: total, readTarget }
}

/** Notes a run whose server did not use a full core (the figure is then not the server's limit). */
function noteUnsaturated(ctx: BenchContext, label: string, r: LoadResult): void {
  if (r.serverCores !== null && r.serverCores < SATURATED_CORES) {
    ctx.note(`${label}: the server used only ${fmt(r.serverCores * 100)}% of a core under load: it waited on something other than CPU (disk? fsync?), or ${r.tool} or other load on the machine was the limit`)
  }
}

/** Part 1: creates and point reads, towline against the bare baseline. */
async function createsAndReads(ctx: BenchContext): Promise<void> {
  const towDb = join(ctx.tmp, 'towline.db')
  const bareDb = join(ctx.tmp, 'bare.db')
  const key = await createBenchKey(ctx, towDb)
  await createBenchKey(ctx, bareDb) // the same migrated schema, default account and site; the key is unused

  // Each in its own process, never both under load at once: the creates one after the other,
  // then the reads in alternating rounds (the machine's speed drifts; see pairedLoad).
  const bare = await startServer(ctx.children, [process.execPath, join(import.meta.dir, 'bare-jobs-server.ts')], { cwd: ctx.root, env: { ...process.env, DB_PATH: bareDb } })
  const bp = await createThenPrepareRead(ctx, 'bare', bare, bareDb, {})
  const { server } = await startTowline(ctx, towDb)
  const tp = await createThenPrepareRead(ctx, 'towline', server, towDb, { authorization: `Bearer ${key}` })
  const reads = await pairedLoad(ctx, bp.readTarget, tp.readTarget)
  await ctx.children.stop(bare.proc)
  const code = await ctx.children.stop(server.proc)
  if (code !== 0) ctx.record({ metric: 'towline exit code after SIGTERM', value: String(code), target: '0', pass: false })
  const b = { ...bp, read: medianRun(reads.a) }
  const t = { ...tp, read: medianRun(reads.b) }
  recordLoad(ctx, 'bare GET /jobs/{id}', b.read)
  recordLoad(ctx, 'towline GET /jobs/{id}', t.read)
  recordPaired(ctx, 'GET /jobs/{id}', reads)

  const readRatio = reads.ratio
  const createRatio = t.create.rps / b.create.rps
  ctx.record({ metric: 'towline/bare GET /jobs/{id} requests/s ratio', value: fmt(readRatio, 2), target: `≥ ${TARGET_READ_RATIO}`, pass: readRatio >= TARGET_READ_RATIO })
  ctx.record({ metric: 'towline/bare POST /jobs requests/s ratio', value: fmt(createRatio, 2), target: `≥ ${TARGET_CREATE_RATIO}`, pass: createRatio >= TARGET_CREATE_RATIO })
  ctx.record({ metric: 'response bytes POST / GET, bare', value: `${fmt(b.createBytes)} / ${fmt(b.readBytes)}`, target: '', pass: null })
  ctx.record({ metric: 'response bytes POST / GET, towline', value: `${fmt(t.createBytes)} / ${fmt(t.readBytes)}`, target: '', pass: null })

  for (const [label, r] of [['bare POST /jobs', b.create], ['bare GET /jobs/{id}', b.read], ['towline POST /jobs', t.create], ['towline GET /jobs/{id}', t.read]] as const) noteUnsaturated(ctx, label, r)
  ctx.note(`GET /jobs/{id} read ${READ_IDS} random ids in turn from the jobs its own POST run wrote (bare: ${fmt(b.rowsAtRead)} jobs, towline: ${fmt(t.rowsAtRead)})`)

  // Every create must have written its job, event and text rows.
  for (const [label, path] of [['bare', bareDb], ['towline', towDb]] as const) {
    const c = rowCounts(path)
    ctx.log(`${label}: ${fmt(c.jobs)} jobs, ${fmt(c.events)} events, ${fmt(c.texts)} texts`)
    if (c.events !== c.jobs || c.texts !== c.jobs) ctx.note(`${label}: ${c.jobs} jobs but ${c.events} events and ${c.texts} texts: a create did not write its three rows`)
  }
}

/** One updated_since value of the list benchmark. */
interface ListVariant { label: string; sinceMs: number }

/** Explains the list query for each variant and counts its matches, from the bench process. */
function explainVariants(path: string, accountId: string, variants: ListVariant[]): { plan: string; matches: number }[] {
  const db = new Database(path, { strict: true })
  try {
    return variants.map((v) => ({
      plan: db.query<{ detail: string }, [string, number, number]>(`EXPLAIN QUERY PLAN ${LIST_SQL}`).all(accountId, v.sinceMs, 26).map((r) => r.detail).join('; '),
      matches: db.query<{ c: number }, [string, number]>('SELECT COUNT(*) AS c FROM jobs WHERE account_id = ? AND updated_at >= ?').get(accountId, v.sinceMs)!.c,
    }))
  } finally {
    db.close()
  }
}

/** Loads each list variant on a running server; records p50 (info), p99 (target) and requests/s. */
async function measureList(ctx: BenchContext, server: RunningServer, key: string, variants: ListVariant[], suffix: string, connections: number): Promise<number[]> {
  const headers = { authorization: `Bearer ${key}` }
  const p99s: number[] = []
  for (const v of variants) {
    const path = `/api/v1/jobs?updated_since=${new Date(v.sinceMs).toISOString()}&limit=25`
    const first = JSON.parse(await expectStatus(`${server.baseUrl}${path}`, { headers }, 200)) as { data: unknown[] }
    const r = await loadTest(ctx, { url: `${server.baseUrl}${path}`, paths: [path], headers, pid: server.proc.pid, connections })
    // A request slower than the whole run never finishes in it: say so rather than print 0 ms.
    const none = `none finished in ${ctx.settings.seconds} s`
    const p50 = r.requests ? fmtLatency(r.p50Ms, r.resolutionMs) : none
    const p99 = r.requests ? fmtLatency(r.p99Ms, r.resolutionMs) : none
    ctx.log(`list ${v.label}${suffix}: ${first.data.length} jobs per page, ${fmt(r.rps)} req/s, p50 ${p50}, p99 ${p99}, ${fmt(r.requests)} requests, ${r.failures} failures`)
    const label = `GET /jobs?updated_since=${v.label}${suffix}`
    ctx.record({ metric: `${label} p50`, value: p50, target: '', pass: null })
    ctx.record({ metric: `${label} p99`, value: p99, target: `< ${TARGET_LIST_P99_MS} ms`, pass: r.requests > 0 && r.failures === 0 && r.p99Ms < TARGET_LIST_P99_MS })
    ctx.record({ metric: `${label} requests/s`, value: `${fmt(r.rps, r.rps < 10 ? 1 : 0)} (${fmt(r.requests)} req)`, target: '', pass: null })
    if (r.failures) ctx.record({ metric: `${label} failed requests`, value: fmt(r.failures), target: '0', pass: false })
    noteBackground(ctx, label, r)
    p99s.push(r.requests ? r.p99Ms : ctx.settings.seconds * 1000)
  }
  return p99s
}

/** Part 2: the updated_since list over a million jobs, without and then with ANALYZE. */
async function listOverMillion(ctx: BenchContext): Promise<void> {
  const seed = await seededJobsDb(ctx, LIST_JOBS, LIST_YEARS)
  ctx.record(seed.cached
    ? { metric: `seed ${fmt(seed.jobs)} jobs`, value: 'cached', target: `< ${TARGET_SEED_SECONDS} s`, pass: null }
    : { metric: `seed ${fmt(seed.jobs)} jobs`, value: `${fmt(seed.seedSeconds, 1)} s`, target: `< ${TARGET_SEED_SECONDS} s`, pass: seed.seedSeconds < TARGET_SEED_SECONDS })
  const db = join(ctx.tmp, 'list.db')
  const copyStarted = performance.now()
  copySeeded(seed, db)
  ctx.log(`${seed.cached ? 'cached' : 'seeded'} ${seed.path} (${fmt(fileMb(db))} MB), copied in ${fmt((performance.now() - copyStarted) / 1000, 1)} s`)
  const key = await createBenchKey(ctx, db)

  // Relative to the seed's "now" (its newest update), so a cached file gives the same spread.
  const variants: ListVariant[] = [
    { label: 'last 5 min', sinceMs: seed.anchorMs - 5 * MINUTE },
    { label: 'last hour', sinceMs: seed.anchorMs - 60 * MINUTE },
    { label: '1 year ago', sinceMs: seed.anchorMs - 365 * DAY },
    { label: '2 years ago', sinceMs: seed.anchorMs - LIST_YEARS * 365 * DAY },
  ]
  const connections = listConnections()

  const before = explainVariants(db, seed.accountId, variants)
  let { server } = await startTowline(ctx, db)
  const plain = await measureList(ctx, server, key, variants, '', connections)
  await ctx.children.stop(server.proc)

  const analyzeStarted = performance.now()
  const sqlite = new Database(db, { strict: true })
  sqlite.exec('ANALYZE')
  sqlite.close()
  const analyzeSeconds = (performance.now() - analyzeStarted) / 1000
  const after = explainVariants(db, seed.accountId, variants)
  ;({ server } = await startTowline(ctx, db))
  const analyzed = await measureList(ctx, server, key, variants, ' (ANALYZE)', connections)
  const code = await ctx.children.stop(server.proc)
  if (code !== 0) ctx.record({ metric: 'towline exit code after SIGTERM', value: String(code), target: '0', pass: false })
  ctx.record({ metric: `ANALYZE on ${fmt(seed.jobs)} jobs`, value: `${fmt(analyzeSeconds, 1)} s`, target: '', pass: null })

  ctx.note(`list: ${fmt(seed.jobs)} jobs over ${LIST_YEARS} years, one account; latency on ${connections} connection(s) (BENCH_LIST_CONNECTIONS); updated_since relative to the seed's newest update; the service runs no ANALYZE today, so the rows without "(ANALYZE)" are what it does`)
  variants.forEach((v, i) => {
    const moved = Math.max(plain[i]!, analyzed[i]!) / Math.max(Math.min(plain[i]!, analyzed[i]!), 0.001)
    ctx.note(`list ${v.label}: ${fmt(before[i]!.matches)} jobs match; plan without ANALYZE: ${before[i]!.plan}; after ANALYZE: ${after[i]!.plan}${moved >= 3 ? ` (p99 ${fmt(plain[i]!, 1)} ms vs ${fmt(analyzed[i]!, 1)} ms)` : ''}`)
  })
}

/** Creates and point reads against the baseline, then the list over a million jobs. */
export const jobs: Section = {
  name: 'jobs',
  summary: 'POST /jobs and GET /jobs/{id} against a bare Bun.serve + bun:sqlite; GET /jobs?updated_since over 1,000,000 jobs',
  async run(ctx) {
    await createsAndReads(ctx)
    // BENCH_JOBS_LIST=0 skips the 1,000,000-job list part (its seed takes a minute).
    if (process.env.BENCH_JOBS_LIST !== '0') await listOverMillion(ctx)
  },
}

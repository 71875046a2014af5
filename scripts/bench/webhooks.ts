/**
 * The "webhooks" section: how fast job events reach a real HTTPS receiver, against what the
 * machine can do with bare fetch.
 *
 * The bench makes a CA and a server certificate for 127.0.0.1 with openssl (as
 * test/https-receiver.ts does), starts webhook-receiver.ts in a process of its own (an HTTPS
 * Bun.serve answering 200 at once and noting each arrival), and starts the binary with
 * TOWLINE_WEBHOOK_ALLOW_PRIVATE=1 and NODE_EXTRA_CA_CERTS=<ca.pem>. Every phase gets a fresh
 * database, so no phase inherits another's backlog. Times are wall-clock milliseconds with
 * sub-ms precision (performance.timeOrigin + performance.now()) in the bench and the receiver.
 *
 * 1. Idle queue: 1 endpoint; jobs created one at a time, a few ms apart; for each, the time
 *    from the API's 201 (in the bench) to the arrival of its job.created (in the receiver).
 * 2. Fan-out: 1, 10 and 50 endpoints; POST /jobs at a fixed 100 jobs/s (an open-loop pacer: a
 *    request goes out on schedule whether or not earlier ones have answered) for BENCH_SECONDS;
 *    deliveries/s arriving while the writes ran, the backlog when they stopped, the time it took
 *    to drain, and 201 → arrival p50/p99.
 * 3. Baseline: webhook-client.ts, a bun process of its own, POSTs the body and headers of a
 *    real delivery to the same receiver with bare fetch on 1, 10 and 50 parallel streams (one
 *    request in flight per stream, as towline has one delivery in flight per endpoint).
 *
 * Env: BENCH_SECONDS (write time per fan-out phase, and baseline time), BENCH_WEBHOOKS_ENDPOINTS
 * (part 2's endpoint counts, default 1,10,50), BENCH_WEBHOOKS_PROFILE=<dir> (part 2 runs
 * towline from source under `bun --cpu-prof-md`, one markdown profile per phase in <dir>).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { basename, join, resolve } from 'node:path'
import type { BenchContext, RunningServer, Section } from './lib'
import { cpuSeconds, cpuTimes, fmt, ioBytes, ms, pct, startServer, wallMs } from './lib'
import { createBenchKey, startTowline } from './frame'
import { CREATE_BODY } from './jobs'

const IDLE_JOBS = 200
const IDLE_WARMUP_JOBS = 10
const IDLE_GAP_MS = 5
const WRITE_RATE = 100
const ENDPOINT_COUNTS = [1, 10, 50]
const BASELINE_STREAMS = [1, 10, 50]
const TARGET_IDLE_P50_MS = 50
/** Deliveries/s while the writes run must reach this share of write rate × endpoints. */
const TARGET_RATE_SHARE = 0.9
const TARGET_DRAIN_MS = 2_000
/** Give up waiting for a backlog to drain after this long (the figure then says so). */
const DRAIN_TIMEOUT_MS = 120_000
/** A pacer that fires this late is itself a bottleneck: say so. */
const PACER_LAG_NOTE_MS = 20

/** Endpoint counts of part 2, BENCH_WEBHOOKS_ENDPOINTS (comma list, default 1,10,50). */
function endpointCounts(): number[] {
  const raw = process.env.BENCH_WEBHOOKS_ENDPOINTS
  if (raw === undefined || raw.trim() === '') return ENDPOINT_COUNTS
  const counts = raw.split(',').map((v) => Number(v.trim()))
  if (counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`BENCH_WEBHOOKS_ENDPOINTS: "${raw}" is not a comma list of whole numbers ≥ 1`)
  return counts
}

/**
 * BENCH_WEBHOOKS_PROFILE=<dir>: part 2 runs towline from source under the profiler
 * (`bun --cpu-prof-md --cpu-prof-dir=<dir> src/main.ts serve`), one markdown profile per phase.
 */
function profileCommand(): string[] | undefined {
  const dir = process.env.BENCH_WEBHOOKS_PROFILE
  if (!dir) return undefined
  mkdirSync(dir, { recursive: true })
  return [process.execPath, '--cpu-prof-md', `--cpu-prof-dir=${resolve(dir)}`, 'src/main.ts']
}


// ---------------------------------------------------------------------------------------------
// Certificate and receiver

export interface Certs { caPath: string; certPath: string; keyPath: string }

/** Makes a throwaway CA and a server certificate for 127.0.0.1 and localhost (as test/https-receiver.ts). */
export function makeCerts(dir: string): Certs {
  mkdirSync(dir, { recursive: true })
  const run = (args: string[]) => {
    const r = Bun.spawnSync(['openssl', ...args], { cwd: dir, stdout: 'ignore', stderr: 'pipe' })
    if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`)
  }
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Towline Bench CA'])
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1'])
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n')
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf'])
  return { caPath: join(dir, 'ca.pem'), certPath: join(dir, 'server.pem'), keyPath: join(dir, 'server.key') }
}

interface Arrivals { t: number[]; ep: number[]; job: (string | null)[]; type: (string | null)[]; attempt: (number | null)[] }

/** The receiver process: its HTTPS base URL for endpoints and its control channel. */
export class Receiver {
  constructor(readonly server: RunningServer, readonly httpsUrl: string) {}

  static async start(ctx: BenchContext, certs: Certs): Promise<Receiver> {
    const server = await startServer(ctx.children, [process.execPath, join(import.meta.dir, 'webhook-receiver.ts')], {
      cwd: ctx.root, env: { ...process.env, CERT_PATH: certs.certPath, KEY_PATH: certs.keyPath },
    })
    const m = /https=(\d+)/.exec(server.stderr())
    if (!m) throw new Error(`the receiver did not say its https port: ${server.stderr()}`)
    return new Receiver(server, `https://127.0.0.1:${m[1]}`)
  }

  private async get<T>(path: string, method = 'GET'): Promise<T> {
    const res = await fetch(`${this.server.baseUrl}${path}`, { method })
    if (!res.ok) throw new Error(`receiver ${method} ${path} answered ${res.status}: ${await res.text()}`)
    return (await res.json()) as T
  }

  count = async () => (await this.get<{ count: number }>('/count')).count
  arrivals = () => this.get<Arrivals>('/arrivals')
  sample = () => this.get<{ body: string; headers: Record<string, string> }>('/sample')
  reset = async () => { await this.get('/reset', 'POST') }

  /** Polls until `n` requests have arrived or `timeoutMs` passed; returns the count it saw last. */
  async waitForCount(n: number, timeoutMs: number, progress?: (count: number) => void): Promise<number> {
    const deadline = wallMs() + timeoutMs
    let lastLog = wallMs()
    for (;;) {
      const c = await this.count()
      if (c >= n || wallMs() > deadline) return c
      if (progress && wallMs() - lastLog > 5_000) { progress(c); lastLog = wallMs() }
      await Bun.sleep(10)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Towline

interface Towline { server: RunningServer; key: string; db: string }

/** Stops towline (a row if it does not exit 0) and deletes its database (the 50-endpoint one runs to hundreds of MB). */
async function stopTowline(ctx: BenchContext, t: Towline): Promise<void> {
  const code = await ctx.children.stop(t.server.proc)
  if (code !== 0) ctx.record({ metric: `towline exit code after SIGTERM (${basename(t.db)})`, value: String(code), target: '0', pass: false })
  for (const suffix of ['', '-wal', '-shm']) rmSync(t.db + suffix, { force: true })
}

/** A fresh database, a key with every scope, the binary serving it, and `endpoints` endpoints on the receiver. */
async function freshTowline(ctx: BenchContext, name: string, certs: Certs, receiver: Receiver, endpoints: number, command?: string[]): Promise<Towline> {
  const db = join(ctx.tmp, `${name}.db`)
  const key = await createBenchKey(ctx, db)
  const { server } = await startTowline(ctx, db, { env: { TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', NODE_EXTRA_CA_CERTS: certs.caPath }, command })
  for (let i = 0; i < endpoints; i++) {
    const res = await fetch(`${server.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.httpsUrl}/e/${i}`, events: ['*'], description: `bench ${i}` }),
    })
    const text = await res.text()
    if (res.status !== 201) throw new Error(`POST /api/v1/webhooks answered ${res.status}: ${text.slice(0, 300)}`)
  }
  return { server, key, db }
}

interface Created { status: number; id: string | null; sentAt: number; answeredAt: number }

/** POSTs one job; `answeredAt` is when the response headers (the 201) came in. */
async function createJob(t: Towline, ref: string): Promise<Created> {
  const sentAt = wallMs()
  const res = await fetch(`${t.server.baseUrl}/api/v1/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: CREATE_BODY.replace('{seq}', ref),
  })
  const answeredAt = wallMs()
  const text = await res.text()
  let id: string | null = null
  if (res.status === 201) id = (JSON.parse(text) as { id: string }).id
  return { status: res.status, id, sentAt, answeredAt }
}

/** 201 → arrival of each arrival matched to a created job, ascending; and the arrivals with no job of ours. */
function matchLatencies(created: Created[], a: Arrivals): { latencies: number[]; unmatched: number; retries: number } {
  const at = new Map<string, number>()
  for (const c of created) if (c.id) at.set(c.id, c.answeredAt)
  const latencies: number[] = []
  let unmatched = 0
  let retries = 0
  for (let i = 0; i < a.t.length; i++) {
    if ((a.attempt[i] ?? 1) > 1) retries++
    const answered = a.type[i] === 'job.created' && a.job[i] ? at.get(a.job[i]!) : undefined
    if (answered === undefined) unmatched++
    else latencies.push(a.t[i]! - answered)
  }
  latencies.sort((x, y) => x - y)
  return { latencies, unmatched, retries }
}

/** CPU seconds of a process, or NaN off Linux. */
const cpu = (pid: number) => cpuSeconds(pid) ?? Number.NaN
const cores = (cpuSec: number, wallMsSpan: number) => (Number.isNaN(cpuSec) ? 'n/a' : `${fmt((cpuSec / (wallMsSpan / 1000)) * 100)}% of a core`)

/** CPU (user and system apart) and bytes written of towline, and CPU of the receiver, at one moment. */
interface Snapshot { at: number; tow: { user: number; system: number } | null; io: { written: number; toDisk: number } | null; rec: number }
const snapshot = (towPid: number, recPid: number): Snapshot => ({ at: wallMs(), tow: cpuTimes(towPid), io: ioBytes(towPid), rec: cpu(recPid) })

/** Towline's CPU between two snapshots: "93% of a core (user 40%, system 53%)". */
function towlineCpu(a: Snapshot, b: Snapshot): string {
  if (!a.tow || !b.tow) return 'n/a'
  const span = (b.at - a.at) / 1000
  const share = (x: number) => fmt((x / span) * 100)
  return `${share(b.tow.user + b.tow.system - a.tow.user - a.tow.system)}% of a core (user ${share(b.tow.user - a.tow.user)}%, system ${share(b.tow.system - a.tow.system)}%)`
}

/** Towline's writes between two snapshots: "12.3 MB/s to write(), 4.5 MB/s to disk". */
function towlineWrites(a: Snapshot, b: Snapshot): string {
  if (!a.io || !b.io) return 'n/a'
  const span = (b.at - a.at) / 1000
  const rate = (x: number) => `${fmt(x / 1e6 / span, 1)} MB/s`
  return `${rate(b.io.written - a.io.written)} to write(), ${rate(b.io.toDisk - a.io.toDisk)} to disk`
}

// ---------------------------------------------------------------------------------------------
// Part 1: idle queue

async function idleLatency(ctx: BenchContext, certs: Certs, receiver: Receiver): Promise<void> {
  const t = await freshTowline(ctx, 'idle', certs, receiver, 1)
  // Warm-up: the first deliveries open the TLS connection.
  for (let i = 0; i < IDLE_WARMUP_JOBS; i++) { await createJob(t, `idle-warm-${i}`); await Bun.sleep(IDLE_GAP_MS) }
  await receiver.waitForCount(IDLE_WARMUP_JOBS, 10_000)
  await Bun.sleep(100)
  await receiver.reset()

  const created: Created[] = []
  for (let i = 0; i < IDLE_JOBS; i++) {
    created.push(await createJob(t, `idle-${i}`))
    await Bun.sleep(IDLE_GAP_MS)
  }
  const ok = created.filter((c) => c.status === 201).length
  const seen = await receiver.waitForCount(ok, 30_000)
  const { latencies, unmatched, retries } = matchLatencies(created, await receiver.arrivals())
  const api = created.map((c) => c.answeredAt - c.sentAt).sort((x, y) => x - y)
  const p50 = pct(latencies, 50)
  const p99 = pct(latencies, 99)
  ctx.log(`idle: ${ok}/${IDLE_JOBS} created (${IDLE_GAP_MS} ms apart), ${seen} arrived; 201 → arrival p50 ${ms(p50)}, p99 ${ms(p99)}, max ${ms(latencies.at(-1) ?? Number.NaN)}; POST p50 ${ms(pct(api, 50))}`)
  ctx.record({ metric: `idle, 1 endpoint: 201 → arrival p50 (${latencies.length} jobs)`, value: ms(p50), target: `< ${TARGET_IDLE_P50_MS} ms`, pass: latencies.length > 0 && p50 < TARGET_IDLE_P50_MS })
  ctx.record({ metric: 'idle, 1 endpoint: 201 → arrival p99', value: ms(p99), target: '', pass: null })
  ctx.record({ metric: 'idle, 1 endpoint: POST /jobs latency p50 / p99', value: `${ms(pct(api, 50))} / ${ms(pct(api, 99))}`, target: '', pass: null })
  if (ok !== IDLE_JOBS) ctx.record({ metric: 'idle: POST /jobs not 201', value: fmt(IDLE_JOBS - ok), target: '0', pass: false })
  if (latencies.length !== ok) ctx.record({ metric: 'idle: job.created never arrived (30 s)', value: fmt(ok - latencies.length), target: '0', pass: false })
  if (unmatched || retries) ctx.note(`idle: ${unmatched} arrival(s) matched no job of this run, ${retries} were retries`)
  await stopTowline(ctx, t)
}

// ---------------------------------------------------------------------------------------------
// Part 2: fan-out at a fixed write rate

/** Creates jobs at `rate`/s for `seconds` on a fixed schedule, never waiting for answers before the next. */
async function paceCreates(t: Towline, rate: number, seconds: number, tag: string): Promise<{ created: Created[]; maxLagMs: number }> {
  const total = Math.round(rate * seconds)
  const gap = 1000 / rate
  const start = wallMs() + 20
  const pending: Promise<Created>[] = []
  let maxLagMs = 0
  for (let i = 0; i < total; i++) {
    const due = start + i * gap
    const wait = due - wallMs()
    if (wait > 0) await Bun.sleep(wait)
    maxLagMs = Math.max(maxLagMs, wallMs() - due)
    pending.push(createJob(t, `${tag}-${i}`).catch((): Created => ({ status: 0, id: null, sentAt: due, answeredAt: wallMs() })))
  }
  return { created: await Promise.all(pending), maxLagMs }
}

interface FanOutResult { endpoints: number; arrivalRate: number; needed: number; drained: boolean }

/** Bytes one job write costs on its own (no endpoints), to write() and to disk. */
interface JobWriteCost { written: number; toDisk: number }

/**
 * The same paced writes with no endpoint: what each job's own commit writes (its row, indexes,
 * timeline, WAL checkpoints). Fan-out figures subtract it to show what a delivery adds.
 */
async function jobWriteCost(ctx: BenchContext, certs: Certs, receiver: Receiver): Promise<JobWriteCost | undefined> {
  const t = await freshTowline(ctx, 'jobs-only', certs, receiver, 0)
  await createJob(t, 'jobs-only-warm')
  const pid = t.server.proc.pid
  const before = ioBytes(pid)
  const { created } = await paceCreates(t, WRITE_RATE, ctx.settings.seconds, 'jobs-only')
  await Bun.sleep(200)
  const after = ioBytes(pid)
  await stopTowline(ctx, t)
  const ok = created.filter((c) => c.status === 201).length
  if (!before || !after || ok === 0) return undefined
  const cost = { written: (after.written - before.written) / ok, toDisk: (after.toDisk - before.toDisk) / ok }
  ctx.log(`no endpoints: ${ok} jobs at ${WRITE_RATE}/s; each job's own write ${fmt(cost.written / 1000, 1)} KB to write(), ${fmt(cost.toDisk / 1000, 1)} KB to disk`)
  ctx.record({ metric: `no endpoints: one job's own write (to write() / to disk)`, value: `${fmt(cost.written / 1000, 1)} KB / ${fmt(cost.toDisk / 1000, 1)} KB`, target: '', pass: null })
  return cost
}

async function fanOut(ctx: BenchContext, certs: Certs, receiver: Receiver, endpoints: number, jobCost?: JobWriteCost): Promise<FanOutResult> {
  const label = `${endpoints} endpoint${endpoints === 1 ? '' : 's'}`
  const profiling = profileCommand()
  const t = await freshTowline(ctx, `fanout-${endpoints}`, certs, receiver, endpoints, profiling)
  if (profiling) ctx.note(`${label}: towline ran from source under the profiler (${profiling.join(' ')}): its figures are not the binary's`)
  // Warm-up: one job, so connections to the receiver are open before the clock starts.
  await createJob(t, `fan-${endpoints}-warm`)
  await receiver.waitForCount(endpoints, 10_000)
  await Bun.sleep(200)
  await receiver.reset()

  const seconds = ctx.settings.seconds
  const towPid = t.server.proc.pid
  const recPid = receiver.server.proc.pid
  const cpu0 = snapshot(towPid, recPid)
  ctx.log(`${label}: ${WRITE_RATE} POST /jobs per second for ${seconds} s (towline pid ${towPid})`)
  const { created, maxLagMs } = await paceCreates(t, WRITE_RATE, seconds, `fan-${endpoints}`)
  const cpu1 = snapshot(towPid, recPid)
  const ok = created.filter((c) => c.status === 201)
  const firstSent = Math.min(...created.map((c) => c.sentAt))
  const lastWrite = Math.max(...ok.map((c) => c.answeredAt))
  const expected = ok.length * endpoints
  const atWriteEnd = await receiver.count()
  ctx.log(`${label}: ${ok.length} created; ${fmt(atWriteEnd)} of ${fmt(expected)} deliveries arrived when the writes stopped; waiting for the rest`)
  const seen = await receiver.waitForCount(expected, DRAIN_TIMEOUT_MS, (c) => ctx.log(`${label}: ${fmt(c)} of ${fmt(expected)} arrived`))
  const cpu2 = snapshot(towPid, recPid)
  const a = await receiver.arrivals()
  await stopTowline(ctx, t)

  const writeSpanMs = lastWrite - firstSent
  const writeRate = ok.length / (writeSpanMs / 1000)
  const duringWrites = a.t.filter((x) => x <= lastWrite).length
  const arrivalRate = duringWrites / (writeSpanMs / 1000)
  const needed = writeRate * endpoints
  const backlog = expected - duringWrites
  const drained = seen >= expected
  const lastArrival = a.t.length ? Math.max(...a.t) : lastWrite
  const drainMs = Math.max(0, lastArrival - lastWrite)
  const overallRate = a.t.length / ((lastArrival - firstSent) / 1000)
  const { latencies, unmatched, retries } = matchLatencies(created, a)
  const api = ok.map((c) => c.answeredAt - c.sentAt).sort((x, y) => x - y)
  const drainText = drained ? `${fmt(drainMs / 1000, 2)} s` : `not in ${fmt(DRAIN_TIMEOUT_MS / 1000)} s (${fmt(expected - seen)} left)`

  ctx.log(`${label}: ${fmt(writeRate, 1)} writes/s, ${fmt(arrivalRate)} deliveries/s while writing (need ${fmt(needed)}), backlog ${fmt(backlog)}, drained ${drainText}, ` +
    `201 → arrival p50 ${ms(pct(latencies, 50))} p99 ${ms(pct(latencies, 99))}, towline CPU ${towlineCpu(cpu0, cpu1)} writing` +
    (cpu2.at - cpu1.at > 500 ? `, ${towlineCpu(cpu1, cpu2)} draining` : ''))
  ctx.record({ metric: `${label}: writes/s achieved (POST /jobs p50 / p99)`, value: `${fmt(writeRate, 1)} (${ms(pct(api, 50))} / ${ms(pct(api, 99))})`, target: '', pass: null })
  ctx.record({ metric: `${label}: deliveries/s arriving while writing`, value: fmt(arrivalRate), target: `≈ ${fmt(needed)} (≥ ${fmt(needed * TARGET_RATE_SHARE)})`, pass: arrivalRate >= needed * TARGET_RATE_SHARE })
  ctx.record({ metric: `${label}: backlog when the writes stopped`, value: `${fmt(backlog)} of ${fmt(expected)}`, target: '', pass: null })
  ctx.record({ metric: `${label}: drain after the writes stopped`, value: drainText, target: `< ${fmt(TARGET_DRAIN_MS / 1000)} s`, pass: drained && drainMs < TARGET_DRAIN_MS })
  if (!drained || drainMs >= TARGET_DRAIN_MS) {
    ctx.record({ metric: `${label}: deliveries/s over the whole run incl. drain`, value: fmt(overallRate), target: '', pass: null })
  }
  ctx.record({ metric: `${label}: 201 → arrival p50 / p99`, value: `${ms(pct(latencies, 50))} / ${ms(pct(latencies, 99))}`, target: '', pass: null })
  ctx.record({ metric: `${label}: towline CPU while writing`, value: towlineCpu(cpu0, cpu1), target: '', pass: null })
  ctx.record({ metric: `${label}: towline writes while writing`, value: towlineWrites(cpu0, cpu1), target: '', pass: null })
  ctx.record({ metric: `${label}: receiver CPU while writing`, value: cores(cpu1.rec - cpu0.rec, cpu1.at - cpu0.at), target: '', pass: null })
  if (cpu2.at - cpu1.at > 500) {
    ctx.record({ metric: `${label}: towline CPU while draining`, value: towlineCpu(cpu1, cpu2), target: '', pass: null })
  }
  if (cpu0.io && cpu2.io && a.t.length) {
    const per = (total: number, jobs: number) => fmt(Math.max(0, total - jobs) / a.t.length / 1000, 1)
    const written = cpu2.io.written - cpu0.io.written
    const toDisk = cpu2.io.toDisk - cpu0.io.toDisk
    ctx.record({ metric: `${label}: towline writes per delivery, its job's share included (to write() / to disk)`, value: `${per(written, 0)} KB / ${per(toDisk, 0)} KB`, target: '', pass: null })
    if (jobCost) {
      ctx.record({
        metric: `${label}: writes per delivery beyond its job's own write (to write() / to disk)`,
        value: `${per(written, ok.length * jobCost.written)} KB / ${per(toDisk, ok.length * jobCost.toDisk)} KB`,
        target: '', pass: null,
      })
    }
  }
  if (cpu0.tow && cpu2.tow && a.t.length) {
    const perJob = (cpu2.tow.user + cpu2.tow.system - cpu0.tow.user - cpu0.tow.system) / a.t.length
    ctx.record({ metric: `${label}: towline CPU per delivery (its job's share included)`, value: `${fmt(perJob * 1e6)} µs`, target: '', pass: null })
  }
  if (ok.length !== created.length) ctx.record({ metric: `${label}: POST /jobs not 201`, value: fmt(created.length - ok.length), target: '0', pass: false })
  if (maxLagMs > PACER_LAG_NOTE_MS) ctx.note(`${label}: the pacer fired up to ${fmt(maxLagMs)} ms late (the bench process was busy): the write rate was uneven`)
  if (unmatched || retries) ctx.note(`${label}: ${unmatched} arrival(s) matched no job of this run, ${retries} were retries`)
  return { endpoints, arrivalRate, needed, drained: drained && drainMs < TARGET_DRAIN_MS }
}

// ---------------------------------------------------------------------------------------------
// Part 3: bare fetch baseline

async function baseline(ctx: BenchContext, receiver: Receiver, certs: Certs): Promise<void> {
  const sample = await receiver.sample()
  const drop = new Set(['host', 'content-length', 'connection', 'accept', 'accept-encoding'])
  const headers = Object.fromEntries(Object.entries(sample.headers).filter(([k]) => !drop.has(k)))
  const bodyFile = join(ctx.tmp, 'delivery-body.json')
  const headersFile = join(ctx.tmp, 'delivery-headers.json')
  writeFileSync(bodyFile, sample.body)
  writeFileSync(headersFile, JSON.stringify(headers))
  const bytes = Buffer.byteLength(sample.body)
  ctx.record({ metric: 'delivery body size (job.created)', value: `${fmt(bytes)} bytes`, target: '', pass: null })

  for (const streams of BASELINE_STREAMS) {
    await receiver.reset()
    const recPid = receiver.server.proc.pid
    const proc = ctx.children.spawn([process.execPath, join(import.meta.dir, 'webhook-client.ts')], {
      cwd: ctx.root,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certs.caPath, TARGET: receiver.httpsUrl, BODY_FILE: bodyFile, HEADERS_FILE: headersFile,
        STREAMS: String(streams), SECONDS: String(ctx.settings.seconds), WARMUP_SECONDS: String(Math.max(1, ctx.settings.warmupSeconds)) },
    })
    // CPU of the receiver over the measured part only (after the client's warm-up).
    const warm = Math.max(1, ctx.settings.warmupSeconds) * 1000
    const recCpu = (async () => {
      await Bun.sleep(warm + 300)
      const c0 = cpu(recPid); const t0 = wallMs()
      await Bun.sleep(ctx.settings.seconds * 1000 - 600)
      return cores(cpu(recPid) - c0, wallMs() - t0)
    })()
    const [out, err, code] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr).text(), proc.exited])
    if (code !== 0) throw new Error(`webhook-client.ts exited ${code}: ${err.trim()}`)
    const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
    if (!line) throw new Error(`webhook-client.ts printed no BENCH_JSON line: ${out}`)
    const r = JSON.parse(line.slice('BENCH_JSON '.length)) as { requests: number; rps: number; p50Ms: number; p99Ms: number; failures: number; cpuSeconds: number }
    const label = `bare fetch, ${streams} stream${streams === 1 ? '' : 's'}`
    const rec = await recCpu
    ctx.log(`${label}: ${fmt(r.rps)} req/s, p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}, ${fmt(r.requests)} requests, ${r.failures} failures, receiver CPU ${rec}`)
    ctx.record({ metric: `${label}: requests/s`, value: fmt(r.rps), target: '', pass: null })
    ctx.record({ metric: `${label}: latency p50 / p99`, value: `${ms(r.p50Ms)} / ${ms(r.p99Ms)}`, target: '', pass: null })
    ctx.record({ metric: `${label}: client CPU per request / receiver CPU`, value: `${r.requests ? fmt((r.cpuSeconds / r.requests) * 1e6) : 'n/a'} µs / ${rec}`, target: '', pass: null })
    if (r.failures) ctx.record({ metric: `${label}: failed requests`, value: fmt(r.failures), target: '0', pass: false })
  }
}

/** Idle latency, fan-out at 100 writes/s to 1, 10 and 50 endpoints, and the bare fetch baseline. */
export const webhooks: Section = {
  name: 'webhooks',
  summary: 'job.created 201 → arrival at an HTTPS receiver (idle), fan-out to 1/10/50 endpoints at 100 jobs/s, bare fetch baseline',
  async run(ctx) {
    const certs = makeCerts(join(ctx.tmp, 'tls'))
    const receiver = await Receiver.start(ctx, certs)
    await idleLatency(ctx, certs, receiver)
    const jobCost = await jobWriteCost(ctx, certs, receiver)
    const results: FanOutResult[] = []
    for (const n of endpointCounts()) results.push(await fanOut(ctx, certs, receiver, n, jobCost))
    await baseline(ctx, receiver, certs)
    const widest = results.reduce<FanOutResult | undefined>((w, r) => (!w || r.endpoints > w.endpoints ? r : w), undefined)
    if (widest) {
      const keepsUp = widest.arrivalRate >= widest.needed * TARGET_RATE_SHARE && widest.drained
      ctx.record({ metric: `fan-out to ${widest.endpoints} endpoints keeps up with ${WRITE_RATE} writes/s`, value: keepsUp ? 'yes' : 'no', target: 'yes', pass: keepsUp })
    }
    ctx.note(`receiver, towline, the bench and the fetch baseline are separate processes sharing this machine's ${availableParallelism()} core(s); 201 → arrival compares wall clocks of two processes (sub-ms)`)
  },
}

/**
 * The "frame" section: how fast the bare service is before any feature work. Start-up time to a
 * healthy /healthz, GET /api/v1/me throughput against a bare Bun.serve answering the same number
 * of bytes, and resident memory after the load.
 */
import { join } from 'node:path'
import type { BenchContext, LoadResult, RunningServer, Section } from './lib'
import { fmt, fmtLatency, median, pairedLoad, peakRssMb, rssMb, runCommand, startServer, waitFor200, type PairedSide } from './lib'

const TARGET_STARTUP_MS = 300
const TARGET_RATIO = 0.7
const TARGET_RSS_MB = 150
/**
 * Below this share of one core, a single-threaded server under full load was not the bottleneck.
 * Saturated servers read 88–101% here from run to run, so the bar sits below that noise.
 */
const SATURATED_CORES = 0.8

/**
 * Environment for towline in the bench: as operators run it (default settings and log level:
 * no TOWLINE_* or LOG_LEVEL from the caller, so every request writes its access-log line), with
 * the per-key rate limits lifted so that the load is measured, not refused.
 */
export function towlineEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOWLINE_') && k !== 'LOG_LEVEL') env[k] = v
  return { ...env, TOWLINE_RATE_LIMIT_READS: '100000000', TOWLINE_RATE_LIMIT_WRITES: '100000000' }
}

/** Creates an API key with every scope in `db` and returns it. */
export async function createBenchKey(ctx: BenchContext, db: string): Promise<string> {
  // Only serve, migrate and demo create a database: make it first, as an operator would.
  await runCommand(ctx.children, [ctx.binary, 'migrate', '--db', db], { cwd: ctx.root, env: towlineEnv() })
  const out = await runCommand(ctx.children, [ctx.binary, 'keys', 'create', '--name', 'bench', '--scopes', 'all', '--db', db], { cwd: ctx.root, env: towlineEnv() })
  const key = out.trim()
  if (!/^\S+$/.test(key)) throw new Error(`keys create printed something other than a key: ${JSON.stringify(out)}`)
  return key
}

/**
 * Starts `towline serve` on a free port and returns once /healthz answers 200, with the time that
 * took. `opts.env` is added to towlineEnv() (e.g. TOWLINE_WEBHOOK_ALLOW_PRIVATE for the webhooks
 * section); `opts.command` replaces the binary (e.g. `bun --cpu-prof-md src/main.ts` to profile).
 */
let towlineStarts = 0

export async function startTowline(ctx: BenchContext, db: string, opts: { env?: Record<string, string>; command?: string[]; logFile?: string } = {}): Promise<{ server: RunningServer; startupMs: number }> {
  const started = performance.now()
  const command = opts.command ?? [ctx.binary]
  // Its log goes to a file, as an operator's does (`towline serve >> towline.log`): a pipe the
  // bench drained would put the bench's own reading on towline's figures.
  const stdoutFile = `${opts.logFile ?? db}.${++towlineStarts}.log`
  const server = await startServer(ctx.children, [...command, 'serve', '--port', '0', '--host', '127.0.0.1', '--db', db], { cwd: ctx.root, env: { ...towlineEnv(), ...opts.env }, stdoutFile })
  await waitFor200(`${server.baseUrl}/healthz`)
  return { server, startupMs: performance.now() - started }
}

/** Measures start-up over several fresh starts; returns the last server, still running. */
async function measureStartup(ctx: BenchContext, db: string): Promise<RunningServer> {
  const times: number[] = []
  let server: RunningServer | undefined
  for (let i = 1; i <= ctx.settings.starts; i++) {
    if (server) await ctx.children.stop(server.proc)
    const started = await startTowline(ctx, db)
    server = started.server
    times.push(started.startupMs)
    ctx.log(`start ${i}/${ctx.settings.starts}: listening after ${fmt(server.listeningMs)} ms, /healthz 200 after ${fmt(started.startupMs)} ms`)
  }
  const med = median(times)
  const max = Math.max(...times)
  ctx.record({ metric: `start-up to /healthz 200, median of ${times.length}`, value: `${fmt(med)} ms`, target: `< ${TARGET_STARTUP_MS} ms`, pass: med < TARGET_STARTUP_MS })
  ctx.record({ metric: `start-up to /healthz 200, max of ${times.length}`, value: `${fmt(max)} ms`, target: `< ${TARGET_STARTUP_MS} ms`, pass: max < TARGET_STARTUP_MS })
  return server!
}

/** Fetches GET /api/v1/me once and returns the exact size of its body in bytes. */
async function meBodyBytes(baseUrl: string, key: string): Promise<number> {
  const res = await fetch(`${baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
  const body = new Uint8Array(await res.arrayBuffer())
  if (res.status !== 200) throw new Error(`GET /api/v1/me answered ${res.status}: ${new TextDecoder().decode(body)}`)
  return body.byteLength
}

/** The run whose requests/s is the median of a side's rounds (its latencies go with it). */
export function medianRun(side: PairedSide): LoadResult {
  return [...side.runs].sort((x, y) => x.rps - y.rps)[Math.floor((side.runs.length - 1) / 2)]!
}

/** Records the rounds of a paired comparison: each round's ratio, and the servers' CPU per request. */
export function recordPaired(ctx: BenchContext, label: string, p: Awaited<ReturnType<typeof pairedLoad>>): void {
  ctx.record({ metric: `${label}: towline/bare ratio of each round (median is the ratio)`, value: p.ratios.map((r) => fmt(r, 2)).join(', '), target: '', pass: null })
  if (p.a.cpuUsPerRequest !== null && p.b.cpuUsPerRequest !== null) {
    ctx.record({ metric: `${label}: server CPU per request, bare / towline`, value: `${fmt(p.a.cpuUsPerRequest, 1)} µs / ${fmt(p.b.cpuUsPerRequest, 1)} µs (ratio ${fmt(p.cpuRatio!, 2)})`, target: '', pass: null })
  }
}

/** Records rps and latencies of one load run. */
export function recordLoad(ctx: BenchContext, label: string, r: LoadResult): void {
  const cpu = r.serverCores === null ? '' : `, server CPU ${fmt(r.serverCores * 100)}%`
  const p50 = fmtLatency(r.p50Ms, r.resolutionMs)
  const p99 = fmtLatency(r.p99Ms, r.resolutionMs)
  ctx.log(`${label}: ${fmt(r.rps)} req/s, p50 ${p50}, p99 ${p99}, ${fmt(r.requests)} requests, ${r.failures} failures${cpu}`)
  ctx.record({ metric: `${label} requests/s`, value: fmt(r.rps), target: '', pass: null })
  ctx.record({ metric: `${label} latency p50`, value: p50, target: '', pass: null })
  ctx.record({ metric: `${label} latency p99`, value: p99, target: '', pass: null })
  if (r.serverCores !== null) ctx.record({ metric: `${label} server CPU during load`, value: `${fmt(r.serverCores * 100)}% of a core`, target: '', pass: null })
  if (r.failures) ctx.record({ metric: `${label} failed requests`, value: fmt(r.failures), target: '0', pass: false })
  noteBackground(ctx, label, r)
}

/** Above this many busy cores on an idle bench, other work shares the machine (figures skewed). */
const BACKGROUND_CORES = 0.25

/** Notes other work on the machine just before a run (its figures are then low and noisy). */
export function noteBackground(ctx: BenchContext, label: string, r: LoadResult): void {
  if (r.backgroundCores !== null && r.backgroundCores > BACKGROUND_CORES) {
    ctx.note(`${label}: other processes kept ${fmt(r.backgroundCores * 100)}% of a core busy just before the run: its figures are likely low and noisy (rerun on a quiet machine)`)
  }
}

/** Measures start-up, /me throughput against the baseline, and memory after the load. */
export const frame: Section = {
  name: 'frame',
  summary: 'start-up time, GET /api/v1/me throughput against a bare Bun.serve, memory after load',
  async run(ctx) {
    const db = join(ctx.tmp, 'bench.db')
    const key = await createBenchKey(ctx, db) // creates and migrates the database first
    const towline = await measureStartup(ctx, db)

    const bytes = await meBodyBytes(towline.baseUrl, key)
    ctx.log(`GET /api/v1/me body: ${bytes} bytes`)
    ctx.record({ metric: 'GET /api/v1/me body size', value: `${bytes} bytes`, target: '', pass: null })

    // The baseline in its own process; the two are loaded in turn, never both at once.
    const bare = await startServer(ctx.children, [process.execPath, join(import.meta.dir, 'bare-server.ts')], { cwd: ctx.root, env: { ...process.env, BODY_BYTES: String(bytes) } })
    const rssBefore = rssMb(towline.proc.pid)
    const paired = await pairedLoad(ctx, { url: `${bare.baseUrl}/`, pid: bare.proc.pid }, { url: `${towline.baseUrl}/api/v1/me`, headers: { authorization: `Bearer ${key}` }, pid: towline.proc.pid })
    await ctx.children.stop(bare.proc)
    const bareResult = medianRun(paired.a)
    const meResult = medianRun(paired.b)
    recordLoad(ctx, 'bare Bun.serve', bareResult)
    recordLoad(ctx, 'towline /me', meResult)
    recordPaired(ctx, 'towline /me', paired)

    const ratio = paired.ratio
    // Bun.serve answers on one thread; well under a full core means the load generator, not the
    // baseline, was the limit, so the bare figure is low and the ratio flatters towline.
    if (bareResult.serverCores !== null && bareResult.serverCores < SATURATED_CORES) {
      ctx.note(`the bare server used only ${fmt(bareResult.serverCores * 100)}% of a core, so ${bareResult.tool} (or other load on the machine) held it back: the bare figure is low and the ratio optimistic` +
        (bareResult.tool === 'autocannon' ? ' (install wrk: apt-get install -y wrk)' : ''))
    }
    if (meResult.serverCores !== null && meResult.serverCores < SATURATED_CORES) {
      ctx.note(`towline used only ${fmt(meResult.serverCores * 100)}% of a core under load: it waited on something other than CPU (disk?), or the load generator or other load on the machine was the limit`)
    }
    ctx.record({ metric: 'towline/bare requests/s ratio', value: fmt(ratio, 2), target: `≥ ${TARGET_RATIO}`, pass: ratio >= TARGET_RATIO })

    const rss = rssMb(towline.proc.pid)
    const peak = peakRssMb(towline.proc.pid)
    if (rssBefore !== null) ctx.record({ metric: 'towline RSS before load', value: `${fmt(rssBefore, 1)} MB`, target: '', pass: null })
    ctx.record({ metric: 'towline RSS after load', value: rss === null ? 'n/a (no /proc)' : `${fmt(rss, 1)} MB`, target: `< ${TARGET_RSS_MB} MB`, pass: rss === null ? null : rss < TARGET_RSS_MB })
    if (peak !== null) ctx.record({ metric: 'towline peak RSS (VmHWM)', value: `${fmt(peak, 1)} MB`, target: '', pass: null })

    const code = await ctx.children.stop(towline.proc)
    if (code !== 0) ctx.record({ metric: 'towline exit code after SIGTERM', value: String(code), target: '0', pass: false })
  },
}

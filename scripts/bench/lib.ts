/**
 * Shared pieces of scripts/bench.ts: the section and report types, child-process bookkeeping,
 * starting servers, load generation (wrk when installed, autocannon otherwise) and /proc readings.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import autocannon, { type AutocannonRequest } from 'autocannon'

// ---------------------------------------------------------------------------------------------
// Sections and the report

/** One figure of the final table: a value beside its target. `pass` is null for information only. */
export interface Row {
  section: string
  metric: string
  value: string
  target: string
  pass: boolean | null
}

/** What a section gets to work with. */
export interface BenchContext {
  /** The repository root; every command runs there. */
  root: string
  /** Absolute path of the compiled towline binary. */
  binary: string
  /** A temp folder for this run, removed at the end. */
  tmp: string
  /** Settings from the environment (BENCH_*). */
  settings: Settings
  children: Children
  /** Adds a row to the final table (the section name is filled in). */
  record: (row: Omit<Row, 'section'>) => void
  /** Prints progress to stderr, prefixed with the section name. */
  log: (message: string) => void
  /** Adds a remark printed under the final table (caveats, surprises). */
  note: (message: string) => void
}

/** A named part of the benchmark, selectable with --only. */
export interface Section {
  name: string
  summary: string
  run: (ctx: BenchContext) => Promise<void>
}

/** Knobs read from the environment once. */
export interface Settings {
  /** Measured load duration per target, BENCH_SECONDS (default 10). */
  seconds: number
  /** Unmeasured warm-up before each load run, BENCH_WARMUP_SECONDS (default 2). */
  warmupSeconds: number
  /** Concurrent connections, BENCH_CONNECTIONS (default 50). */
  connections: number
  /** Fresh starts for the start-up figure, BENCH_STARTS (default 5). */
  starts: number
  /** Load generator, BENCH_TOOL=wrk|autocannon (default wrk when on PATH). */
  tool: 'wrk' | 'autocannon'
}

/** Reads the BENCH_* settings, falling back to the defaults. */
export function readSettings(env: Record<string, string | undefined>): Settings {
  const whole = (name: string, fallback: number, min: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min) throw new Error(`${name}: "${raw}" is not a whole number of at least ${min}`)
    return n
  }
  const tool = env.BENCH_TOOL || (Bun.which('wrk') ? 'wrk' : 'autocannon')
  if (tool !== 'wrk' && tool !== 'autocannon') throw new Error(`BENCH_TOOL: "${tool}" is not wrk or autocannon`)
  if (tool === 'wrk' && !Bun.which('wrk')) throw new Error('BENCH_TOOL=wrk but wrk is not on PATH (apt-get install -y wrk)')
  return {
    seconds: whole('BENCH_SECONDS', 10, 1),
    warmupSeconds: whole('BENCH_WARMUP_SECONDS', 2, 0),
    connections: whole('BENCH_CONNECTIONS', 50, 1),
    starts: whole('BENCH_STARTS', 5, 1),
    tool,
  }
}

// ---------------------------------------------------------------------------------------------
// Child processes

/** Keeps every child the bench starts, so all of them get a SIGTERM even when something throws. */
export class Children {
  private readonly live = new Set<Subprocess>()

  /** Spawns a child in `cwd` with piped stderr and stdout (or stdout into a file) and remembers it until it exits. */
  spawn(cmd: string[], opts: { cwd: string; env?: Record<string, string | undefined>; stdoutFile?: string }): Subprocess<'ignore', any, 'pipe'> {
    const proc = Bun.spawn(cmd, { cwd: opts.cwd, env: opts.env ?? process.env, stdin: 'ignore', stdout: opts.stdoutFile ? Bun.file(opts.stdoutFile) : 'pipe', stderr: 'pipe' })
    this.live.add(proc)
    void proc.exited.then(() => this.live.delete(proc))
    return proc
  }

  /** Sends SIGTERM, waits up to `graceMs` for the exit, then SIGKILLs; returns the exit code. */
  async stop(proc: Subprocess, graceMs = 10_000): Promise<number | null> {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM')
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)])
      if (!exited) {
        proc.kill('SIGKILL')
        await proc.exited
      }
    }
    this.live.delete(proc)
    return proc.exitCode
  }

  /** Stops every child still running, all in parallel. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.live].map((proc) => this.stop(proc)))
  }
}

/** Runs a command to completion and returns its stdout; throws with its stderr when it fails. */
export async function runCommand(children: Children, cmd: string[], opts: { cwd: string; env?: Record<string, string | undefined> }): Promise<string> {
  const proc = children.spawn(cmd, opts)
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}:\n${stderr.trim()}`)
  return stdout
}

// ---------------------------------------------------------------------------------------------
// Servers

/** A server child that has printed its "listening on" line. */
export interface RunningServer {
  proc: Subprocess<'ignore', any, 'pipe'>
  port: number
  baseUrl: string
  /** Milliseconds from spawn until the "listening on" line. */
  listeningMs: number
  /** Everything the child has written to stderr so far (for error messages). */
  stderr: () => string
}

const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/

/** Spawns a server and resolves once its stderr says `listening on http://127.0.0.1:PORT`. */
export async function startServer(children: Children, cmd: string[], opts: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number; stdoutFile?: string }): Promise<RunningServer> {
  const started = performance.now()
  const proc = children.spawn(cmd, opts)
  let output = ''
  let found: ((port: number) => void) | undefined
  const listening = new Promise<number>((resolve) => { found = resolve })

  // Keep draining stderr for the child's whole life so its pipe never fills up.
  void (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of proc.stderr) {
      output = (output + decoder.decode(chunk, { stream: true })).slice(-64 * 1024)
      const m = LISTENING.exec(output)
      if (m) found?.(Number(m[1]))
    }
  })()
  if (!opts.stdoutFile) void new Response(proc.stdout as ReadableStream).arrayBuffer() // drained and dropped

  const timeoutMs = opts.timeoutMs ?? 15_000
  const port = await Promise.race([
    listening,
    proc.exited.then((code) => { throw new Error(`${cmd.join(' ')} exited ${code} before listening:\n${output.trim()}`) }),
    Bun.sleep(timeoutMs).then(() => { throw new Error(`${cmd.join(' ')} did not print "listening on" within ${timeoutMs} ms:\n${output.trim()}`) }),
  ])
  found = undefined
  return { proc, port, baseUrl: `http://127.0.0.1:${port}`, listeningMs: performance.now() - started, stderr: () => output }
}

/** Polls `url` every `everyMs` until it answers 200; returns when it did, throws after `timeoutMs`. */
export async function waitFor200(url: string, everyMs = 5, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    try {
      const res = await fetch(url)
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {
      // Not accepting connections yet.
    }
    if (performance.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
    await Bun.sleep(everyMs)
  }
}

// ---------------------------------------------------------------------------------------------
// Load

/** The outcome of one measured load run. */
export interface LoadResult {
  tool: 'wrk' | 'autocannon'
  requests: number
  rps: number
  p50Ms: number
  p99Ms: number
  /** Smallest latency step the tool reports: 0.001 ms for wrk, 1 ms for autocannon. */
  resolutionMs: number
  /** Socket errors, timeouts and non-2xx answers, summed. */
  failures: number
  /** CPU the server used during the run, in cores (1 = one core busy all the time); null off Linux. */
  serverCores: number | null
  /**
   * CPU the whole machine used in the moment just before the run, while nothing of the bench
   * was loading it, in cores: other work sharing the machine skews every figure. Null off Linux.
   */
  backgroundCores: number | null
}

/** What one run of the load generator measures. */
type RawLoad = Omit<LoadResult, 'serverCores' | 'backgroundCores'>

/** What to load: a URL, headers, and the server process whose CPU to watch. */
export interface LoadTarget {
  /** The server's URL; with `paths`, only its origin is used. */
  url: string
  headers?: Record<string, string>
  pid: number
  /** HTTP method, GET by default. */
  method?: 'GET' | 'POST'
  /** Paths (with query) taken in turn, one per request, instead of the URL's own. */
  paths?: string[]
  /**
   * Request body. Every `{seq}` in it becomes a token unique to the request (a per-run prefix
   * and a counter), e.g. for external_ref values that must not repeat, even across runs.
   */
  body?: string
  /** Connections for this target instead of BENCH_CONNECTIONS (e.g. 1 for a pure latency figure). */
  connections?: number
}

/** True when the target needs more than one fixed GET of `url`. */
const varies = (t: LoadTarget) => t.method !== undefined || t.paths !== undefined || t.body !== undefined

/** A token unique to one load run, to make `{seq}` values unique across runs on the same database. */
const runToken = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`

/** Loads the target for the warm-up (unmeasured) and then the measured duration. */
export async function loadTest(ctx: BenchContext, target: LoadTarget, opts: { seconds?: number; warm?: boolean } = {}): Promise<LoadResult> {
  const { warmupSeconds } = ctx.settings
  const seconds = opts.seconds ?? ctx.settings.seconds
  const backgroundCores = await machineBusyCores(300)
  if (warmupSeconds > 0 && opts.warm !== false) await runLoad(ctx, target, warmupSeconds)
  const cpuBefore = cpuSeconds(target.pid)
  const started = performance.now()
  const result = await runLoad(ctx, target, seconds)
  const elapsed = (performance.now() - started) / 1000
  const cpuAfter = cpuSeconds(target.pid)
  const serverCores = cpuBefore !== null && cpuAfter !== null ? (cpuAfter - cpuBefore) / elapsed : null
  return { ...result, serverCores, backgroundCores }
}

/** Runs the configured load generator once for `seconds`. */
async function runLoad(ctx: BenchContext, target: LoadTarget, seconds: number): Promise<RawLoad> {
  return ctx.settings.tool === 'wrk' ? runWrk(ctx, target, seconds) : runAutocannon(ctx, target, seconds)
}

/**
 * Runs wrk with one thread: on a 2-core machine that leaves one core to the server, and one
 * wrk thread (C, epoll) generates far more load than one Bun.serve process can answer.
 */
async function runWrk(ctx: BenchContext, target: LoadTarget, seconds: number): Promise<RawLoad> {
  const headerArgs = Object.entries(target.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
  const report = join(import.meta.dir, 'wrk-report.lua')
  const script = varies(target) ? writeWrkScript(ctx, target, report) : report
  const connections = target.connections ?? ctx.settings.connections
  const cmd = ['wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', script, ...headerArgs, target.url]
  const out = await runCommand(ctx.children, cmd, { cwd: ctx.root })
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (!line) throw new Error(`wrk printed no BENCH_JSON line:\n${out}`)
  const r = JSON.parse(line.slice('BENCH_JSON '.length)) as {
    requests: number; duration_us: number; p50_us: number; p99_us: number
    errors: { connect: number; read: number; write: number; status: number; timeout: number }
  }
  const e = r.errors
  return {
    tool: 'wrk',
    requests: r.requests,
    rps: r.requests / (r.duration_us / 1e6),
    p50Ms: r.p50_us / 1000,
    p99Ms: r.p99_us / 1000,
    resolutionMs: 0.001,
    failures: e.connect + e.read + e.write + e.status + e.timeout,
  }
}

/**
 * Writes a wrk script for a target whose requests vary: the paths taken in turn, `{seq}` in the
 * body replaced per request, and wrk-report.lua's `done` appended. Fixed requests (no body) are
 * formatted once in init(), so the per-request cost stays a table lookup.
 */
function writeWrkScript(ctx: BenchContext, target: LoadTarget, reportPath: string): string {
  const long = (s: string) => {
    let eq = ''
    while (s.includes(`]${eq}]`)) eq += '='
    return `[${eq}[${s}]${eq}]`
  }
  const paths = target.paths ?? [new URL(target.url).pathname + new URL(target.url).search]
  const parts = target.body === undefined ? [] : target.body.split('{seq}')
  const lua = `-- Generated by scripts/bench/lib.ts for one load run.
local method = ${long(target.method ?? 'GET')}
local paths = { ${paths.map(long).join(', ')} }
local body_parts = { ${parts.map(long).join(', ')} }
local run = ${long(runToken())}
local fixed = {}
local n = 0

init = function(args)
  if #body_parts == 0 then
    for i, p in ipairs(paths) do fixed[i] = wrk.format(method, p) end
  end
end

request = function()
  n = n + 1
  local i = (n - 1) % #paths + 1
  if #body_parts == 0 then return fixed[i] end
  return wrk.format(method, paths[i], nil, table.concat(body_parts, run .. "-" .. n))
end

${readFileSync(reportPath, 'utf8')}`
  const file = join(ctx.tmp, `wrk-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e9).toString(36)}.lua`)
  writeFileSync(file, lua)
  return file
}

/**
 * Runs autocannon in this process (its API works under Bun). It is JavaScript on one core, so
 * against a bare Bun.serve it is usually the bottleneck; its latencies have 1 ms resolution.
 */
async function runAutocannon(ctx: BenchContext, target: LoadTarget, seconds: number): Promise<RawLoad> {
  const connections = target.connections ?? ctx.settings.connections
  let requests: AutocannonRequest[] | undefined
  if (varies(target)) {
    const paths = target.paths ?? [new URL(target.url).pathname + new URL(target.url).search]
    const parts = target.body?.split('{seq}')
    const run = runToken()
    let n = 0
    requests = [{
      method: target.method ?? 'GET',
      setupRequest: (req) => {
        n++
        return { ...req, path: paths[(n - 1) % paths.length]!, ...(parts ? { body: parts.join(`${run}-${n}`) } : {}) }
      },
    }]
  }
  const r = await autocannon({ url: target.url, connections, duration: seconds, headers: target.headers, ...(requests ? { requests } : {}) })
  return {
    tool: 'autocannon',
    requests: r.requests.total,
    rps: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    resolutionMs: 1,
    failures: r.errors + r.timeouts + r.non2xx,
  }
}

// ---------------------------------------------------------------------------------------------
// /proc readings (Linux only; null elsewhere)

/** Reads a process's resident memory (VmRSS) in MB. */
export function rssMb(pid: number): number | null {
  return procStatusKb(pid, 'VmRSS')
}

/** Reads a process's peak resident memory (VmHWM) in MB. */
export function peakRssMb(pid: number): number | null {
  return procStatusKb(pid, 'VmHWM')
}

/** Reads one "kB" field of /proc/<pid>/status and converts it to MB. */
function procStatusKb(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : null
  } catch {
    return null
  }
}

/** Reads the machine's busy (not idle, not iowait) CPU time in seconds from /proc/stat. */
function machineCpuSeconds(): number | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields
    return (user + nice + system + irq + softirq + steal) / 100
  } catch {
    return null
  }
}

/** Measures how many cores the whole machine keeps busy over `ms` milliseconds; null off Linux. */
export async function machineBusyCores(ms: number): Promise<number | null> {
  const before = machineCpuSeconds()
  const started = performance.now()
  await Bun.sleep(ms)
  const after = machineCpuSeconds()
  return before === null || after === null ? null : (after - before) / ((performance.now() - started) / 1000)
}

/** Reads a process's user + system CPU time in seconds from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after "(comm)": state is field 3, utime 14 and stime 15, in clock ticks (100 Hz on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return null
  }
}

/** Reads a process's user and system CPU time separately, in seconds, from /proc/<pid>/stat. */
export function cpuTimes(pid: number): { user: number; system: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }
  } catch {
    return null
  }
}

/**
 * Reads how much a process has written from /proc/<pid>/io: `written` is every byte handed to
 * write() and friends (wchar), `toDisk` what reached the block layer (write_bytes). Null when
 * unreadable (not Linux, or not allowed).
 */
export function ioBytes(pid: number): { written: number; toDisk: number } | null {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8')
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(io)?.[1] ?? Number.NaN)
    return { written: field('wchar'), toDisk: field('write_bytes') }
  } catch {
    return null
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Returns the median of a non-empty list. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Formats a latency in ms at the tool's resolution ("< 1 ms" for autocannon's zero). */
export function fmtLatency(ms: number, resolutionMs: number): string {
  if (resolutionMs >= 1) return ms < 1 ? '< 1 ms' : `${fmt(ms)} ms`
  return `${fmt(ms, 2)} ms`
}

/** Formats a number with a fixed count of decimals and thousands separators. */
export function fmt(n: number, decimals = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
}

/** Wall-clock ms with sub-ms precision, comparable with the receiver's (another process). */
export const wallMs = () => performance.timeOrigin + performance.now()

/** Nearest-rank percentile of an ascending list (NaN when empty). */
export function pct(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/** A latency in ms with two decimals below 10 ms ('n/a' for NaN). */
export const ms = (v: number) => (Number.isNaN(v) ? 'n/a' : `${fmt(v, v < 10 ? 2 : 1)} ms`)

/** One server's figures over the rounds of a paired comparison. */
export interface PairedSide { runs: LoadResult[]; rps: number; cpuUsPerRequest: number | null }

/** Server CPU time per answered request in microseconds, or null off Linux. */
export function cpuPerRequestUs(r: LoadResult, seconds: number): number | null {
  return r.serverCores === null || r.requests === 0 ? null : (r.serverCores * seconds * 1e6) / r.requests
}

/**
 * Loads two servers in turn, `rounds` times (BENCH_ROUNDS, default 3), splitting the run time
 * between the rounds: this machine's speed drifts by tens of percent from minute to minute, so a
 * ratio of two runs minutes apart says more about the drift than about the servers. The ratio
 * is the median of the rounds' ratios (each of two runs seconds apart); CPU per request is the
 * server's own time, which drift disturbs less than throughput.
 */
export async function pairedLoad(ctx: BenchContext, a: LoadTarget, b: LoadTarget): Promise<{ a: PairedSide; b: PairedSide; ratio: number; ratios: number[]; cpuRatio: number | null }> {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
  const seconds = Math.max(1, Math.round(ctx.settings.seconds / rounds))
  // Warm both once, as one long run would.
  const sides = { a: [] as LoadResult[], b: [] as LoadResult[] }
  for (let r = 0; r < rounds; r++) {
    sides.a.push(await loadTest(ctx, a, { seconds, warm: r === 0 }))
    sides.b.push(await loadTest(ctx, b, { seconds, warm: r === 0 }))
  }
  const side = (runs: LoadResult[]): PairedSide => {
    const cpu = runs.map((x) => cpuPerRequestUs(x, seconds)).filter((x): x is number => x !== null)
    return { runs, rps: median(runs.map((x) => x.rps)), cpuUsPerRequest: cpu.length ? median(cpu) : null }
  }
  const A = side(sides.a), B = side(sides.b)
  const ratios = sides.b.map((x, i) => x.rps / sides.a[i]!.rps)
  return { a: A, b: B, ratio: median(ratios), ratios, cpuRatio: A.cpuUsPerRequest !== null && B.cpuUsPerRequest !== null ? A.cpuUsPerRequest / B.cpuUsPerRequest : null }
}

/**
 * The "boards" section: what open dispatch boards cost, on the compiled binary run as operators
 * get it (default settings and log level, its log to a file; the per-key rate limits are lifted,
 * as in every section, or the write figures would be the limit's, and TOWLINE_TILE_URL is empty:
 * the default tile server is on the internet, and benches talk to loopback only), with a demo-ish
 * dataset (`towline demo` plus 30 active jobs made through the API, a few dozen on the board).
 *
 * 1. The board page in Chromium (test/browser/chromium.ts) with CDP CPU throttling 4x: first
 *    contentful paint, median of 5 loads each in a fresh context (cold cache), and the bytes of
 *    /board and the files it loads, plain and as served (gzip, which Chromium asks for over
 *    http; brotli, which it asks for over https, fetched separately).
 * 2. API write throughput (POST /jobs/{id}/notes, 16 connections, BENCH_SECONDS) with no board.
 * 3. 200 boards (BENCH_BOARDS) connected to /board/events, one session each (signed in by
 *    POST /login), read by board-clients.ts in a process of its own; server RSS before, after
 *    connecting (the difference / 200 is the cost of a connection).
 * 4. 250 writes (BENCH_BOARD_WRITES; PATCH /jobs/{id} destination, one job.updated each), one at
 *    a time: per write, the time from the write's response to the first and to the last board
 *    receiving its event (p50, p99); RSS after.
 * 5. The same write throughput with the 200 boards connected, whether every board got every
 *    event, and the throughput again once they are gone.
 */
import { request as httpRequest } from 'node:http'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import type { BenchContext, LoadResult, LoadTarget, RunningServer, Section } from './lib'
import { cpuSeconds, fmt, loadTest, median, ms, pct, rssMb, runCommand, startServer, wallMs } from './lib'
import { noteBackground, startTowline, towlineEnv } from './frame'
import { createBenchLogin, signInSession, type BenchLogin } from './sign-in'
import { launchChromium } from '../../test/browser/chromium'

const BOARDS = Number(process.env.BENCH_BOARDS ?? 200)
const WRITES = Number(process.env.BENCH_BOARD_WRITES ?? 250)
const WRITE_CONNECTIONS = 16
const PAINT_LOADS = 5
const EXTRA_JOBS = 30
/** pages.md: a change reaches every open board within 2 seconds. */
const TARGET_LIVE_MS = 2000
/** pages.md: first paint under 1 s on a slow phone. */
const TARGET_FCP_MS = 1000

/** Calls the API with the bench's key; throws unless it answers `status`. */
async function call(server: RunningServer, key: string, method: string, path: string, body: unknown, status: number): Promise<any> {
  const res = await fetch(`${server.baseUrl}/api/v1${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`)
  return text ? JSON.parse(text) : null
}

/** The demo account (towline demo), an API key and an owner login for it. */
async function makeAccount(ctx: BenchContext, db: string): Promise<{ accountId: string; key: string; login: BenchLogin }> {
  const demo = JSON.parse(await runCommand(ctx.children, [ctx.binary, 'demo', '--db', db, '--json'], { cwd: ctx.root, env: towlineEnv() })) as { account_id: string }
  const key = (await runCommand(ctx.children, [ctx.binary, 'keys', 'create', '--account', demo.account_id, '--name', 'bench', '--scopes', 'all', '--db', db], { cwd: ctx.root, env: towlineEnv() })).trim()
  const login = await createBenchLogin(ctx, db, { accountId: demo.account_id })
  return { accountId: demo.account_id, key, login }
}

/** Adds active jobs through the API (pending, confirmed, some assigned and en route); returns their ids. */
async function addActiveJobs(server: RunningServer, key: string): Promise<string[]> {
  const units = (await call(server, key, 'GET', '/units', undefined, 200)).data as { id: string }[]
  const ids: string[] = []
  for (let i = 0; i < EXTRA_JOBS; i++) {
    const job = await call(server, key, 'POST', '/jobs', {
      customer: { name: `Bench Customer ${i}`, phone: `+1503555${2000 + i}`, sms_consent: false },
      pickup: { location: `${100 + i} NE Bench St, Portland` }, destination: 'Rose City Towing yard',
      vehicle: { year: '2017', make: 'Toyota', model: 'Corolla', color: 'grey', plate: `BN${1000 + i}` },
      urgency: i % 3 ? 'normal' : 'urgent', status: i % 5 === 0 ? 'pending' : 'confirmed',
    }, 201)
    ids.push(job.id)
    if (i % 3 === 1 && units.length) {
      await call(server, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: units[i % units.length]!.id }, 200)
      if (i % 6 === 1) await call(server, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' }, 200)
    }
  }
  return ids
}

/** The bytes of one response as the server sends them for these request headers, and its coding. */
function servedBytes(url: string, headers: Record<string, string>): Promise<{ bytes: number; coding: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => resolve({ bytes, coding: String(res.headers['content-encoding'] ?? 'identity') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

interface PageLoad {
  fcp: number | null
  /** When the document's last byte arrived (ms from navigation start). */
  responseEnd: number
  dcl: number
  load: number
  doc: { transfer: number; encoded: number; decoded: number }
  resources: { name: string; type: string; transfer: number; encoded: number; decoded: number }[]
}

/** Part 1: first paint and weight of /board in Chromium with the CPU slowed 4x. */
async function measureBoardPage(ctx: BenchContext, server: RunningServer, cookie: string): Promise<void> {
  const token = cookie.slice(cookie.indexOf('=') + 1)
  const browser = await launchChromium()
  const blocked: string[] = []
  /** Loads the board `n` times, each in a fresh context (empty cache) with the CPU slowed `rate` times. */
  const loadBoard = async (rate: number, n: number, path = '/board'): Promise<PageLoad[]> => {
    const loads: PageLoad[] = []
    for (let i = 0; i < n; i++) {
      // A fresh context each time: empty cache, as a phone that never saw the board.
      const context = await browser.newContext({ viewport: { width: 412, height: 915 } })
      await context.addCookies([{ name: 'towline_session', value: token, url: server.baseUrl }])
      // Belt and braces: nothing leaves this machine, whatever the page asks for.
      await context.route((url) => !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname), (route) => { blocked.push(route.request().url()); return route.abort() })
      const page = await context.newPage()
      const cdp = await context.newCDPSession(page)
      await cdp.send('Emulation.setCPUThrottlingRate', { rate })
      const res = await page.goto(`${server.baseUrl}${path}`, { waitUntil: 'load' })
      if (res?.status() !== 200) throw new Error(`${path} answered ${res?.status()} in Chromium`)
      loads.push(await page.evaluate(async () => {
        const fcp = await new Promise<number | null>((resolve) => {
          const seen = performance.getEntriesByName('first-contentful-paint')[0]
          if (seen) return resolve(seen.startTime)
          new PerformanceObserver((list) => { const e = list.getEntriesByName('first-contentful-paint')[0]; if (e) resolve(e.startTime) }).observe({ type: 'paint', buffered: true })
          setTimeout(() => resolve(null), 10_000)
        })
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming
        return {
          fcp, responseEnd: nav.responseEnd, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
          doc: { transfer: nav.transferSize, encoded: nav.encodedBodySize, decoded: nav.decodedBodySize },
          resources: (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((e) => ({ name: e.name, type: e.initiatorType, transfer: e.transferSize, encoded: e.encodedBodySize, decoded: e.decodedBodySize })),
        }
      }))
      await context.close()
    }
    return loads
  }
  let loads: PageLoad[]
  let plain: PageLoad[]
  let calibration: PageLoad[]
  try {
    loads = await loadBoard(4, PAINT_LOADS)
    plain = await loadBoard(1, PAINT_LOADS) // the same machine without the slowdown, to tell the page's cost from the machine's load
    // The dashboard's frame without the board and its map (the jobs list, same layout and stylesheet), slowed alike.
    calibration = await loadBoard(4, PAINT_LOADS, '/jobs')
  } finally {
    await browser.close()
  }
  if (blocked.length) ctx.note(`the board page asked for ${blocked.length} URL(s) off this machine, refused: ${[...new Set(blocked)].slice(0, 3).join(', ')}`)
  const fcps = loads.map((l) => l.fcp).filter((v): v is number => v !== null)
  if (fcps.length < loads.length) ctx.note(`${loads.length - fcps.length} of ${loads.length} loads reported no first-contentful-paint within 10 s`)
  const fcp = median(fcps)
  ctx.log(`board first contentful paint (4x CPU throttling): ${fcps.map((v) => fmt(v)).join(', ')} ms; document in: ${loads.map((l) => fmt(l.responseEnd)).join(', ')} ms; load event: ${loads.map((l) => fmt(l.load)).join(', ')} ms`)
  ctx.log(`unthrottled: first contentful paint ${plain.map((l) => fmt(l.fcp ?? Number.NaN)).join(', ')} ms; document in: ${plain.map((l) => fmt(l.responseEnd)).join(', ')} ms`)
  ctx.record({ metric: `/board first contentful paint, CPU 4x slower, median of ${fcps.length}`, value: `${fmt(fcp)} ms`, target: `< ${TARGET_FCP_MS} ms`, pass: fcp < TARGET_FCP_MS })
  const plainFcp = plain.map((l) => l.fcp).filter((v): v is number => v !== null)
  const calibrationFcp = calibration.map((l) => l.fcp).filter((v): v is number => v !== null)
  if (calibrationFcp.length) ctx.record({ metric: `/jobs first contentful paint (same frame, no map), CPU 4x slower, median of ${calibrationFcp.length}`, value: `${fmt(median(calibrationFcp))} ms`, target: '', pass: null })
  if (plainFcp.length) ctx.record({ metric: `/board first contentful paint, CPU not slowed, median of ${plainFcp.length}`, value: `${fmt(median(plainFcp))} ms`, target: '', pass: null })
  ctx.record({ metric: `/board document fully received (navigation responseEnd), CPU 4x slower, median`, value: `${fmt(median(loads.map((l) => l.responseEnd)))} ms`, target: '', pass: null })
  ctx.record({ metric: `/board load event, CPU 4x slower, median of ${loads.length}`, value: `${fmt(median(loads.map((l) => l.load)))} ms`, target: '', pass: null })

  // Weight: the last load's document and the files it loaded (the live stream never ends, so it is not among them).
  const last = loads[loads.length - 1]!
  const assets = last.resources.filter((r) => new URL(r.name).pathname.startsWith('/assets/'))
  const data = last.resources.filter((r) => !new URL(r.name).pathname.startsWith('/assets/'))
  const sum = (list: { encoded: number; decoded: number }[], k: 'encoded' | 'decoded') => list.reduce((s, r) => s + r[k], 0)
  // As the server sends each file for each Accept-Encoding (Chromium asks for what it likes; over http that may not be br).
  const served = { identity: 0, gzip: 0, br: 0 }
  for (const a of assets) for (const coding of ['identity', 'gzip', 'br'] as const) served[coding] += (await servedBytes(a.name, { 'accept-encoding': coding })).bytes
  const docBr = await servedBytes(`${server.baseUrl}/board`, { 'accept-encoding': 'br, gzip', cookie })
  const kb = (n: number) => `${fmt(n / 1024, 1)} KB`
  ctx.log(`board files: ${assets.map((a) => `${new URL(a.name).pathname.replace(/^\/assets\//, '')} ${fmt(a.decoded)}/${fmt(a.encoded)} B`).join(', ')}; data: ${data.map((d) => new URL(d.name).pathname).join(', ') || 'none'}`)
  ctx.record({ metric: '/board HTML: plain / as served to Chromium / when br or gzip is asked', value: `${kb(last.doc.decoded)} / ${kb(last.doc.encoded)} / ${kb(docBr.bytes)} (${docBr.coding})`, target: '', pass: null })
  ctx.record({ metric: `/board files (${assets.length}): plain / gzip / br, as served`, value: `${kb(served.identity)} / ${kb(served.gzip)} / ${kb(served.br)}`, target: '', pass: null })
  ctx.record({ metric: '/board HTML + files, as Chromium got them (bodies)', value: `${kb(last.doc.encoded + sum(assets, 'encoded'))} (plain ${kb(last.doc.decoded + sum(assets, 'decoded'))})`, target: '', pass: null })
  if (data.length) ctx.record({ metric: `/board data fetched by its script (${data.length})`, value: kb(sum(data, 'decoded')), target: '', pass: null })
}

/** The position of the newest event, as the board's state says. */
async function boardPosition(server: RunningServer, cookie: string): Promise<{ position: number; jobs: number }> {
  const res = await fetch(`${server.baseUrl}/board/state`, { headers: { cookie } })
  if (res.status !== 200) throw new Error(`/board/state answered ${res.status}`)
  const body = (await res.json()) as { position: number; jobs: unknown[] }
  return { position: body.position, jobs: body.jobs.length }
}

/** Loads POST /jobs/{id}/notes on 16 connections for `seconds` (after a warm-up when `warm`) and logs it. */
async function writeLoad(ctx: BenchContext, server: RunningServer, key: string, jobIds: string[], label: string, seconds: number, warm: boolean): Promise<LoadResult> {
  const target: LoadTarget = {
    url: server.baseUrl, method: 'POST', paths: jobIds.map((id) => `/api/v1/jobs/${id}/notes`), connections: WRITE_CONNECTIONS,
    body: '{"text":"Bench note {seq}","customer_visible":false}', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, pid: server.proc.pid,
  }
  const r = await loadTest(ctx, target, { seconds, warm })
  const cpu = r.serverCores === null ? '' : `, server CPU ${fmt(r.serverCores * 100)}%`
  ctx.log(`${label}: ${fmt(r.rps)} writes/s, p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}, ${r.failures} failures${cpu}`)
  if (r.failures) ctx.record({ metric: `${label}: failed writes`, value: fmt(r.failures), target: '0', pass: false })
  noteBackground(ctx, label, r)
  return r
}

/** The server's RSS in MB, the median of 5 readings 200 ms apart (one reading moves with the garbage collector). */
export async function steadyRss(pid: number): Promise<number | null> {
  const readings: number[] = []
  for (let i = 0; i < 5; i++) {
    const r = rssMb(pid)
    if (r === null) return null
    readings.push(r)
    await Bun.sleep(200)
  }
  return median(readings)
}

/** The board clients' control URL and a typed caller. */
export function clientsApi(base: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const out = (await res.json()) as T
    if (res.status !== 200) throw new Error(`board clients ${path}: ${JSON.stringify(out)}`)
    return out
  }
}

interface Complete { position: number; first: number; last: number; count: number; type: string | null; timeout?: boolean }

/** Part 4: writes one at a time, each waited for on every board. */
async function timeWrites(ctx: BenchContext, server: RunningServer, key: string, jobIds: string[], clients: ReturnType<typeof clientsApi>) {
  const write = async (i: number) => {
    const sent = wallMs()
    const res = await fetch(`${server.baseUrl}/api/v1/jobs/${jobIds[(i + jobIds.length) % jobIds.length]}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ destination: `Bench garage ${i}` }),
    })
    const answered = wallMs()
    const text = await res.text()
    if (res.status !== 200) throw new Error(`PATCH answered ${res.status}: ${text.slice(0, 300)}`)
    return { sent, answered }
  }
  // One write unmeasured: where the positions stand.
  await write(-1)
  let after = (await clients<Complete>('GET', '/complete?after=0&timeout=10000')).position
  const last: number[] = [], first: number[] = [], lastFromSent: number[] = []
  const types = new Map<string, number>()
  let gaps = 0
  for (let i = 0; i < WRITES; i++) {
    const t = await write(i)
    const c = await clients<Complete>('GET', `/complete?after=${after}&timeout=10000`)
    if (c.timeout) throw new Error(`write ${i}: not every board had its event after 10 s (${JSON.stringify(c)})`)
    if (c.position !== after + 1) gaps++
    after = c.position
    types.set(c.type ?? '?', (types.get(c.type ?? '?') ?? 0) + 1)
    last.push(c.last - t.answered)
    first.push(c.first - t.answered)
    lastFromSent.push(c.last - t.sent)
  }
  if (gaps) ctx.note(`${gaps} timed writes were not the very next event (another event in between)`)
  ctx.log(`event types received: ${[...types].map(([k, v]) => `${k} ×${v}`).join(', ')}`)
  return { last: last.sort((a, b) => a - b), first: first.sort((a, b) => a - b), lastFromSent: lastFromSent.sort((a, b) => a - b) }
}

/** The machine's load average, as uptime prints it. */
const load = () => loadavg().map((v) => v.toFixed(2)).join(' / ')

/** The section (see the top of this file). */
export const boards: Section = {
  name: 'boards',
  summary: '200 boards on SSE: write-to-board latency, RSS per connection, write throughput with and without them; /board weight and first paint in Chromium (CPU 4x)',
  async run(ctx) {
    ctx.record({ metric: 'machine load average 1 / 5 / 15 min, at start', value: load(), target: '', pass: null })
    const db = join(ctx.tmp, 'boards.db')
    const { key, login } = await makeAccount(ctx, db)
    // No map tiles: the default tile server is on the internet, and the bench talks to loopback only.
    const { server } = await startTowline(ctx, db, { env: { TOWLINE_TILE_URL: '' } })
    const jobIds = await addActiveJobs(server, key)
    const cookie = await signInSession(server, login)
    const state = await boardPosition(server, cookie)
    ctx.record({ metric: 'jobs on the board (demo + API)', value: fmt(state.jobs), target: '', pass: null })

    await measureBoardPage(ctx, server, cookie)

    // One session per board, as 200 browsers would have (sign-ins take turns: two hashes at a time).
    const cookies: string[] = []
    const signInStarted = performance.now()
    for (let i = 0; i < BOARDS; i += 8) cookies.push(...await Promise.all(Array.from({ length: Math.min(8, BOARDS - i) }, () => signInSession(server, login))))
    ctx.log(`${BOARDS} sessions signed in in ${fmt((performance.now() - signInStarted) / 1000, 1)} s`)
    const clientProc = await startServer(ctx.children, [process.execPath, join(import.meta.dir, 'board-clients.ts')], { cwd: ctx.root, env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '1024' } })
    const clients = clientsApi(clientProc.baseUrl)
    const connect = async () => {
      const c = await clients<{ connected: number; ms: number }>('POST', '/connect', { url: `${server.baseUrl}/board/events`, cookies })
      ctx.log(`${c.connected} boards connected in ${fmt(c.ms)} ms`)
      return c
    }

    await Bun.sleep(1000)
    const rssBefore = await steadyRss(server.proc.pid)
    const connected = await connect()
    await Bun.sleep(1000)
    const rssConnected = await steadyRss(server.proc.pid)
    ctx.record({ metric: 'boards connected (one session each)', value: `${connected.connected} of ${BOARDS}`, target: String(BOARDS), pass: connected.connected === BOARDS })

    const t = await timeWrites(ctx, server, key, jobIds, clients)
    const rssWrites = await steadyRss(server.proc.pid)
    const p = (list: number[], q: number) => ms(pct(list, q))
    ctx.record({ metric: `write response → LAST of ${BOARDS} boards has the event, p50 / p99 (${WRITES} writes)`, value: `${p(t.last, 50)} / ${p(t.last, 99)}`, target: `p99 < ${fmt(TARGET_LIVE_MS)} ms`, pass: pct(t.last, 99) < TARGET_LIVE_MS })
    ctx.record({ metric: 'write response → FIRST board has the event, p50 / p99', value: `${p(t.first, 50)} / ${p(t.first, 99)}`, target: '', pass: null })
    ctx.record({ metric: 'write sent → last board has the event, p50 / p99 / max', value: `${p(t.lastFromSent, 50)} / ${p(t.lastFromSent, 99)} / ${ms(t.lastFromSent[t.lastFromSent.length - 1]!)}`, target: '', pass: null })
    if (t.first[0]! < 0) ctx.note(`on ${t.first.filter((v) => v < 0).length} of ${WRITES} timed writes the first board had the event before the write's response reached the bench (the event is published at commit, the response sent after it)`)
    if (rssBefore !== null && rssConnected !== null && rssWrites !== null) {
      ctx.record({ metric: `server RSS: no board / ${BOARDS} connected / after the timed writes`, value: `${fmt(rssBefore, 1)} / ${fmt(rssConnected, 1)} / ${fmt(rssWrites, 1)} MB`, target: '', pass: null })
      ctx.record({ metric: 'server RSS per board connection ((connected − none) / boards)', value: `${fmt(((rssConnected - rssBefore) * 1024) / BOARDS, 1)} KB`, target: '', pass: null })
    }

    // Throughput in alternating rounds, with the boards and without (the machine's speed drifts
    // from minute to minute; a ratio of two runs seconds apart says more than of two minutes apart).
    const rounds = 2
    const seconds = Math.max(1, Math.round(ctx.settings.seconds / rounds))
    const withRuns: LoadResult[] = []
    const withoutRuns: LoadResult[] = []
    let rssLoaded: number | null = null
    const clientCores: number[] = []
    const messageBytes: number[] = []
    for (let r = 0; r < rounds; r++) {
      if (r > 0) await connect()
      const posBefore = (await boardPosition(server, cookie)).position
      const statusBefore = await clients<{ messages: number; bytes: number }>('GET', '/status')
      const msgsBefore = statusBefore.messages
      const clientCpuBefore = cpuSeconds(clientProc.proc.pid)
      const loadStarted = performance.now()
      withRuns.push(await writeLoad(ctx, server, key, jobIds, `POST /jobs/{id}/notes, ${BOARDS} boards, round ${r + 1}`, seconds, r === 0))
      const clientCpuAfter = cpuSeconds(clientProc.proc.pid)
      if (clientCpuBefore !== null && clientCpuAfter !== null) clientCores.push((clientCpuAfter - clientCpuBefore) / ((performance.now() - loadStarted) / 1000))
      rssLoaded ??= rssMb(server.proc.pid)
      const posAfter = (await boardPosition(server, cookie)).position
      // Did every board get every event of the load (the warm-up's too)? Wait for the streams to drain, up to 60 s.
      const expected = (posAfter - posBefore) * BOARDS
      const drainStarted = performance.now()
      let status = await clients<{ open: number; messages: number; bytes: number; errors: string[] }>('GET', '/status')
      while (status.messages - msgsBefore < expected && performance.now() - drainStarted < 60_000) {
        await Bun.sleep(250)
        status = await clients<{ open: number; messages: number; bytes: number; errors: string[] }>('GET', '/status')
      }
      const delivered = status.messages - msgsBefore
      if (delivered > 0) messageBytes.push((status.bytes - statusBefore.bytes) / delivered)
      ctx.record({ metric: `round ${r + 1}: events of the write load delivered to the ${BOARDS} boards`, value: `${fmt(delivered)} of ${fmt(expected)} (drained ${fmt((performance.now() - drainStarted) / 1000, 1)} s after the load)`, target: 'all', pass: delivered === expected && status.open === BOARDS })
      if (status.errors.length) ctx.note(`board clients' errors: ${status.errors.join('; ')}`)
      await clients('POST', '/close')
      await Bun.sleep(1000)
      withoutRuns.push(await writeLoad(ctx, server, key, jobIds, `POST /jobs/{id}/notes, no board, round ${r + 1}`, seconds, r === 0))
    }
    const rssEnd = await steadyRss(server.proc.pid)
    await ctx.children.stop(clientProc.proc)
    const rps = (list: LoadResult[]) => list.map((x) => fmt(x.rps)).join(', ')
    const lat = (list: LoadResult[]) => list.map((x) => `${ms(x.p50Ms)} / ${ms(x.p99Ms)}`).join('; ')
    const cores = (list: LoadResult[]) => list.map((x) => (x.serverCores === null ? 'n/a' : `${fmt(x.serverCores * 100)}%`)).join(', ')
    ctx.record({ metric: `writes/s, no board (each round; ${WRITE_CONNECTIONS} connections, ${seconds} s)`, value: rps(withoutRuns), target: '', pass: null })
    ctx.record({ metric: `writes/s, ${BOARDS} boards connected (each round)`, value: rps(withRuns), target: '', pass: null })
    ctx.record({ metric: 'write latency p50 / p99, no board (each round)', value: lat(withoutRuns), target: '', pass: null })
    ctx.record({ metric: `write latency p50 / p99, ${BOARDS} boards (each round)`, value: lat(withRuns), target: '', pass: null })
    ctx.record({ metric: 'server CPU, no board / with boards (each round)', value: `${cores(withoutRuns)} / ${cores(withRuns)}`, target: '', pass: null })
    if (clientCores.length) ctx.record({ metric: `board clients' process CPU during the loads with boards (warm-up included)`, value: clientCores.map((c) => `${fmt(c * 100)}%`).join(', '), target: '', pass: null })
    if (messageBytes.length) ctx.record({ metric: 'bytes of one board message (a note_added event, as the loads sent)', value: `${fmt(median(messageBytes))} B`, target: '', pass: null })
    const ratios = withRuns.map((w, i) => w.rps / withoutRuns[i]!.rps)
    ctx.record({ metric: `write throughput with ${BOARDS} boards / without (median of the rounds' ratios)`, value: `${fmt(median(ratios), 2)} (${ratios.map((x) => fmt(x, 2)).join(', ')})`, target: '', pass: null })
    if (rssLoaded !== null && rssEnd !== null) ctx.record({ metric: `server RSS: right after a write load with ${BOARDS} boards / at the end, no board`, value: `${fmt(rssLoaded, 1)} / ${fmt(rssEnd, 1)} MB`, target: '', pass: null })
    ctx.record({ metric: 'machine load average 1 / 5 / 15 min, at end', value: load(), target: '', pass: null })
    ctx.note(`${BOARDS} SSE connections read by scripts/bench/board-clients.ts in its own process (Bun fetch streams), so reading them never delays the bench's writes and clocks; the three (server, clients, wrk) share this machine's 2 cores`)
    await ctx.children.stop(server.proc)
  },
}

/**
 * The phone pages of the "pages" section (issue 13's Measure): the driver's page /d/{token} and
 * the customer's tracking page /t/{token}, on the compiled binary at its default settings (log
 * level info, its log to a file; the rate limits lifted, as in every section; TOWLINE_TILE_URL
 * empty, so no map tile is ever asked for and nothing leaves this machine). One job, en route,
 * with a unit that has reported a position (so the tracking page shows the truck on its map).
 *
 * a. Weight before the map: every response the page loads (HTML, scripts, styles, fonts,
 *    images; the live stream excepted, it never ends) counted from Chromium's DevTools protocol
 *    Network events: bytes on the wire (headers included), bodies as served (gzip: Chromium asks
 *    for it over http) and plain. The tracking page en route loads Leaflet too; tiles never.
 * b. First contentful paint (Performance API) at a phone viewport (412x823), CPU 4x slower
 *    (Emulation.setCPUThrottlingRate) and Lighthouse's slow 4G (Network.emulateNetworkConditions:
 *    150 ms RTT, 1.6 Mbps down, 750 Kbps up), median of 5 loads each in a fresh context (empty
 *    cache); also with Lighthouse's DevTools-throttling values of the same profile (562.5 ms,
 *    1.47 Mbps, 675 Kbps: what Lighthouse applies when the browser throttles per request).
 * c. Photo upload: a 4000x3000 JPEG made in the browser (a canvas of gradients and noise, so it
 *    weighs what a phone camera's does), given to the driver page's **Add photo** with
 *    setInputFiles; from the page's change event (the file chosen) until the server's answer to
 *    the upload (the page downscales it to 1600 px and posts the form), split into downscale and
 *    POST, and the bytes posted, with the throttling of (b) and without.
 * d. 500 tracking pages on SSE: 500 `/t/{token}/events` streams of ONE job (one customer's link
 *    opened 500 times: every change reaches all of them), read by board-clients.ts in its own
 *    process; server RSS before and with them; the time from a PATCH of the job's status being
 *    answered until the last of the 500 has the new state (p50 / p99 / max over 60 changes; at 60 samples the nearest-rank p99 is the max).
 */
import { request as httpRequest } from 'node:http'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { launchChromium } from '../../test/browser/chromium'
import type { BenchContext, RunningServer } from './lib'
import { fmt, median, ms, pct, runCommand, startServer, wallMs } from './lib'
import { createBenchKey, startTowline, towlineEnv } from './frame'
import { clientsApi, steadyRss } from './boards'

/** pages.md: the driver and tracking pages weigh under 150 KB before the map. */
const WEIGHT_KB = 150
/** pages.md: first paint under 1 s on a slow phone. */
const FCP_MS = 1000
const LOADS = 5
const UPLOADS = 3
const READERS = Number(process.env.BENCH_TRACKING_READERS ?? 500)
const CHANGES = Number(process.env.BENCH_TRACKING_CHANGES ?? 60)
/** Lighthouse's mobile device (Moto G Power). */
const PHONE = { width: 412, height: 823 }

/** A network profile for Network.emulateNetworkConditions: latency in ms, throughputs in bytes per second. */
interface Profile { name: string; latency: number; downloadThroughput: number; uploadThroughput: number }
const kbps = (k: number) => (k * 1024) / 8
/** Lighthouse's slow 4G as it states it (constants.js throttling.mobileSlow4G: rttMs 150, throughputKbps 1.6 * 1024, uploadThroughputKbps 750). */
const SLOW_4G: Profile = { name: 'slow 4G (150 ms, 1.6 Mbps / 750 Kbps)', latency: 150, downloadThroughput: kbps(1.6 * 1024), uploadThroughput: kbps(750) }
/** The same profile as Lighthouse applies it through DevTools (its request-level latency x3.75, throughput x0.9). */
const SLOW_4G_DEVTOOLS: Profile = { name: 'slow 4G, Lighthouse DevTools values (562.5 ms, 1.47 Mbps / 675 Kbps)', latency: 562.5, downloadThroughput: kbps(1.6 * 1024 * 0.9), uploadThroughput: kbps(750 * 0.9) }

const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`

/** Calls the API with the bench's key; throws unless it answers `status`. */
async function call(server: RunningServer, key: string, method: string, path: string, body: unknown, status: number): Promise<any> {
  const res = await fetch(`${server.baseUrl}/api/v1${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`)
  return text ? JSON.parse(text) : null
}

/** The job both pages show: en route, its unit's phone having reported; its driver link (from the texts outbox) and tracking link. */
async function makeJob(ctx: BenchContext, db: string, server: RunningServer, key: string): Promise<{ id: string; driverUrl: string; trackingUrl: string; unitId: string }> {
  const unit = JSON.parse(await runCommand(ctx.children, [ctx.binary, 'units', 'add', '--name', 'Truck 12', '--driver-name', 'Sam Rivera', '--driver-phone', '+15035550112', '--json', '--db', db], { cwd: ctx.root, env: towlineEnv() })) as { id: string; device_id: string }
  const job = await call(server, key, 'POST', '/jobs', {
    external_ref: 'BENCH-13', customer: { name: 'Pat Benchley', phone: '+15035550142', sms_consent: false },
    vehicle: { year: '2019', make: 'Honda', model: 'Civic', color: 'blue', plate: '7ABC123' },
    pickup: { location: 'I-5 N at exit 299B, right shoulder', lat: 45.5017, lng: -122.6731 }, destination: "Joe's Garage, 1200 SE Grand Ave",
    urgency: 'urgent', service_type: 'flatbed',
  }, 201)
  await call(server, key, 'POST', `/jobs/${job.id}/notes`, { text: 'Hazards on, behind the barrier.', customer_visible: true }, 201)
  await call(server, key, 'POST', `/jobs/${job.id}/notes`, { text: 'Motor club PO 55123.', customer_visible: false }, 201)
  await call(server, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id }, 200)
  await call(server, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', eta_at: new Date(Date.now() + 20 * 60_000).toISOString() }, 200)
  const fix = await fetch(`${server.baseUrl}/osmand?id=${unit.device_id}&lat=45.5120&lon=-122.6587&timestamp=${Math.floor(Date.now() / 1000)}`, { method: 'POST' })
  if (fix.status !== 200) throw new Error(`/osmand answered ${fix.status}`)
  // The driver's link as the driver gets it: in the job text (the log provider records it; the API never shows it).
  const texts = JSON.parse(await runCommand(ctx.children, [ctx.binary, 'texts', 'list', '--json', '--job', job.id, '--db', db], { cwd: ctx.root, env: towlineEnv() })) as { data: { body: string }[] }
  const driverUrl = texts.data.map((t) => /https?:\/\/\S+\/d\/[0-9A-Za-z]+/.exec(t.body)?.[0]).find(Boolean)
  if (!driverUrl) throw new Error('no driver link among the job\'s texts')
  return { id: job.id, driverUrl, trackingUrl: job.tracking_url, unitId: unit.id }
}

/** One response the page loaded, from the Network domain's events. */
interface Loaded { url: string; type: string; status: number; encoding: string; headers: number; wire: number; plain: number }

/** Loads a page in a fresh phone context with the given throttling; returns its first paint and what it loaded (after the network went quiet). */
async function loadPage(browser: Browser, url: string, opts: { cpu: number; net: Profile | null; collect: boolean }): Promise<{ fcp: number | null; responseEnd: number; loaded: Loaded[]; offsite: string[] }> {
  const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2.625 })
  const offsite: string[] = []
  // Belt and braces: nothing leaves this machine, whatever the page asks for.
  await context.route((u) => !['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname), (route) => { offsite.push(route.request().url()); return route.abort() })
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  const seen = new Map<string, Partial<Loaded> & { done?: boolean }>()
  if (opts.collect || opts.net) await cdp.send('Network.enable')
  if (opts.collect) {
    cdp.on('Network.requestWillBeSent', (e) => { seen.set(e.requestId, { url: e.request.url, type: e.type ?? '', plain: 0 }) })
    cdp.on('Network.responseReceived', (e) => {
      const r = seen.get(e.requestId)
      if (!r) return
      const h = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), String(v)]))
      Object.assign(r, { status: e.response.status, encoding: h['content-encoding'] ?? 'identity', headers: e.response.encodedDataLength, type: e.type ?? r.type, mime: e.response.mimeType })
    })
    cdp.on('Network.dataReceived', (e) => { const r = seen.get(e.requestId); if (r) r.plain = (r.plain ?? 0) + e.dataLength })
    cdp.on('Network.loadingFinished', (e) => { const r = seen.get(e.requestId); if (r) { r.wire = e.encodedDataLength; r.done = true } })
  }
  if (opts.net) await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: opts.net.latency, downloadThroughput: opts.net.downloadThroughput, uploadThroughput: opts.net.uploadThroughput })
  if (opts.cpu !== 1) await cdp.send('Emulation.setCPUThrottlingRate', { rate: opts.cpu })
  try {
    return await measureLoad(page, url, opts.collect, seen, offsite)
  } finally {
    await closeThrottled(context, cdp, opts.cpu !== 1)
  }
}

/**
 * Closes a context whose page had its CPU throttled, the throttling ended first: Chromium
 * throttles by a thread of the renderer process that polls the clock, and that process can
 * outlive the page (it hosts the next ones); left on, the thread kept a core busy for the rest
 * of the run, slowing every later figure and stalling the photo upload's page for minutes.
 */
async function closeThrottled(context: BrowserContext, cdp: CDPSession, throttled: boolean): Promise<void> {
  if (throttled) await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 }).catch(() => {})
  await context.close()
}

/** Loads `url` in `page` and waits for its first paint (and, when collecting, for the network to go quiet). */
async function measureLoad(page: Page, url: string, collect: boolean, seen: Map<string, Partial<Loaded> & { done?: boolean }>, offsite: string[]): Promise<{ fcp: number | null; responseEnd: number; loaded: Loaded[]; offsite: string[] }> {
  const res = await page.goto(url, { waitUntil: 'load', timeout: 60_000 })
  if (res?.status() !== 200) throw new Error(`${url} answered ${res?.status()} in Chromium`)
  const { fcp, responseEnd } = await firstPaint(page)
  if (collect) {
    // Quiet: no request (the live stream aside) unfinished for a second, e.g. the map's files the tracking page asks for once it has a truck.
    let quietSince = performance.now()
    const busy = () => [...seen.values()].some((r) => !r.done && !String((r as { mime?: string }).mime ?? '').includes('event-stream') && !/\/events(\?|$)/.test(new URL(r.url!).pathname))
    const deadline = performance.now() + 20_000
    while (performance.now() - quietSince < 1000 && performance.now() < deadline) {
      if (busy()) quietSince = performance.now()
      await Bun.sleep(50)
    }
  }
  const loaded = [...seen.values()].filter((r) => r.done).map((r) => r as Loaded)
  return { fcp, responseEnd, loaded, offsite }
}

/** The page's first-contentful-paint entry (null if none within 10 s) and when its document had fully arrived, in ms from navigation start. */
function firstPaint(page: Page): Promise<{ fcp: number | null; responseEnd: number }> {
  return page.evaluate(() => new Promise<number | null>((resolve) => {
    const seen = performance.getEntriesByName('first-contentful-paint')[0]
    if (seen) return resolve(seen.startTime)
    new PerformanceObserver((list) => { const e = list.getEntriesByName('first-contentful-paint')[0]; if (e) resolve(e.startTime) }).observe({ type: 'paint', buffered: true })
    setTimeout(() => resolve(null), 10_000)
  }).then((fcp) => ({ fcp, responseEnd: (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).responseEnd })))
}

/** The body of one response as the server sends it for this Accept-Encoding. */
function servedBytes(url: string, encoding: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { 'accept-encoding': encoding } }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => resolve(bytes))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

/** (a) and (b) for one page. */
async function measurePage(ctx: BenchContext, browser: Browser, label: string, url: string): Promise<void> {
  const first = await loadPage(browser, url, { cpu: 1, net: null, collect: true })
  if (first.offsite.length) ctx.note(`${label} asked for ${first.offsite.length} URL(s) off this machine, refused: ${[...new Set(first.offsite)].slice(0, 3).join(', ')}`)
  const tiles = first.loaded.filter((r) => /tile/i.test(r.url))
  if (tiles.length) ctx.note(`${label} loaded ${tiles.length} tile-like URL(s): ${tiles[0]!.url}`)
  const sum = (k: 'wire' | 'plain' | 'headers') => first.loaded.reduce((s, r) => s + (r[k] ?? 0), 0)
  const wire = sum('wire')
  // Text bodies as gzip would serve them when asked (Chromium asks over http); br for reference.
  let gzip = 0, br = 0
  for (const r of first.loaded) {
    const direct = r.url.replace('//localhost:', '//127.0.0.1:')
    gzip += await servedBytes(direct, 'gzip')
    br += await servedBytes(direct, 'br')
  }
  ctx.log(`${label} loaded: ${first.loaded.map((r) => `${new URL(r.url).pathname.replace(/^\/(d|t)\/[0-9A-Za-z]+/, '/$1/{token}')} ${r.type} ${r.encoding} ${fmt(r.wire)} B (plain ${fmt(r.plain)})`).join('; ')}`)
  ctx.record({ metric: `${label}: responses before the map's tiles (live stream aside)`, value: String(first.loaded.length), target: '', pass: null })
  ctx.record({ metric: `${label}: bytes on the wire (headers included), as Chromium got them`, value: kb(wire), target: `< ${WEIGHT_KB} KB`, pass: wire < WEIGHT_KB * 1024 })
  ctx.record({ metric: `${label}: bodies plain / gzip / br`, value: `${kb(sum('plain'))} / ${kb(gzip)} / ${kb(br)}`, target: '', pass: null })

  for (const [net, judged] of [[SLOW_4G, true], [SLOW_4G_DEVTOOLS, false]] as const) {
    const fcps: number[] = []
    const docs: number[] = []
    for (let i = 0; i < LOADS; i++) {
      const load = await loadPage(browser, url, { cpu: 4, net, collect: false })
      if (load.fcp !== null) fcps.push(load.fcp)
      docs.push(load.responseEnd)
    }
    ctx.log(`${label} first contentful paint, CPU 4x, ${net.name}: ${fcps.map((v) => fmt(v)).join(', ')} ms; document in: ${docs.map((v) => fmt(v)).join(', ')} ms`)
    if (fcps.length < LOADS) ctx.note(`${label}: ${LOADS - fcps.length} of ${LOADS} loads (${net.name}) reported no first-contentful-paint within 10 s`)
    const m = fcps.length ? median(fcps) : Number.NaN
    ctx.record({ metric: `${label}: first contentful paint, CPU 4x, ${net.name}, median of ${fcps.length}`, value: `${fmt(m)} ms`, target: judged ? `< ${FCP_MS} ms` : '', pass: judged ? m < FCP_MS : null })
  }
  const plain: number[] = []
  const plainDocs: number[] = []
  for (let i = 0; i < LOADS; i++) {
    const load = await loadPage(browser, url, { cpu: 1, net: null, collect: false })
    if (load.fcp !== null) plain.push(load.fcp)
    plainDocs.push(load.responseEnd)
  }
  ctx.log(`${label} first contentful paint, no throttling: ${plain.map((v) => fmt(v)).join(', ')} ms; document in: ${plainDocs.map((v) => fmt(v)).join(', ')} ms`)
  if (plain.length) ctx.record({ metric: `${label}: first contentful paint, no throttling, median of ${plain.length}`, value: `${fmt(median(plain))} ms`, target: '', pass: null })
}

/** (c): a 12-megapixel photo chosen on the driver's page, downscaled and posted; returns time and bytes per upload. */
async function measureUpload(ctx: BenchContext, browser: Browser, driverUrl: string, server: RunningServer, key: string, jobId: string): Promise<void> {
  // The camera's file, made once in Chromium (gradients and noise compress as a photo does, not to nothing).
  const maker = await browser.newPage()
  await maker.goto(`${new URL(driverUrl).origin}/healthz`)
  const base64 = await maker.evaluate(async () => {
    const canvas = document.createElement('canvas')
    canvas.width = 4000
    canvas.height = 3000
    const g = canvas.getContext('2d')!
    const sky = g.createLinearGradient(0, 0, 4000, 3000)
    sky.addColorStop(0, '#6c8fb0'); sky.addColorStop(0.5, '#c9b48a'); sky.addColorStop(1, '#3b4a2e')
    g.fillStyle = sky
    g.fillRect(0, 0, 4000, 3000)
    const img = g.getImageData(0, 0, 4000, 3000)
    let seed = 12345
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 16777216
    for (let i = 0; i < img.data.length; i += 4) {
      const n = (rand() - 0.5) * 48
      img.data[i] += n; img.data[i + 1] += n; img.data[i + 2] += n
    }
    g.putImageData(img, 0, 0)
    const blob = await new Promise<Blob>((resolve) => canvas.toBlob((b) => resolve(b!), 'image/jpeg', 0.9))
    const bytes = new Uint8Array(await blob.arrayBuffer())
    let s = ''
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
    return btoa(s)
  })
  await maker.context().close().catch(() => maker.close())
  const photo = Buffer.from(base64, 'base64')
  ctx.record({ metric: 'camera image made in Chromium: 4000x3000 JPEG', value: kb(photo.byteLength), target: '', pass: null })

  for (const [label, net] of [['CPU 4x and slow 4G (150 ms, 1.6 Mbps / 750 Kbps)', SLOW_4G], ['no throttling', null]] as const) {
    const total: number[] = [], fromChosen: number[] = [], downscale: number[] = [], upload: number[] = [], sent: number[] = [], stored: number[] = []
    for (let i = 0; i < UPLOADS; i++) {
      const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true })
      const page = await context.newPage()
      const cdp: CDPSession = await context.newCDPSession(page)
      try {
        await page.goto(driverUrl, { waitUntil: 'load' })
        // When the page itself sees the file chosen (its change event), on the wall clock this process reads too.
        let chosenAt = Number.NaN
        page.on('console', (m) => { const t = /^bench-chosen (\d+(\.\d+)?)$/.exec(m.text()); if (t) chosenAt = Number(t[1]) })
        await page.evaluate(() => document.getElementById('f-photo')!.addEventListener('change', () => console.log(`bench-chosen ${performance.timeOrigin + performance.now()}`), { capture: true }))
        await cdp.send('Network.enable')
        if (net) {
          await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: net.latency, downloadThroughput: net.downloadThroughput, uploadThroughput: net.uploadThroughput })
          await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 })
        }
        const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/photos'), { timeout: 120_000 })
        const started = wallMs()
        await page.getByLabel('Add photo', { exact: true }).setInputFiles({ name: 'IMG_0001.jpg', mimeType: 'image/jpeg', buffer: photo })
        const response = await answered
        const done = wallMs()
        if (response.status() !== 303) throw new Error(`the photo upload answered ${response.status()}`)
        const timing = response.request().timing()
        total.push(done - started)
        fromChosen.push(done - chosenAt)
        downscale.push(timing.startTime - chosenAt)
        upload.push(timing.responseStart)
        sent.push(Number((await response.request().allHeaders())['content-length'] ?? Number.NaN))
        const events = await call(server, key, 'GET', `/jobs/${jobId}/events?limit=100`, undefined, 200).catch(() => null)
        const photoEvent = (events?.data as { type: string; detail: { bytes?: number } }[] | undefined)?.filter((e) => e.type === 'job.photo_added').at(-1)
        stored.push(photoEvent?.detail.bytes ?? Number.NaN)
      } finally {
        await closeThrottled(context, cdp, net !== null)
      }
    }
    const list = (xs: number[]) => xs.map((t) => fmt(t)).join(', ')
    ctx.log(`photo upload (${label}): setInputFiles → answer ${list(total)} ms; chosen (change event) → answer ${list(fromChosen)} ms; of which downscale ${list(downscale)} ms and the POST ${list(upload)} ms; posted ${list(sent)} B; stored JPEG ${list(stored)} B`)
    ctx.record({ metric: `photo upload, file chosen (change event) → the server's answer, ${label}, median of ${UPLOADS}`, value: ms(median(fromChosen)), target: '', pass: null })
    ctx.record({ metric: `  of which the 1600 px downscale / the POST until its answer`, value: `${ms(median(downscale))} / ${ms(median(upload))}`, target: '', pass: null })
    ctx.record({ metric: `  setInputFiles (file handed over by the DevTools protocol) → the server's answer`, value: ms(median(total)), target: '', pass: null })
    ctx.record({ metric: `  bytes posted (multipart) / the stored JPEG, ${label}`, value: `${kb(median(sent))} / ${kb(median(stored))}`, target: '', pass: null })
  }
}

/** (d): many readers of one job's tracking stream, and status changes reaching them all. */
async function measureStreams(ctx: BenchContext, server: RunningServer, key: string, job: { id: string; trackingUrl: string }): Promise<void> {
  const token = new URL(job.trackingUrl).pathname.split('/')[2]!
  const streamUrl = `${server.baseUrl}/t/${token}/events`
  const statePosition = async () => {
    const res = await fetch(`${server.baseUrl}/t/${token}/state`)
    if (res.status !== 200) throw new Error(`/t/{token}/state answered ${res.status}`)
    return ((await res.json()) as { stream_position: number }).stream_position
  }
  const clientProc = await startServer(ctx.children, [process.execPath, join(import.meta.dir, 'board-clients.ts')], { cwd: ctx.root, env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '1024' } })
  const clients = clientsApi(clientProc.baseUrl)
  await Bun.sleep(1000)
  const rssBefore = await steadyRss(server.proc.pid)
  const c = await clients<{ connected: number; ms: number }>('POST', '/connect', { url: streamUrl, count: READERS, event: 'state' })
  ctx.log(`${c.connected} tracking streams open in ${fmt(c.ms)} ms`)
  await Bun.sleep(1000)
  const rssOpen = await steadyRss(server.proc.pid)
  ctx.record({ metric: `tracking streams open (one job's link, ${READERS} readers)`, value: `${c.connected} of ${READERS}`, target: String(READERS), pass: c.connected === READERS })
  if (rssBefore !== null && rssOpen !== null) {
    ctx.record({ metric: `server RSS: no tracking stream / ${READERS} open`, value: `${fmt(rssBefore, 1)} / ${fmt(rssOpen, 1)} MB`, target: '', pass: null })
    ctx.record({ metric: 'server RSS per tracking stream', value: `${fmt(((rssOpen - rssBefore) * 1024) / READERS, 1)} KB`, target: '', pass: null })
  }

  type Complete = { position: number; first: number; last: number; count: number; timeout?: boolean }
  /** Waits until every stream has the state of position `p`. */
  const allHave = async (p: number) => {
    const r = await clients<Complete>('GET', `/complete?after=${p - 1}&timeout=15000`)
    if (r.timeout || r.position !== p) throw new Error(`not every stream got position ${p}: ${JSON.stringify(r)}`)
    return r
  }
  // The job goes round its road: PATCH each status forward (timed), then reopen (not timed) and again.
  const road = ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed']
  let status = 'en_route'
  const last: number[] = [], first: number[] = []
  while (last.length < CHANGES) {
    const i = road.indexOf(status)
    if (i === road.length - 1) {
      await call(server, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Bench goes round again' }, 200)
      status = 'confirmed'
      await allHave(await statePosition())
      continue
    }
    const to = road[i + 1]!
    await call(server, key, 'PATCH', `/jobs/${job.id}`, { status: to }, 200)
    const answered = wallMs()
    status = to
    const p = await statePosition()
    const r = await allHave(p)
    last.push(r.last - answered)
    first.push(r.first - answered)
  }
  last.sort((a, b) => a - b)
  first.sort((a, b) => a - b)
  const rssAfter = await steadyRss(server.proc.pid)
  ctx.record({ metric: `PATCH status answered → LAST of ${READERS} streams has the new state, p50 / p99 / max (${CHANGES} changes)`, value: `${ms(pct(last, 50))} / ${ms(pct(last, 99))} / ${ms(last[last.length - 1]!)}`, target: '', pass: null })
  ctx.record({ metric: 'PATCH status answered → FIRST stream has it, p50 / p99', value: `${ms(pct(first, 50))} / ${ms(pct(first, 99))}`, target: '', pass: null })
  if (first[0]! < 0) ctx.note('a negative time: the first stream had the new state before the PATCH\'s answer reached the bench (the state is sent at commit, the answer after it)')
  if (rssAfter !== null) ctx.record({ metric: `server RSS after the ${CHANGES} changes, ${READERS} streams open`, value: `${fmt(rssAfter, 1)} MB`, target: '', pass: null })
  await clients('POST', '/close')
  await ctx.children.stop(clientProc.proc)
  ctx.note(`tracking streams: ${READERS} readers of ONE job's link (/t/{token}/events), so every status change reaches all of them; read by scripts/bench/board-clients.ts in its own process (Bun fetch streams), on this machine's 2 cores with the server`)
}

/** Runs (a) to (d) (see the top of this file). */
export async function measurePhonePages(ctx: BenchContext): Promise<void> {
  // Other work on this machine slows every browser figure; the load average says how much there was.
  const load = () => loadavg().map((v) => v.toFixed(2)).join(' / ')
  ctx.record({ metric: 'machine load average 1 / 5 / 15 min, before the phone pages', value: load(), target: '', pass: null })
  const db = join(ctx.tmp, 'phone.db')
  const key = await createBenchKey(ctx, db)
  const { server } = await startTowline(ctx, db, { env: { TOWLINE_TILE_URL: '' } })
  const job = await makeJob(ctx, db, server, key)
  const browser = await launchChromium()
  try {
    await measurePage(ctx, browser, 'driver page /d/{token} (en route)', job.driverUrl)
    await measurePage(ctx, browser, 'tracking page /t/{token} (en route, truck on the map, no tiles)', job.trackingUrl)
    await measureUpload(ctx, browser, job.driverUrl, server, key, job.id)
  } finally {
    await browser.close()
  }
  await measureStreams(ctx, server, key, job)
  await ctx.children.stop(server.proc)
  ctx.record({ metric: 'machine load average 1 / 5 / 15 min, after the phone pages', value: load(), target: '', pass: null })
}

/**
 * The page kit in Chromium, served by a binary compiled like dist/towline (the fixture server of
 * test/pages/kit-server.ts, built by scripts/build.ts's buildBinary), so the page runs on the
 * embedded, minified browser files: it loads with no console error and no policy violation,
 * asks no other origin than the tile server (whose tiles the test blocks: the markers and their
 * names still show), its form works with and without scripts, its live stream resumes after
 * a dropped connection, it fits 360 px, and axe finds nothing serious.
 *
 * The tile server is a loopback address no request reaches: Chromium's requests to any origin
 * but the server's are answered by the test (aborted) and recorded.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext } from 'playwright-core'
import { buildBinary } from '../../scripts/build'
import { startServer, type RunningServer } from '../binary'
import { launchChromium } from '../browser/chromium'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'
import { HOSTILE, KIT_EVENTS, type StreamConnection } from '../pages/kit-fixture'

const TILE_ORIGIN = 'http://127.0.0.2:9'
let dir: string
let bin: string
let browser: Browser
const servers: RunningServer[] = []

/** Starts the fixture binary at a public URL equal to where the browser will find it (its own form posts pass the same-origin guard). */
async function startKitServer(tileUrl: string): Promise<RunningServer> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  const server = await startServer(bin, { cwd: dir, env: { TOWLINE_TILE_URL: tileUrl }, args: ['--port', String(port), '--public-url', `http://127.0.0.1:${port}`, '--db', join(dir, `kit-${port}.db`)] })
  servers.push(server)
  return server
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'towline-kit-'))
  bin = join(dir, 'kit-server')
  await buildBinary({ entry: 'test/pages/kit-server.ts', outfile: bin })
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  for (const s of servers) await s.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** A page that records what a test must not see: console errors, page errors, policy violations, requests elsewhere (aborted). */
async function watchedPage(context: BrowserContext, server: RunningServer) {
  const page = await context.newPage()
  const problems: string[] = []
  const outside: string[] = []
  await page.addInitScript(() => {
    const w = window as unknown as Record<string, unknown[]>
    w.__violations = []
    w.__live = []
    w.__hello = []
    document.addEventListener('securitypolicyviolation', (e) => w.__violations!.push(`${e.violatedDirective} ${e.blockedURI}`))
    document.addEventListener('towline:live', (e) => w.__live!.push((e as CustomEvent).detail))
    document.addEventListener('towline:hello', (e) => w.__hello!.push((e as CustomEvent).detail))
  })
  await page.route((url) => !url.href.startsWith(server.url + '/'), (route) => {
    outside.push(route.request().url())
    return route.abort('blockedbyclient')
  })
  page.on('console', (m) => {
    // A blocked tile is the test's doing; anything else logged as an error is the page's fault.
    if (m.type() === 'error' && !m.location().url.startsWith(TILE_ORIGIN)) problems.push(`console: ${m.text()} (${m.location().url})`)
  })
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  const violations = () => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)
  return { page, problems, outside, violations }
}

describe('the fixture page with tiles from a server out of reach', () => {
  let server: RunningServer
  let context: BrowserContext
  beforeAll(async () => {
    server = await startKitServer(`${TILE_ORIGIN}/tiles/{z}/{x}/{y}.png`)
    context = await browser.newContext()
  })
  afterAll(() => context?.close())

  test('loads with no console error or policy violation, asks only the tile server elsewhere, and shows every marker with its name', async () => {
    const { page, problems, outside, violations } = await watchedPage(context, server)
    const assets: { url: string; status: number; cache: string | undefined; encoding: string | undefined }[] = []
    page.on('response', (r) => { if (r.url().includes('/assets/')) assets.push({ url: r.url(), status: r.status(), cache: r.headers()['cache-control'], encoding: r.headers()['content-encoding'] }) })
    await page.goto(`${server.url}/kit/page`)
    await page.locator('.leaflet-marker-icon').nth(1).waitFor({ timeout: 15_000 })
    expect(await page.locator('.map-label').allInnerTexts()).toEqual(['Truck 1', HOSTILE])
    // The marker images are the bundled ones, loaded.
    const icons = await page.locator('img.leaflet-marker-icon').evaluateAll((els) => els.map((e) => ({ src: new URL((e as HTMLImageElement).src).pathname.replace(/\.[a-z0-9]{8}\./, '.<hash>.'), loaded: (e as HTMLImageElement).naturalWidth > 0 })))
    expect(icons).toEqual([{ src: '/assets/marker-icon.<hash>.png', loaded: true }, { src: '/assets/marker-icon.<hash>.png', loaded: true }])
    // Nothing typed became markup, in the page or in Leaflet's labels.
    expect(await page.locator('[data-injected]').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    expect(await page.locator('h1 [data-echo]').innerText()).toBe(HOSTILE)
    // The tile layer asked for tiles (blocked here), and nothing else left this server.
    expect(outside.length).toBeGreaterThan(0)
    expect(outside.filter((u) => !/^http:\/\/127\.0\.0\.2:9\/tiles\/\d+\/\d+\/\d+\.png$/.test(u))).toEqual([])
    // Every built file came from /assets/, compressed where it is text, cached for good.
    expect(assets.length).toBeGreaterThanOrEqual(5)
    for (const a of assets) {
      expect({ url: a.url, status: a.status, cache: a.cache }).toEqual({ url: a.url, status: 200, cache: 'public, max-age=31536000, immutable' })
      if (!a.url.endsWith('.png')) expect(['br', 'gzip']).toContain(a.encoding!)
    }
    expect(await violations()).toEqual([])
    expect(problems).toEqual([])
  }, 30_000)

  test('the live stream resumes from the last event after the server ended it: every event once, in order, and the state re-read on each hello', async () => {
    const { page, problems } = await watchedPage(context, server)
    await page.goto(`${server.url}/kit/page`)
    await page.waitForFunction(() => (window as unknown as { __live: unknown[] }).__live.length >= 2, undefined, { timeout: 15_000 })
    await expect(page.locator('[data-live-status]').innerText()).resolves.toBe('Live')
    const seen = await page.evaluate(() => {
      const w = window as unknown as { __live: unknown[]; __hello: unknown[] }
      return { live: w.__live, hellos: w.__hello.length }
    })
    expect(seen).toEqual({ live: KIT_EVENTS.map((e) => ({ type: e.type, data: e.data, id: e.id })), hellos: 2 })
    const log = await (await fetch(`${server.url}/kit/stream-log`)).json() as StreamConnection[]
    // The earlier test's page had its own stream; this page's two connections are the last two.
    expect(log.slice(-2)).toEqual([{ lastEventIdHeader: null, lastEventIdQuery: null }, { lastEventIdHeader: '1', lastEventIdQuery: null }])
    expect(problems).toEqual([])
  }, 30_000)

  test('when the browser gives up on a stream (an error status), the wrapper opens a new one from the last event id: nothing missed, nothing twice', async () => {
    const { page, problems } = await watchedPage(context, server)
    await page.goto(`${server.url}/kit/page`)
    const got = await page.evaluate(async () => {
      const kit = await import((document.querySelector('script[src*="/assets/dashboard."]') as HTMLScriptElement).src)
      const events: unknown[] = []
      const states: string[] = []
      let hellos = 0
      const live = kit.openLive('/kit/flaky-stream', { on: { 'job.updated': (data: unknown, id: string) => events.push({ id, data }) }, onHello: () => hellos++, onState: (s: string) => states.push(s) })
      const end = Date.now() + 10_000
      while (events.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
      const last = live.lastEventId()
      live.close()
      return { events, hellos, last, states: [...new Set(states)] }
    })
    expect(got).toEqual({ events: KIT_EVENTS.map((e) => ({ id: e.id, data: e.data })), hellos: 2, last: '2', states: ['connecting', 'open', 'closed'] })
    const log = await (await fetch(`${server.url}/kit/flaky-stream-log`)).json() as StreamConnection[]
    expect(log).toEqual([
      { lastEventIdHeader: null, lastEventIdQuery: null },
      { lastEventIdHeader: '1', lastEventIdQuery: null },
      // The wrapper asks the stream's address whether it refuses for good (401, 404, 410): no, so it goes on.
      { lastEventIdHeader: null, lastEventIdQuery: null },
      { lastEventIdHeader: null, lastEventIdQuery: '1' },
    ])
    // Chromium reports the refused reconnection; that is what this test asked for.
    expect(problems.filter((p) => !p.includes('/kit/flaky-stream'))).toEqual([])
  }, 30_000)

  for (const scripts of [true, false]) {
    test(`the form ${scripts ? 'with' : 'without'} scripts: a refusal shows each message beside its field and keeps what was typed; a good one goes on`, async () => {
      const ctx = await browser.newContext({ javaScriptEnabled: scripts })
      try {
        const { page, problems, violations } = await watchedPage(ctx, server)
        await page.goto(`${server.url}/kit/page?name=Ann`)
        await page.getByLabel('Customer name', { exact: true }).fill('')
        await page.getByLabel('Phone', { exact: true }).fill('call me <maybe>')
        await page.getByLabel('Texts allowed', { exact: true }).check()
        await page.getByLabel('Unit', { exact: true }).selectOption('unit_kit_1')
        await page.getByLabel('Note', { exact: true }).fill('Blue Civic, keys in the tray')
        const [refused] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/kit/form')), page.getByRole('button', { name: 'Create job' }).click()])
        expect(refused.status()).toBe(422)
        await page.waitForLoadState()
        await expect(page.locator('form [role="alert"]').innerText()).resolves.toBe('Some fields need attention; each says why beside it.')
        const name = page.getByLabel('Customer name', { exact: true })
        const phone = page.getByLabel('Phone', { exact: true })
        expect(await name.getAttribute('aria-invalid')).toBe('true')
        expect(await phone.getAttribute('aria-invalid')).toBe('true')
        // The message is the field's description, as a screen reader announces it.
        expect(await page.locator(`#${await phone.getAttribute('aria-describedby').then((ids) => ids!.split(' ').pop())}`).innerText()).toBe('Enter a phone number like +1 503 555 0100.')
        expect({ phone: await phone.inputValue(), consent: await page.getByLabel('Texts allowed', { exact: true }).isChecked(), unit: await page.getByLabel('Unit', { exact: true }).inputValue(), note: await page.getByLabel('Note', { exact: true }).inputValue() })
          .toEqual({ phone: 'call me <maybe>', consent: true, unit: 'unit_kit_1', note: 'Blue Civic, keys in the tray' })
        await name.fill('Ann Lee')
        await phone.fill('+1 503 555 0100')
        await Promise.all([page.waitForURL(`${server.url}/kit/page?saved=1`), page.getByRole('button', { name: 'Create job' }).click()])
        await expect(page.locator('.notice').innerText()).resolves.toBe('Job created.')
        if (scripts) expect(await violations()).toEqual([])
        // Chromium logs a document answered 422 as a failed load: the refusal's status, as meant.
        expect(problems.filter((p) => !p.includes('status of 422') || !p.includes('/kit/form'))).toEqual([])
      } finally {
        await ctx.close()
      }
    }, 30_000)
  }

  test('a form sent by script: a JSON refusal is shown beside its fields and in the alert, what was typed stays, one submission at a time; no connection is said plainly', async () => {
    const { page, problems } = await watchedPage(context, server)
    await page.route(`${server.url}/kit/offline`, (route) => route.abort('internetdisconnected'))
    await page.goto(`${server.url}/kit/page?name=Ann`)
    const result = await page.evaluate(async () => {
      // The built dashboard bundle, as the page loaded it: its exports are the shared helpers.
      const kit = await import((document.querySelector('script[src*="/assets/dashboard."]') as HTMLScriptElement).src)
      const original = document.querySelector('form[action="/kit/form"]') as HTMLFormElement
      const form = original.cloneNode(true) as HTMLFormElement
      delete form.dataset.enhanced
      form.setAttribute('action', '/kit/form.json')
      original.replaceWith(form)
      let sends = 0
      let release!: () => void
      const held = new Promise<void>((resolve) => { release = resolve })
      kit.enhanceForm(form, {
        submit: async (data: FormData) => {
          sends++
          await held
          await kit.fetchJson('/kit/form.json', { body: Object.fromEntries(data) })
        },
      })
      ;(form.elements.namedItem('customer.name') as HTMLInputElement).value = ''
      ;(form.elements.namedItem('customer.phone') as HTMLInputElement).value = 'call me <maybe>'
      const button = form.querySelector('button[type="submit"]') as HTMLButtonElement
      button.click()
      button.click()
      const busy = form.getAttribute('aria-busy')
      release()
      while (form.getAttribute('aria-busy') === 'true') await new Promise((r) => setTimeout(r, 10))
      const field = (name: string) => {
        const el = form.elements.namedItem(name) as HTMLInputElement
        const message = el.getAttribute('aria-describedby')?.split(' ').map((id) => document.getElementById(id)?.textContent).filter(Boolean).join(' | ')
        return { value: el.value, invalid: el.getAttribute('aria-invalid'), message }
      }
      const refused = { sends, busy, alert: form.querySelector('[role="alert"]')!.textContent, name: field('customer.name'), phone: field('customer.phone'), focused: (document.activeElement as HTMLInputElement).name }
      const offline = await kit.fetchJson('/kit/offline', { body: {} }).then(() => null, (e: { status: number; code: string; message: string }) => ({ status: e.status, code: e.code, message: e.message }))
      return { refused, offline }
    })
    expect(result.refused).toEqual({
      sends: 1,
      busy: 'true',
      alert: 'Some fields need attention; each says why beside it.',
      name: { value: '', invalid: 'true', message: 'Enter the customer\'s name.' },
      phone: { value: 'call me <maybe>', invalid: 'true', message: 'With the country code, e.g. +1 503 555 0100. | Enter a phone number like +1 503 555 0100.' },
      focused: 'customer.name',
    })
    expect(result.offline).toEqual({ status: 0, code: 'network_error', message: 'Could not reach the server. Check the connection and try again.' })
    // The refusal's 422 and the cut connection are what this test asked for.
    expect(problems.filter((p) => !/status of 422 .*\/kit\/form\.json|\/kit\/offline/.test(p))).toEqual([])
  }, 30_000)

  test('axe finds no serious or critical problem: the page, the page after a refusal, and the plain shell', async () => {
    const { page } = await watchedPage(context, server)
    await page.goto(`${server.url}/kit/page`)
    await page.locator('.leaflet-marker-icon').first().waitFor()
    await expectAccessible(page)
    await page.getByLabel('Customer name', { exact: true }).fill('')
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/kit/form')), page.getByRole('button', { name: 'Create job' }).click()])
    await page.waitForLoadState()
    await expectAccessible(page)
    await page.goto(`${server.url}/kit/plain`)
    await expectAccessible(page)
  }, 30_000)

  test('at 360 px wide nothing but the board\'s column scroller runs past the screen, that one scrolls, and controls are at least 44 px tall', async () => {
    const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 })
    try {
      const { page, problems } = await watchedPage(phone, server)
      await page.goto(`${server.url}/kit/page`)
      await page.locator('.leaflet-marker-icon').first().waitFor()
      await expectNoHorizontalOverflow(page, { scrollers: ['.board-columns'] })
      const board = await page.locator('.board-columns').evaluate((el) => ({ scrolls: el.scrollWidth > el.clientWidth, fits: el.getBoundingClientRect().right <= document.documentElement.clientWidth }))
      expect(board).toEqual({ scrolls: true, fits: true })
      const small = await page.locator('main button, main input, main select, main textarea, header button, nav a').evaluateAll((els) =>
        els.filter((e) => e.getBoundingClientRect().height < 44 && (e as HTMLInputElement).type !== 'checkbox').map((e) => `${e.tagName} ${e.getAttribute('name') ?? e.textContent}`))
      expect(small).toEqual([])
      await expectAccessible(page)
      await page.goto(`${server.url}/kit/plain`)
      await expectNoHorizontalOverflow(page)
      expect(problems).toEqual([])
    } finally {
      await phone.close()
    }
  }, 30_000)
})

test('with TOWLINE_TILE_URL empty the map asks nothing of anyone, and still shows every marker and name on grey', async () => {
  const server = await startKitServer('')
  const context = await browser.newContext()
  try {
    const { page, problems, outside, violations } = await watchedPage(context, server)
    await page.goto(`${server.url}/kit/page`)
    await page.locator('.leaflet-marker-icon').nth(1).waitFor({ timeout: 15_000 })
    expect(await page.locator('.map-label').allInnerTexts()).toEqual(['Truck 1', HOSTILE])
    expect(await page.locator('.leaflet-tile').count()).toBe(0)
    expect(outside).toEqual([])
    expect(await violations()).toEqual([])
    expect(problems).toEqual([])
  } finally {
    await context.close()
  }
}, 30_000)

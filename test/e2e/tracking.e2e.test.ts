/**
 * The customer's tracking page as a stranded customer uses it: Chromium at a phone's size
 * (390x844) against the compiled binary, the link taken from the text the customer got (the
 * Twilio stand-in's copy), checked to be the API's tracking_url.
 * Status steps, live updates without reload, Share my location (geolocation granted and
 * emulated), Message + Send, the rating after completion, a link replaced while open, axe,
 * 360 px, and the bytes loaded before the map. Every action is proved by the API's timeline.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { apiCaller, cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'
import { launchChromium } from '../browser/chromium'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'
import { startTwilioStandin, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../twilio-standin'

const twilio = startTwilioStandin()
let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let key: string
let unit: { id: string; device_id: string }
const api = apiCaller(() => server, () => key)
const PHONE = { width: 390, height: 844 }
const SERVER_ENV = { TOWLINE_TILE_URL: '', TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: TWILIO_SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM, TOWLINE_TWILIO_API_BASE: twilio.apiBase }

beforeAll(async () => {
  folder = freshFolder()
  // No tiles: the map is grey, and no request leaves this machine.
  server = await startServer(folder.bin, { cwd: folder.dir, env: SERVER_ENV })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  const r = cli(folder.bin, ['units', 'add', '--name', 'Flatbed 9', '--driver-phone', '+15035559876', '--json'], { cwd: folder.dir })
  unit = JSON.parse(r.stdout)
  browser = await launchChromium()
}, 30_000)
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  twilio.stop()
  folder?.cleanup()
})

let phones = 0
/**
 * A job made through the API for a customer who agreed to texts, and its tracking link as the
 * customer gets it: read from the request-received text the Twilio stand-in received, and the
 * same as GET /jobs/{id}'s tracking_url.
 */
async function newJob() {
  const phone = `+1503555${String(2000 + ++phones)}`
  const made = await api('POST', '/jobs', { customer: { name: 'Ann Lee', phone, sms_consent: true }, pickup: { location: 'I-5 N at exit 299B' }, destination: "Joe's Garage", vehicle: { make: 'Honda', model: 'Civic' } })
  expect(made.status).toBe(201)
  let texted: string | undefined
  for (const end = Date.now() + 10_000; !texted && Date.now() < end; await Bun.sleep(50)) {
    texted = twilio.messages.filter((m) => m.to === phone).at(-1)?.body.match(/https?:\/\/\S+\/t\/[0-9A-Za-z]{24}/)?.[0]
  }
  if (!texted) throw new Error(`no text with a tracking link reached ${phone}`)
  const job = (await api('GET', `/jobs/${made.body.id}`)).body
  expect(texted).toBe(job.tracking_url)
  expect(texted).toStartWith(`${server.url.replace('127.0.0.1', 'localhost')}/t/`)
  return { id: job.id as string, tracking_url: texted }
}
async function phonePage(opts: { geolocation?: boolean; width?: number } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { ...PHONE, width: opts.width ?? PHONE.width }, isMobile: true, hasTouch: true,
    ...(opts.geolocation ? { permissions: ['geolocation'], geolocation: { latitude: 45.5231, longitude: -122.6765, accuracy: 18 } } : {}),
  })
  return { context, page: await context.newPage() }
}
const current = (page: Page) => page.locator('[aria-current="step"]')
const lastEvent = async (jobId: string) => (await api('GET', `/jobs/${jobId}/events?limit=100`)).body.data.at(-1)
const ping = (lat: number, lng: number) => fetch(`${server.url}/osmand?id=${unit.device_id}&lat=${lat}&lon=${lng}&timestamp=${Math.floor(Date.now() / 1000)}`).then((r) => expect(r.status).toBe(200))

describe('the tracking page in Chromium, at a phone\'s size', () => {
  test('status steps, live updates without reload (the truck on the map only while coming), axe, 360 px, and under 150 KB before the map', async () => {
    const job = await newJob()
    const { context, page } = await phonePage()
    // What the browser loads, from its own network log: bytes on the wire (headers included) and bodies as decoded.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    let wire = 0
    let decoded = 0
    const loaded: string[] = []
    cdp.on('Network.responseReceived', (e: any) => { loaded.push(new URL(e.response.url).pathname) })
    cdp.on('Network.dataReceived', (e: any) => { decoded += e.dataLength })
    cdp.on('Network.loadingFinished', (e: any) => { wire += e.encodedDataLength })
    await page.goto(job.tracking_url)
    await page.waitForLoadState('networkidle')
    await expect(current(page).innerText()).resolves.toBe('Confirmed')
    expect(await page.locator('ol.steps > li').allInnerTexts()).toEqual(['Pending', 'Confirmed', 'Dispatched', 'En route', 'On scene', 'Towing', 'At destination', 'Completed'])
    // Before the map: the page (its stylesheet inlined, applied under the page's CSP) and its script; no Leaflet yet.
    expect(loaded.some((p) => /\/assets\/map\./.test(p))).toBe(false)
    expect(loaded.filter((p) => p.startsWith('/assets/')).map((p) => p.replace(/\.[0-9a-z]+\.(js|css)$/, '.$1')).sort()).toEqual(['/assets/tracking.js'])
    expect(await page.evaluate(() => document.querySelector<HTMLStyleElement>('head > style')?.sheet?.cssRules.length ?? 0)).toBeGreaterThan(50)
    expect(decoded).toBeGreaterThan(10_000)
    expect(wire).toBeLessThan(150 * 1024)
    expect(decoded).toBeLessThan(150 * 1024)
    console.log(`tracking page weight before the map: ${wire} bytes on the wire, ${decoded} bytes decoded (${loaded.join(', ')})`)
    await expectAccessible(page)

    await page.evaluate(() => { (window as any).sameDocument = true })
    await page.locator('#live-status[data-state="open"]').waitFor()
    await ping(45.51, -122.66)
    expect((await api('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    await page.locator('[aria-current="step"]', { hasText: 'Dispatched' }).waitFor({ timeout: 5000 })
    await page.locator('#truck-map .leaflet-marker-icon').waitFor({ timeout: 5000 })
    expect(await page.locator('#truck-map').isVisible()).toBe(true)
    expect(await page.getByText('Flatbed 9', { exact: true }).first().isVisible()).toBe(true)
    expect((await api('PATCH', `/jobs/${job.id}`, { status: 'en_route' })).status).toBe(200)
    await page.locator('[aria-current="step"]', { hasText: 'En route' }).waitFor({ timeout: 5000 })
    // The truck moves (no job event): the open page reads the state again within 15 s and moves its marker.
    await ping(45.56, -122.60)
    await page.locator('#truck-map [data-map][data-truck-at="45.56,-122.6"]').waitFor({ timeout: 20_000 })
    // The list beside the map (what a screen reader reads) moved with the marker.
    expect(await page.locator('#truck-map .map-places [data-place-id="truck"]').innerText()).toMatch(/^Flatbed 9 \(45\.56000, -122\.60000, at .+\)$/)
    // A note for the customer and a new expected time are said, not only drawn.
    expect((await api('POST', `/jobs/${job.id}/notes`, { text: 'Driver is 10 minutes away', customer_visible: true })).status).toBe(201)
    await page.locator('#live-status').filter({ hasText: 'New note: Driver is 10 minutes away' }).waitFor({ timeout: 5000 })
    expect((await api('PATCH', `/jobs/${job.id}`, { eta_at: new Date(Date.now() + 20 * 60_000).toISOString() })).status).toBe(200)
    await page.locator('#live-status').filter({ hasText: 'Expected:' }).waitFor({ timeout: 5000 })
    await expectAccessible(page)
    expect((await api('PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    await page.locator('[aria-current="step"]', { hasText: 'On scene' }).waitFor({ timeout: 5000 })
    await page.locator('#truck-map').waitFor({ state: 'hidden', timeout: 5000 })
    expect((await api('PATCH', `/jobs/${job.id}`, { status: 'towing' })).status).toBe(200)
    await page.getByText("Your vehicle is on the truck, going to Joe's Garage.").waitFor({ timeout: 5000 })
    expect(await page.evaluate(() => (window as any).sameDocument)).toBe(true)
    await expectAccessible(page)

    await page.setViewportSize({ width: 360, height: 740 })
    await expectNoHorizontalOverflow(page)
    await context.close()
  }, 60_000)

  test('at 360 px the truck, the expected time and a long destination each take a row of their own: nothing runs off the side', async () => {
    const job = await newJob()
    expect((await api('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    expect((await api('PATCH', `/jobs/${job.id}`, { status: 'en_route', eta_at: new Date(Date.now() + 25 * 60_000).toISOString(), destination: "Joe's Garage & Collision Center, 12345 Southeast Foster Road, Portland, Oregon 97266" })).status).toBe(200)
    const { context, page } = await phonePage({ width: 360 })
    await page.goto(job.tracking_url)
    const expected = page.locator('.track-facts dd').nth(1)
    await expected.waitFor()
    await expectNoHorizontalOverflow(page)
    // The time reads on one line, not a character a line in a sliver.
    const box = (await expected.boundingBox())!
    expect(box.width).toBeGreaterThan(100)
    expect(box.height).toBeLessThan(60)
    await context.close()
  }, 30_000)

  test("the expected time is the company's, with its zone, on a phone in another zone and without JavaScript; the hour a fall-back day has twice reads apart; a cleared time is said", async () => {
    const zone = (z: string) => expect(cli(folder.bin, ['accounts', 'update', '--time-zone', z], { cwd: folder.dir }).code).toBe(0)
    zone('America/Los_Angeles')
    try {
      const job = await newJob()
      expect((await api('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
      // 08:30Z and 09:30Z on 2026-11-01 are both 01:30 in Los Angeles: first in daylight time, then in standard time.
      expect((await api('PATCH', `/jobs/${job.id}`, { eta_at: '2026-11-01T08:30:00Z' })).status).toBe(200)
      const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, timezoneId: 'Asia/Tokyo', locale: 'ja-JP' })
      const page = await context.newPage()
      await page.goto(job.tracking_url)
      const expected = page.locator('.track-facts div', { has: page.locator('dt', { hasText: 'Expected' }) }).locator('dd')
      expect(await expected.textContent()).toBe('2026-11-01 01:30 PDT')
      await page.locator('#live-status').filter({ hasText: 'updates itself' }).waitFor()
      expect((await api('PATCH', `/jobs/${job.id}`, { eta_at: '2026-11-01T09:30:00Z' })).status).toBe(200)
      await page.locator('.track-facts dd', { hasText: '2026-11-01 01:30 PST' }).waitFor()
      await page.locator('#live-status', { hasText: 'Expected: 2026-11-01 01:30 PST.' }).waitFor()
      expect((await api('PATCH', `/jobs/${job.id}`, { eta_at: null })).status).toBe(200)
      await page.locator('#live-status', { hasText: 'No expected time for now.' }).waitFor()
      expect(await expected.count()).toBe(0)
      await context.close()
      // Without a script (or before it runs on a slow phone), the same words.
      expect((await api('PATCH', `/jobs/${job.id}`, { eta_at: '2026-11-01T08:30:00Z' })).status).toBe(200)
      const plain = await browser.newContext({ viewport: PHONE, javaScriptEnabled: false, timezoneId: 'Pacific/Auckland' })
      const noScript = await plain.newPage()
      await noScript.goto(job.tracking_url)
      expect(await noScript.locator('.track-facts dd time').textContent()).toBe('2026-11-01 01:30 PDT')
      await plain.close()
    } finally {
      zone('UTC')
    }
  }, 30_000)

  test('Share my location (geolocation granted) and Message + Send land on the timeline with actor customer', async () => {
    const job = await newJob()
    const { context, page } = await phonePage({ geolocation: true })
    await page.goto(job.tracking_url)
    await page.getByRole('button', { name: 'Share my location' }).click()
    await page.waitForURL(/\?done=location$/)
    await page.getByText('Your location was sent.').waitFor()
    expect(await lastEvent(job.id)).toMatchObject({ type: 'job.customer_located', actor: 'customer', detail: { lat: 45.5231, lng: -122.6765, accuracy_m: 18 } })

    await page.getByLabel('Message', { exact: true }).fill('I am by the blue gate')
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    await page.waitForURL(/\?done=message$/)
    expect(await lastEvent(job.id)).toMatchObject({ type: 'job.customer_message', actor: 'customer', detail: { text: 'I am by the blue gate', via: 'tracking_page' } })

    // A blank message is refused beside the field.
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    await page.locator('#f-message-error', { hasText: 'Write a message first.' }).waitFor()
    await expectAccessible(page)

    // The box holds as many characters as the service takes (1,000), emoji included: the
    // browser's maxlength counts an emoji twice, the page makes room for it.
    const message = page.getByLabel('Message', { exact: true })
    await message.fill('')
    await message.focus()
    await page.keyboard.insertText('😀'.repeat(700))
    await page.keyboard.insertText('🚗'.repeat(400))
    expect([...(await message.inputValue())].length).toBe(1000)
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    await page.waitForURL(/\?done=message$/)
    expect([...(await lastEvent(job.id)).detail.text].length).toBe(1000)
    // Plain letters stop at 1,000 as before.
    await page.getByLabel('Message', { exact: true }).focus()
    await page.keyboard.insertText('a'.repeat(1005))
    expect((await page.getByLabel('Message', { exact: true }).inputValue()).length).toBe(1000)
    await context.close()
  }, 60_000)

  test('the rating appears once the job is completed (live), is sent once, and the job holds it', async () => {
    const job = await newJob()
    expect((await api('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    const { context, page } = await phonePage()
    await page.goto(job.tracking_url)
    await page.locator('#live-status[data-state="open"]').waitFor()
    expect(await page.locator('legend', { hasText: 'Rating' }).count()).toBe(0)
    expect((await api('PATCH', `/jobs/${job.id}`, { status: 'completed' })).status).toBe(200)
    const group = page.getByRole('group', { name: 'Rating' })
    await group.waitFor({ timeout: 5000 })
    expect(await group.getByRole('radio').count()).toBe(5)
    // Each radio is named by its value alone (the legend says what it rates), so "5" finds one radio, not every "... of 5".
    for (const n of ['1', '2', '3', '4', '5']) expect(await page.getByRole('radio', { name: n }).count()).toBe(1)
    await group.getByRole('radio', { name: '4', exact: true }).check()
    await page.getByLabel('Comment', { exact: true }).fill('Quick and kind')
    await expectAccessible(page)
    await page.getByRole('button', { name: 'Send rating' }).click()
    await page.waitForURL(/\?done=rating$/)
    await page.getByText('You rated this job 4 out of 5.').waitFor()
    const rated = (await api('GET', `/jobs/${job.id}`)).body
    expect({ rating: rated.rating, comment: rated.rating_comment }).toEqual({ rating: 4, comment: 'Quick and kind' })
    expect(await lastEvent(job.id)).toMatchObject({ type: 'job.rating_received', actor: 'customer', detail: { rating: 4 } })
    await context.close()
  }, 60_000)

  test('a link replaced while the server was down (a restart): when it is back the page learns it (its stream is refused with 410) and says so', async () => {
    const job = await newJob()
    const { context, page } = await phonePage()
    await page.goto(job.tracking_url)
    await page.locator('#live-status[data-state="open"]').waitFor()
    const port = new URL(server.url).port
    await server.stop()
    const r = cli(folder.bin, ['jobs', 'new-tracking-link', job.id], { cwd: folder.dir })
    expect(r.code).toBe(0)
    server = await startServer(folder.bin, { cwd: folder.dir, args: ['--port', port], env: SERVER_ENV })
    await page.getByRole('alert').filter({ hasText: 'This tracking link was replaced.' }).waitFor({ timeout: 20_000 })
    expect(await page.getByRole('button', { name: 'Send', exact: true }).count()).toBe(0)
    await context.close()
  }, 60_000)

  test('a link replaced while the page is open: the page says so, without reload', async () => {
    const job = await newJob()
    const { context, page } = await phonePage()
    await page.goto(job.tracking_url)
    await page.locator('#live-status[data-state="open"]').waitFor()
    const r = cli(folder.bin, ['jobs', 'new-tracking-link', job.id], { cwd: folder.dir })
    expect(r.code).toBe(0)
    await page.getByRole('alert').filter({ hasText: 'This tracking link was replaced.' }).waitFor({ timeout: 8000 })
    expect(await page.getByRole('button', { name: 'Send', exact: true }).isVisible()).toBe(false)
    expect((await fetch(job.tracking_url)).status).toBe(410)
    await context.close()
  }, 60_000)
})

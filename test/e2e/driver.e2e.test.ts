/**
 * The driver's page as a driver uses it, in Chromium at a phone's size against the compiled
 * binary: the link taken from the text the Twilio stand-in received on assign; Acknowledge and
 * the moves by their buttons, proved by the API's timeline (actor driver, the unit's id); a real
 * large JPEG made in the browser, downscaled before upload; a drawn signature; the phone's
 * position (geolocation granted and emulated) reaching GET /units; the dispatcher's change
 * shown without a reload; the link replayed after reassignment refused with nothing written.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { cli, createKeyWithCli, freePort, freshFolder, startServer, apiCaller, type RunningServer } from '../binary'
import { launchChromium } from '../browser/chromium'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'
import { startTwilioStandin, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../twilio-standin'

const twilio = startTwilioStandin()
let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let key: string
let base: string
const PHONE = { width: 390, height: 844 }
const WHERE = { latitude: 45.5231, longitude: -122.6765 }

beforeAll(async () => {
  folder = freshFolder()
  const port = freePort()
  base = `http://localhost:${port}`
  server = await startServer(folder.bin, {
    cwd: folder.dir, args: ['--port', String(port)],
    env: { TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: TWILIO_SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM, TOWLINE_TWILIO_API_BASE: twilio.apiBase, TOWLINE_PUBLIC_URL: base },
  })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  browser = await launchChromium()
}, 30_000)
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  twilio.stop()
  folder?.cleanup()
})

const api = apiCaller(() => server, () => key)
const events = async (id: string) => (await api('GET', `/jobs/${id}/events?limit=100`)).body.data as any[]
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not met in time`)
    await Bun.sleep(50)
  }
}
/** A unit with a driver's phone, made with the CLI. */
function addUnit(name: string, phone: string): string {
  return cli(folder.bin, ['units', 'add', '--name', name, '--driver-phone', phone], { cwd: folder.dir }).stdout.trim().match(/^unit_[0-9A-Za-z]+/)![0]
}
/**
 * A job made through the API for a new unit "Truck N" (driver phone 503-555-01NN) and assigned to
 * it: its id, the unit and the job link texted to that driver.
 */
async function jobTextedToDriver(truck: number, job: Record<string, unknown>): Promise<{ id: string; unit: string; link: string }> {
  const digits = `50355501${String(truck).padStart(2, '0')}`
  const unit = addUnit(`Truck ${truck}`, `${digits.slice(0, 3)}-${digits.slice(3, 6)}-${digits.slice(6)}`)
  const id = (await api('POST', '/jobs', job)).body.id as string
  expect((await api('POST', `/jobs/${id}/assign`, { unit_id: unit })).status).toBe(200)
  return { id, unit, link: await linkTextedTo(`+1${digits}`) }
}
/** The driver link in the newest text the stand-in got for this phone (E.164), as the driver receives it. */
async function linkTextedTo(phone: string): Promise<string> {
  let link: string | undefined
  await until(() => {
    const texts = twilio.messages.filter((m) => m.to === phone)
    link = texts.at(-1)?.body.match(/https?:\/\/\S+\/d\/[0-9A-Za-z]{24}/)?.[0]
    return link !== undefined
  }, `the driver text to ${phone}`)
  return link!
}
/** Width and height of a baseline or progressive JPEG, read from its first SOF marker. */
function jpegSize(b: Uint8Array): { width: number; height: number } {
  let i = 2
  while (i < b.length) {
    if (b[i] !== 0xff) throw new Error('not a JPEG segment')
    const marker = b[i + 1]!
    const len = (b[i + 2]! << 8) | b[i + 3]!
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) return { height: (b[i + 5]! << 8) | b[i + 6]!, width: (b[i + 7]! << 8) | b[i + 8]! }
    i += 2 + len
  }
  throw new Error('no SOF marker')
}
async function phonePage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, geolocation: WHERE, permissions: ['geolocation'] })
  await context.grantPermissions(['geolocation'], { origin: base })
  return { context, page: await context.newPage() }
}
/** Waits until the page's live stream is open (its status line says Live). */
const live = (page: Page, timeout = 30_000) => page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'), undefined, { timeout })
/** Draws a signature on the pad with the pointer, left to right in a wave. */
async function drawSignature(page: Page) {
  const pad = page.getByRole('img', { name: 'Signature' })
  await pad.scrollIntoViewIfNeeded()
  const box = (await pad.boundingBox())!
  await page.mouse.move(box.x + 20, box.y + box.height / 2)
  await page.mouse.down()
  for (let i = 1; i <= 20; i++) await page.mouse.move(box.x + 20 + i * (box.width - 40) / 20, box.y + box.height / 2 + Math.sin(i) * 30)
  await page.mouse.up()
}
/** Presses a button and waits for the page it leads back to. */
async function press(page: Page, name: string, done: string) {
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name, exact: true }).click()])
  expect(page.url()).toEndWith(`?done=${done}`)
}

describe('the driver page in Chromium', () => {
  test('a driver works the job from the texted link: Acknowledge, the moves, a photo, a signature, the position; the dispatcher\'s change shows live', async () => {
    const { id, unit, link } = await jobTextedToDriver(9, { customer: { name: 'Paige Turner', phone: '503-555-0142', sms_consent: true }, pickup: { location: 'Hwy 26 mile 40' }, destination: 'Main St Garage', vehicle: { make: 'Subaru', plate: 'PG1' } })
    expect(link.startsWith(`${base}/d/`)).toBe(true)

    const { context, page } = await phonePage()
    await page.goto(link)
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Job for Truck 9')
    expect(await page.getByRole('link', { name: 'Call +15035550142' }).getAttribute('href')).toBe('tel:+15035550142')
    await expectAccessible(page)
    await expectNoHorizontalOverflow(page)
    await page.setViewportSize({ width: 360, height: 740 })
    await expectNoHorizontalOverflow(page)
    await page.setViewportSize(PHONE)

    // The phone's position, shared while the job is active, is the unit's.
    await until(async () => {
      const u = (await api('GET', '/units')).body.data.find((x: any) => x.id === unit)
      return u?.position?.lat === WHERE.latitude && u.position.lng === WHERE.longitude
    }, 'the phone\'s position on GET /units')

    const byDriver = async (type: string, to?: string) => expect((await events(id)).at(-1)).toMatchObject({ type, actor: 'driver', detail: { unit_id: unit }, ...(to ? { to } : {}) })
    await press(page, 'Acknowledge', 'acknowledged')
    await byDriver('job.driver_acknowledged')
    expect(await page.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0)
    await press(page, 'Move to En route', 'moved')
    await byDriver('job.status_changed', 'en_route')
    await press(page, 'Move to On scene', 'moved')
    await byDriver('job.status_changed', 'on_scene')
    expect(await page.getByRole('button', { name: 'GOA', exact: true }).count()).toBe(1)

    // A 12-megapixel JPEG drawn in the browser, chosen in the file input: uploaded at once, downscaled.
    const big = await page.evaluate(async () => {
      const c = document.createElement('canvas')
      c.width = 4000
      c.height = 3000
      const g = c.getContext('2d')!
      const grad = g.createLinearGradient(0, 0, 4000, 3000)
      grad.addColorStop(0, '#c33')
      grad.addColorStop(1, '#33c')
      g.fillStyle = grad
      g.fillRect(0, 0, 4000, 3000)
      for (let i = 0; i < 400; i++) {
        g.fillStyle = `hsl(${i * 37 % 360} 70% 50%)`
        g.fillRect((i * 997) % 3900, (i * 613) % 2900, 100, 100)
      }
      const blob = await new Promise<Blob>((resolve) => c.toBlob((b) => resolve(b!), 'image/jpeg', 0.92))
      const bytes = new Uint8Array(await blob.arrayBuffer())
      let s = ''
      for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
      return btoa(s)
    })
    const original = Buffer.from(big, 'base64')
    expect(jpegSize(original)).toEqual({ width: 4000, height: 3000 })
    // Choosing the file is all it takes: the no-script form's button is not shown beside it.
    expect(await page.getByRole('button', { name: 'Upload photo' }).isVisible()).toBe(false)
    // A file the page cannot shrink and over the limit (a long video, say) is refused beside the field, nothing sent.
    const before = (await events(id)).length
    await page.getByLabel('Add photo', { exact: true }).setInputFiles({ name: 'clip.jpg', mimeType: 'image/jpeg', buffer: Buffer.alloc(11 * 1024 * 1024, 7) })
    await page.locator('#f-photo-error').filter({ hasText: 'is larger than 10 MB' }).waitFor({ timeout: 10_000 })
    expect(await page.getByLabel('Add photo', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    expect((await events(id)).length).toBe(before)
    await Promise.all([page.waitForURL(/\?done=photo$/), page.getByLabel('Add photo', { exact: true }).setInputFiles({ name: 'IMG_0001.jpg', mimeType: 'image/jpeg', buffer: original })])
    const photo = (await events(id)).at(-1)
    expect(photo).toMatchObject({ type: 'job.photo_added', actor: 'driver', detail: { unit_id: unit, content_type: 'image/jpeg', by: 'driver' } })
    const stored = new Uint8Array(await (await context.request.get(`${link}/photos/${photo.detail.photo_id}`)).body())
    expect(stored.length).toBe(photo.detail.bytes)
    expect(jpegSize(stored)).toEqual({ width: 1600, height: 1200 })
    // Its time is said in the phone's zone, not UTC.
    expect(await page.locator('#photo-list img').first().getAttribute('alt')).toMatch(/^Photo added \d{1,2}:\d{2}( ?[AP]M)?$/)

    // A signature drawn with the pointer, and the signer's name.
    // pages.md's <canvas aria-label="Signature">: the one element of the page labelled so.
    expect(await page.getByLabel('Signature', { exact: true }).count()).toBe(1)
    await drawSignature(page)
    await page.getByLabel('Signer name', { exact: true }).fill('Paige Turner')
    await press(page, 'Save signature', 'signature')
    const sig = (await events(id)).at(-1)
    expect(sig).toMatchObject({ type: 'job.signature_captured', actor: 'driver', detail: { unit_id: unit, signer_name: 'Paige Turner' } })
    const png = new Uint8Array(await (await context.request.get(`${link}/signatures/${sig.detail.signature_id}`)).body())
    expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG')
    expect(png.length).toBeGreaterThan(500)

    // The dispatcher moves the job on: the open page shows it without a reload.
    await live(page)
    expect((await api('PATCH', `/jobs/${id}`, { status: 'towing' })).status).toBe(200)
    await page.waitForFunction(() => document.getElementById('driver-status')?.textContent === 'Towing')
    expect(await page.getByRole('button', { name: 'Move to At destination' }).count()).toBe(1)
    // The move is said to a screen reader, once.
    await page.locator('#driver-announce').filter({ hasText: 'Status: Towing.' }).waitFor({ timeout: 5000 })
    // A note and a new destination from the office reach the open page too, said in words; a
    // driver whose keyboard is on the next step keeps it there (the buttons are not redrawn).
    await page.getByRole('button', { name: 'Move to At destination' }).focus()
    expect((await api('POST', `/jobs/${id}/notes`, { text: 'Gate code 4242, behind building B' })).status).toBe(201)
    await page.locator('#driver-notes', { hasText: 'Gate code 4242, behind building B' }).waitFor({ timeout: 5000 })
    await page.locator('#driver-announce').filter({ hasText: 'New note: Internal: Gate code 4242, behind building B' }).waitFor({ timeout: 5000 })
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Move to At destination')
    expect((await api('PATCH', `/jobs/${id}`, { destination: '99 Yard Rd' })).status).toBe(200)
    await page.locator('#driver-facts', { hasText: '99 Yard Rd' }).waitFor({ timeout: 5000 })
    await page.locator('#driver-announce').filter({ hasText: 'Destination changed.' }).waitFor({ timeout: 5000 })
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Move to At destination')
    await expectAccessible(page)
    await context.close()
  }, 60_000)

  test('offline: moves pressed without a connection are queued, survive a reload in the dead zone, and land once each, in order, when it returns', async () => {
    const { id, unit, link } = await jobTextedToDriver(12, { customer: { name: 'Cy Dee', phone: '503-555-0144', sms_consent: true }, pickup: { location: 'Forest Rd 9' } })
    const { context, page } = await phonePage()
    await page.goto(link)
    // The service worker takes the page over; the next page it serves is kept for a dead zone.
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null)
    await press(page, 'Acknowledge', 'acknowledged')

    await context.setOffline(true)
    await page.getByRole('button', { name: 'Move to En route' }).click()
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Offline: 1 action waiting to be sent.')
    await page.getByRole('button', { name: 'Move to On scene' }).click()
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Offline: 2 actions waiting to be sent.')
    expect((await api('GET', `/jobs/${id}`)).body.status).toBe('dispatched')
    // The buttons the queue leads to are drawn as online: GOA from On scene with its Reason.
    expect(await page.getByRole('button', { name: 'GOA', exact: true }).count()).toBe(1)
    expect(await page.getByLabel('Reason', { exact: true }).count()).toBe(1)

    // A reload without a connection: the kept page, the queue still there.
    await page.reload()
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Job for Truck 12')
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Offline: 2 actions waiting to be sent.')
    expect(await page.getByRole('button', { name: 'Move to Towing' }).count()).toBe(1)

    await context.setOffline(false)
    await until(async () => (await api('GET', `/jobs/${id}`)).body.status === 'on_scene', 'the queued moves sent')
    await page.waitForFunction(() => document.getElementById('driver-status')?.textContent === 'On scene')
    const moves = (await events(id)).filter((e) => e.type === 'job.status_changed' && e.actor === 'driver')
    expect(moves.map((e) => [e.from, e.to, e.detail.unit_id])).toEqual([['dispatched', 'en_route', unit], ['en_route', 'on_scene', unit]])
    await context.close()
  }, 60_000)

  test("a load balancer's 502 (no server behind it) is not a refusal: the press stays queued and lands once, in order, when the server answers again", async () => {
    const { id, unit, link } = await jobTextedToDriver(16, { customer: { name: 'Ed Fox', phone: '503-555-0147', sms_consent: true }, pickup: { location: 'Hwy 30 at Scappoose' } })
    const { context, page } = await phonePage()
    await page.goto(link)
    await press(page, 'Acknowledge', 'acknowledged')
    // The phone is online; what answers the presses is a proxy whose server is gone.
    let bounced = 0
    await page.route(`${link}/status`, (route) => { bounced++; return route.fulfill({ status: 502, contentType: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1></body></html>' }) })
    await page.getByRole('button', { name: 'Move to En route' }).click()
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Offline: 1 action waiting to be sent.')
    await page.getByRole('button', { name: 'Move to On scene' }).click()
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Offline: 2 actions waiting to be sent.')
    expect(await page.getByRole('alert').filter({ hasText: 'refused' }).count()).toBe(0)
    expect((await api('GET', `/jobs/${id}`)).body.status).toBe('dispatched')
    // The server answers again: both presses go, in order, once each.
    await until(() => bounced >= 2, 'a retry bounced too')
    await page.unroute(`${link}/status`)
    await until(async () => (await api('GET', `/jobs/${id}`)).body.status === 'on_scene', 'the queued moves sent', 20_000)
    await page.waitForFunction(() => document.getElementById('driver-status')?.textContent === 'On scene')
    const moves = (await events(id)).filter((e) => e.type === 'job.status_changed' && e.actor === 'driver')
    expect(moves.map((e) => [e.from, e.to, e.detail.unit_id])).toEqual([['dispatched', 'en_route', unit], ['en_route', 'on_scene', unit]])
    await context.close()
  }, 60_000)

  test('a photo or signature chosen without a connection is not sent into the void: the page stays, says so beside it, and nothing is written', async () => {
    const { id, link } = await jobTextedToDriver(17, { customer: { name: 'Flo Gray', phone: '503-555-0148', sms_consent: true }, pickup: { location: 'Hwy 101 at Tillamook' } })
    const { context, page } = await phonePage()
    await page.goto(link)
    await live(page)
    const before = (await events(id)).length
    // The signature is drawn while online (as the first test draws it), then the signal goes.
    await drawSignature(page)
    await page.getByLabel('Signer name', { exact: true }).fill('Flo Gray')
    await context.setOffline(true)
    const jpeg = Buffer.from('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACP/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AVN//2Q==', 'base64')
    await page.getByLabel('Add photo', { exact: true }).setInputFiles({ name: 'dent.jpg', mimeType: 'image/jpeg', buffer: jpeg })
    await page.locator('#f-photo-error', { hasText: 'No connection: the photo was not sent.' }).waitFor({ timeout: 5000 })
    // Saved offline, the signature stays drawn, with the page saying why.
    await page.getByRole('button', { name: 'Save signature' }).click()
    const alert = page.locator('#driver-alert')
    await page.waitForFunction(() => (document.getElementById('driver-alert')?.textContent ?? '') !== '', undefined, { timeout: 10_000 })
    expect(await alert.innerText()).toBe('No connection: the signature was not saved. It is still drawn: press Save signature again when you have signal.')
    expect(page.url()).toBe(link)
    await context.setOffline(false)
    expect((await events(id)).length).toBe(before)
    // Back online (the page's stream is live again), the same signature goes.
    await live(page, 15_000)
    await Promise.all([page.waitForURL(/\?done=signature/), page.getByRole('button', { name: 'Save signature' }).click()])
    expect((await events(id)).at(-1)).toMatchObject({ type: 'job.signature_captured', actor: 'driver' })
    await context.close()
  }, 60_000)

  test('offline: a driver who opened the texted link once and lost signal reloads the job (the first visit is kept too)', async () => {
    const { id, link } = await jobTextedToDriver(14, { customer: { name: 'Di Eve', phone: '503-555-0145', sms_consent: true }, pickup: { location: 'Sunset Hwy 31' } })
    const { context, page } = await phonePage()
    await page.goto(link)
    // Nothing else is done on the page: no press, no second load.
    await until(() => page.evaluate(async () => {
      const cache = await caches.open('towline-driver-v1')
      return !!(await cache.match(location.pathname)) && !!(await cache.match(location.pathname + '/state'))
    }), 'the first visit kept')
    await context.setOffline(true)
    await page.reload()
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Job for Truck 14')
    // Its script came from the cache too: a press is queued, not posted into the void.
    await page.getByRole('button', { name: 'Acknowledge' }).click()
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Offline: 1 action waiting to be sent.')
    await context.setOffline(false)
    await until(async () => (await events(id)).some((e) => e.type === 'job.driver_acknowledged' && e.actor === 'driver'), 'the acknowledgement sent')
    await context.close()
  }, 60_000)

  test('the position goes out at most every 10 seconds, reloads included (each press comes back as a new page)', async () => {
    const { link } = await jobTextedToDriver(15, { customer: { name: 'Ed Fay', phone: '503-555-0146', sms_consent: true }, pickup: { location: 'Canyon Rd 3' } })
    const { context, page } = await phonePage()
    const posted: number[] = []
    page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/position')) posted.push(Date.now()) })
    await page.goto(link)
    await until(() => posted.length === 1, 'the first fix sent')
    // Three presses, three new pages, each with the phone moving a little.
    for (const [i, name] of ['Acknowledge', 'Move to En route', 'Move to On scene'].entries()) {
      await context.setGeolocation({ latitude: WHERE.latitude + 0.001 * (i + 1), longitude: WHERE.longitude })
      await Promise.all([page.waitForURL(/\?done=/), page.getByRole('button', { name }).click()])
      await context.setGeolocation({ latitude: WHERE.latitude + 0.001 * (i + 1) + 0.0005, longitude: WHERE.longitude })
    }
    const spanMs = Date.now() - posted[0]!
    expect(spanMs).toBeLessThan(10_000)
    expect(posted).toHaveLength(1)
    await context.close()
  }, 60_000)

  test('after reassignment the open page says the job was handed to another driver, and its replayed posts are refused with nothing written', async () => {
    const { id, link } = await jobTextedToDriver(10, { customer: { name: 'Al Bee', phone: '503-555-0143', sms_consent: true }, pickup: { location: 'I-84 exit 5' } })
    const { context, page } = await phonePage()
    await page.goto(link)
    await live(page)
    const form = await page.locator(`form[action$="/acknowledge"]`).evaluate((f) => Object.fromEntries(new FormData(f as HTMLFormElement) as any) as Record<string, string>)

    expect((await api('POST', `/jobs/${id}/assign`, { unit_id: addUnit('Truck 11', '503-555-0111') })).status).toBe(200)
    // The open page learns it from its stream and shows the 410 page.
    await page.waitForFunction(() => document.body.textContent?.includes('This job was handed to another driver.'))
    const before = await events(id)
    const ack = await context.request.post(`${link}/acknowledge`, { form, headers: { origin: base }, maxRedirects: 0 })
    expect(ack.status()).toBe(410)
    expect(await ack.text()).toContain('This job was handed to another driver.')
    const move = await context.request.post(`${link}/status`, { form: { ...form, to: 'en_route' }, headers: { origin: base }, maxRedirects: 0 })
    expect(move.status()).toBe(410)
    expect(await events(id)).toEqual(before)
    await expectAccessible(page)
    await context.close()
  }, 60_000)
})

/**
 * The GOA evidence pack in Chromium against the compiled binary, on a 360 px phone: a job that
 * ended GOA after its unit's phone reported fixes (OsmAnd, with their own times), the driver's
 * link (from the text the Twilio stand-in got) added a photo, the customer texted back and wrote
 * on the tracking page. The job page links to the pack; the pack shows each of those records,
 * its photo loads, it passes axe and fits 360 px, and printed it shows no navigation or buttons.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { cli, createKeyWithCli, freePort, freshFolder, startServer, apiCaller, type RunningServer } from '../binary'
import { launchChromium } from '../browser/chromium'
import { createLogin, signedInPage } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'
import { sendInbound, startTwilioStandin, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../twilio-standin'

const twilio = startTwilioStandin()
let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let key: string
let base: string
const DISPATCHER = { email: 'disp@example.com', password: 'dispatch password 1' }
const PICKUP = { lat: 45.5017, lng: -122.6731 }
/** A real 1x1 PNG. */
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0))

beforeAll(async () => {
  folder = freshFolder()
  const port = freePort()
  base = `http://localhost:${port}`
  server = await startServer(folder.bin, {
    cwd: folder.dir, args: ['--port', String(port)],
    env: { TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: TWILIO_SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM, TOWLINE_TWILIO_API_BASE: twilio.apiBase, TOWLINE_PUBLIC_URL: base },
  })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  createLogin(folder, { ...DISPATCHER, role: 'dispatcher' })
  browser = await launchChromium()
}, 30_000)
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  twilio.stop()
  folder?.cleanup()
})

const api = apiCaller(() => server, () => key)
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not met in time`)
    await Bun.sleep(50)
  }
}
/** A fix from the unit's phone (OsmAnd), taken at `atMs`. */
async function fix(deviceId: string, at: { lat: number; lng: number }, atMs: number) {
  const res = await fetch(`${base}/osmand?id=${deviceId}&lat=${at.lat}&lon=${at.lng}&timestamp=${Math.floor(atMs / 1000)}&accuracy=6`, { method: 'POST' })
  expect(res.status).toBe(200)
}
const north = (p: { lat: number; lng: number }, metres: number) => ({ lat: p.lat + metres / 111_195, lng: p.lng })

describe('the GOA evidence pack in Chromium', () => {
  test('reached from the job page, it shows the arrival, the fix, the photo and the conversation; axe, 360 px, printed without navigation or buttons', async () => {
    const unit = JSON.parse(cli(folder.bin, ['units', 'add', '--name', 'Truck 9', '--driver-name', 'Dana Diaz', '--driver-phone', '503-555-0199', '--json'], { cwd: folder.dir }).stdout) as { id: string; device_id: string }
    const made = await api('POST', '/jobs', {
      external_ref: 'AAA-77', customer: { name: 'Gail Onarrival', phone: '503-555-0142', sms_consent: true },
      vehicle: { year: '2018', make: 'Ford', model: 'Focus', plate: 'GOA77' }, pickup: { location: 'Hwy 26 at mile 40', ...PICKUP },
    })
    expect(made.status).toBe(201)
    const id = made.body.id as string
    expect((await api('POST', `/jobs/${id}/assign`, { unit_id: unit.id })).status).toBe(200)
    let driverLink = ''
    await until(() => (driverLink = twilio.messages.find((m) => m.to === '+15035550199')?.body.match(/https?:\/\/\S+\/d\/[0-9A-Za-z]{24}/)?.[0] ?? '') !== '', 'the driver text')
    expect((await api('PATCH', `/jobs/${id}`, { status: 'en_route' })).status).toBe(200)
    await fix(unit.device_id, north(PICKUP, 3000), Date.now() - 60_000)
    expect((await sendInbound(base, '+15035550142', 'Blue Focus, hazards on')).status).toBe(200)
    await until(async () => (await api('GET', `/jobs/${id}/events?limit=100`)).body.data.some((e: any) => e.type === 'job.customer_message'), 'the customer text on the timeline')
    expect((await api('PATCH', `/jobs/${id}`, { status: 'on_scene' })).status).toBe(200)
    await fix(unit.device_id, north(PICKUP, 20), Date.now())
    const fd = new FormData()
    fd.append('photo', new File([PNG as Uint8Array<ArrayBuffer>], 'scene.png', { type: 'image/png' }))
    expect((await fetch(`${driverLink}/photos`, { method: 'POST', redirect: 'manual', headers: { origin: base }, body: fd })).status).toBe(303)
    const tracking = new URL(made.body.tracking_url).pathname
    expect((await fetch(`${base}${tracking}/message`, { method: 'POST', redirect: 'manual', headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' }, body: 'message=Got+a+ride%2C+sorry' })).status).toBe(303)
    expect((await api('PATCH', `/jobs/${id}`, { status: 'goa', cancel_reason: 'Customer left before the truck arrived' })).status).toBe(200)

    const page = await signedInPage(browser, base, DISPATCHER, { width: 360, height: 740 })
    await page.goto(`${base}/jobs/${id}`)
    await Promise.all([page.waitForURL(`${base}/jobs/${id}/goa`), page.getByRole('link', { name: 'GOA evidence pack', exact: true }).click()])
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('GOA evidence pack')
    const section = (name: string) => page.getByRole('region', { name }).innerText()
    expect(await section('Job')).toContain('AAA-77')
    expect(await section('Job')).toContain('2018 Ford Focus, GOA77')
    const arrival = await section('Arrival and GOA')
    expect(arrival).toContain('Customer left before the truck arrived')
    expect(arrival).toContain('Dana Diaz')
    expect(arrival).toMatch(/Arrived on scene\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, recorded by the API or the console/)
    const position = await section('Position fix nearest the arrival')
    expect(position).toContain(`${north(PICKUP, 20).lat.toFixed(6)}, ${PICKUP.lng.toFixed(6)} (within 6 m)`)
    expect(position).toContain("20 m from the pickup's coordinates")
    const talk = await section('Texts and messages with the customer')
    expect(talk.indexOf('Blue Focus, hazards on')).toBeGreaterThan(-1)
    expect(talk.indexOf('Got a ride, sorry')).toBeGreaterThan(talk.indexOf('Blue Focus, hazards on'))
    expect(talk).toMatch(/Text to the customer \+15035550142: (sent|delivered)/)
    expect(talk).not.toContain(tracking)
    // The photo's thumbnail loads from the stored image, and links to it.
    const img = page.getByRole('img', { name: 'Photo 1, by Truck 9' })
    await until(() => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0), 'the thumbnail loaded')
    expect(await img.locator('xpath=..').getAttribute('href')).toMatch(new RegExp(`^/jobs/${id}/photos/pho_`))

    await expectAccessible(page)
    await expectNoHorizontalOverflow(page)
    // On screen the script shows Print; on paper the record alone.
    expect(await page.getByRole('button', { name: 'Print' }).isVisible()).toBe(true)
    await page.emulateMedia({ media: 'print' })
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).isVisible()).toBe(false)
    expect(await page.locator('button:visible').count()).toBe(0)
    expect(await page.getByRole('heading', { name: 'Photos' }).isVisible()).toBe(true)
    await page.context().close()
  }, 60_000)

  test('a job that did not end GOA has no pack: a 404 page saying why', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Still Open' }, pickup: { location: 'Somewhere' } })
    const page = await signedInPage(browser, base, DISPATCHER, { width: 360, height: 740 })
    await page.goto(`${base}/jobs/${made.body.id}`)
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Still Open')
    expect(await page.getByRole('link', { name: 'GOA evidence pack' }).count()).toBe(0)
    const res = await page.goto(`${base}/jobs/${made.body.id}/goa`)
    expect(res?.status()).toBe(404)
    expect(await page.getByRole('alert').innerText()).toBe('This job did not end GOA (it is confirmed), so it has no GOA evidence pack.')
    await page.context().close()
  }, 30_000)
})

/**
 * The driver's page /d/{token} through HTTP, as its forms post: each action goes through the
 * API's operation with actor driver and detail.unit_id (proved by the API's timeline), exactly
 * the table's driver moves are offered, a stale page is refused and says so, a link taken back
 * or 24 hours past the finish answers 410 and writes nothing; photos, signatures and the
 * phone's position.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, makeUnit, NO_LIMITS, snapshot, expectNothingWritten } from '../../test/jobs-helpers'
import { addNote } from '../jobs/add-note'
import { addPhoto, MAX_PHOTOS_PER_JOB } from '../jobs/add-photo'
import { driverUrlOf } from '../jobs/job-links'
import { createUser } from '../users/create-user'

let api: TestApi
let key: string
beforeEach(() => { api = startTestApi(NO_LIMITS); key = api.key('all') })
afterEach(() => api.close())

const ORIGIN = 'http://towline.test'
const DAY = 86_400_000
/** A real 1x1 PNG. */
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0))
/** A real 2×1 JPEG (Chromium's canvas). */
const JPEG = Uint8Array.from(atob('/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADb/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAABAAIDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAX/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFQEBAQAAAAAAAAAAAAAAAAAABAb/xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oADAMBAAIRAxEAPwCeAGpH/9k='), (c) => c.charCodeAt(0))

/** The driver link's path the job holds now. */
const driverPath = (jobId: string) => {
  const row = api.db.$client.query('SELECT driver_token_sealed FROM jobs WHERE id = ?').get(jobId) as { driver_token_sealed: string }
  return new URL(driverUrlOf(api.links, { driverTokenSealed: row.driver_token_sealed })!).pathname
}
const get = (path: string, headers: Record<string, string> = {}) => api.raw(new Request(ORIGIN + path, { headers }))
const page = async (path: string) => (await get(path)).text()
const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
const attr = (tag: string, name: string) => tag.match(new RegExp(`\\s${name}="([^"]*)"`))?.[1]

/** The buttons of the page's status forms, by name. */
const buttonsOf = (html: string) => [...html.matchAll(/<button type="submit" class="button-big[^"]*">([^<]*)<\/button>/g)].map((m) => m[1]!).filter((b) => !['Upload photo', 'Save signature'].includes(b))

/** The hidden fields of the form posting to `action` whose button is named `button` (the first such form without one). */
function formOf(html: string, action: string, button?: string): Record<string, string> {
  for (const m of html.matchAll(/<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)) {
    if (!m[1]!.endsWith(`/${action}`)) continue
    if (button && !m[2]!.includes(`>${button}</button>`)) continue
    const fields: Record<string, string> = {}
    for (const [tag] of m[2]!.matchAll(/<input\b[^>]*>/g)) {
      const name = attr(tag, 'name')
      if (name && attr(tag, 'type') === 'hidden') fields[name] = unescape(attr(tag, 'value') ?? '')
    }
    return fields
  }
  throw new Error(`no ${action} form${button ? ` with ${button}` : ''} on the page`)
}
function post(path: string, fields: Record<string, string>, origin = ORIGIN) {
  return api.raw(new Request(ORIGIN + path, { method: 'POST', redirect: 'manual', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }))
}
function postFile(path: string, fields: Record<string, string>, files: Record<string, Uint8Array>) {
  const fd = new FormData()
  for (const [k, v] of Object.entries(fields)) fd.append(k, v)
  for (const [k, v] of Object.entries(files)) fd.append(k, new File([v as Uint8Array<ArrayBuffer>], `${k}.bin`))
  return api.raw(new Request(ORIGIN + path, { method: 'POST', redirect: 'manual', headers: { origin: ORIGIN }, body: fd }))
}
/** Opens the page, then presses the button (as a tap would). */
async function press(path: string, action: string, button?: string, extra: Record<string, string> = {}) {
  return post(`${path}/${action}`, { ...formOf(await page(path), action, button), ...extra })
}
const events = async (jobId: string) => (await call(api, key, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data as any[]
const alertOf = (html: string) => /<div class="form-alert" role="alert" id="driver-alert">([^<]*)<\/div>/.exec(html)?.[1]

describe('the driver page', () => {
  test('shows the job: customer with tap to call, pickup and destination with navigation links, vehicle, notes internal too, status; never another job', async () => {
    const { job, unit } = await bringTo(api, key, 'dispatched', { job: { customer: { name: 'Jo <Bloggs>', phone: '+15035550101', sms_consent: true }, destination: 'Main St Garage', vehicle: { make: 'Honda', model: 'Civic', plate: '7ABC123' } } })
    const other = await bringTo(api, key, 'dispatched', { job: { customer: { name: 'Somebody Else', phone: '+15035550199', sms_consent: true } } })
    const dispatcher = api.contexts.forDispatcher({ userId: 'usr_x', role: 'dispatcher', accountId: api.accountId })
    addNote(dispatcher, job.id, { text: 'Gate code 4711', customer_visible: false })
    addNote(dispatcher, job.id, { text: 'Blue house', customer_visible: true })
    addNote(dispatcher, other.job.id, { text: 'Other job note', customer_visible: false })
    const res = await get(driverPath(job.id))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const html = await res.text()
    expect(html).toContain('Jo &lt;Bloggs&gt;')
    expect(html).toContain('href="tel:+15035550101"')
    expect(html).toContain(`href="https://www.google.com/maps/dir/?api=1&amp;destination=${encodeURIComponent(job.pickup.location)}"`)
    expect(html).toContain(`destination=${encodeURIComponent('Main St Garage')}`)
    expect(html).toContain('Honda Civic')
    expect(html).toContain('7ABC123')
    expect(html).toContain('<strong>Internal:</strong> Gate code 4711')
    expect(html).toContain('Blue house')
    expect(html).toContain(`Job for ${unit!.name}`)
    expect(html).toContain('data-status="dispatched">Dispatched</strong>')
    expect(html).not.toContain('Somebody Else')
    expect(html).not.toContain('Other job note')
    expect(html).toContain('aria-label="Signature"')
    expect(html).toMatch(/<label for="f-photo">Add photo<\/label><input type="file" id="f-photo" name="photo" accept="[^"]*image[^"]*" capture="environment"/)
    expect(html).toContain('<label for="f-signer_name">Signer name</label>')
    // Nothing on the page loads from another origin.
    expect(html).not.toMatch(/(src|href)="https?:\/\/(?!www\.google\.com\/maps\/dir)/)
  })

  test('where the customer said they are (the tracking page\'s Share my location) reaches the driver, with a navigation link to it; the latest one', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const path = driverPath(job.id)
    expect(await page(path)).not.toContain('Navigate to the customer')
    const tracking = new URL(job.tracking_url).pathname
    for (const [lat, lng] of [['45.5', '-122.6'], ['45.5231', '-122.6765']]) expect((await post(`${tracking}/location`, { lat: lat!, lng: lng!, accuracy_m: '12.5' })).status).toBe(303)
    const html = await page(path)
    expect(html).toMatch(/The customer shared where they are \(<time datetime="[^"]+" data-local>\d\d:\d\d UTC<\/time>, within 13 m\)\./)
    expect(html).toContain(`href="https://www.google.com/maps/dir/?api=1&amp;destination=${encodeURIComponent('45.5231,-122.6765')}" rel="noreferrer">Navigate to the customer</a>`)
    // The page's live redraw carries it too.
    expect(((await (await get(`${path}/state`)).json()) as { facts_html: string }).facts_html).toContain('Navigate to the customer')
  })

  test('the stylesheet comes inlined (no round trip before the first paint on a slow network), allowed by exactly its hash in the CSP', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const res = await get(driverPath(job.id))
    const html = await res.text()
    const css = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1]
    expect(css?.length).toBeGreaterThan(1000)
    expect(html).not.toMatch(/<link rel="stylesheet" href="[^"]*styles/)
    const hash = new Bun.CryptoHasher('sha256').update(css!).digest('base64')
    const policy = res.headers.get('content-security-policy')!
    expect(policy).toContain(`style-src 'self' 'sha256-${hash}'`)
    expect(policy).toContain("script-src 'self'")
    expect(policy).not.toContain('unsafe-inline')
    // The tracking page the same way.
    const tracking = await get(new URL(job.tracking_url).pathname)
    const tcss = /<style>([\s\S]*?)<\/style>/.exec(await tracking.text())?.[1]
    expect(tcss).toBe(css)
    expect(tracking.headers.get('content-security-policy')).toContain(`'sha256-${hash}'`)
  })

  test('the two secret-link pages opt out of opener isolation (no process swap on the tap from a text); the dashboard keeps it', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const driver = await get(driverPath(job.id))
    const tracking = await get(new URL(job.tracking_url).pathname)
    const login = await get('/login')
    expect([driver.status, tracking.status, login.status]).toEqual([200, 200, 200])
    expect(driver.headers.get('cross-origin-opener-policy')).toBe('unsafe-none')
    expect(tracking.headers.get('cross-origin-opener-policy')).toBe('unsafe-none')
    expect(login.headers.get('cross-origin-opener-policy')).toBe('same-origin')
    // Everything else those pages keep: framing refused, no Referer off the origin.
    for (const res of [driver, tracking]) {
      expect(res.headers.get('x-frame-options')).toBe('DENY')
      expect(res.headers.get('referrer-policy')).toBe('same-origin')
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    }
  })

  test('an Acknowledge pressed on a page showing Dispatched (queued offline, say) still counts after the dispatcher moved the job on', async () => {
    const { job, unit } = await bringTo(api, key, 'dispatched')
    const path = driverPath(job.id)
    const form = formOf(await page(path), 'acknowledge')
    expect(form.expected_status).toBe('dispatched')
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' })).status).toBe(200)
    const res = await post(`${path}/acknowledge`, form)
    expect(res.status).toBe(303)
    const ack = (await events(job.id)).at(-1)
    expect({ type: ack.type, actor: ack.actor, unit: ack.detail.unit_id }).toEqual({ type: 'job.driver_acknowledged', actor: 'driver', unit: unit!.id })
  })

  test('Acknowledge once (actor driver, detail.unit_id), then exactly the table\'s driver moves, GOA on scene', async () => {
    const { job, unit } = await bringTo(api, key, 'dispatched')
    const path = driverPath(job.id)
    expect(buttonsOf(await page(path))).toEqual(['Acknowledge'])
    const res = await press(path, 'acknowledge')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`${path}?done=acknowledged`)
    const ack = (await events(job.id)).at(-1)
    expect({ type: ack.type, actor: ack.actor, unit: ack.detail.unit_id }).toEqual({ type: 'job.driver_acknowledged', actor: 'driver', unit: unit!.id })
    expect(await page(`${path}?done=acknowledged`)).toContain('Job acknowledged.')
    // Once: the button is gone, and a replayed form with a new key is refused.
    expect(buttonsOf(await page(path))).toEqual(['Move to En route'])
    const again = await post(`${path}/acknowledge`, { idempotency_key: 'A'.repeat(24) + '.acknowledge', expected_status: 'dispatched' })
    expect(again.status).toBe(409)
    expect(alertOf(await again.text())).toBe('The job was already acknowledged. Nothing was done.')

    const road: [string, string[]][] = [['en_route', ['Move to On scene', 'GOA']], ['on_scene', ['Move to Towing', 'GOA']], ['towing', ['Move to At destination']], ['at_destination', ['Move to Completed']], ['completed', []]]
    let offered = ['Move to En route']
    for (const [to, next] of road) {
      const button = offered[0]!
      const moved = await press(path, 'status', button)
      expect({ to, status: moved.status }).toEqual({ to, status: 303 })
      const e = (await events(job.id)).at(-1)
      expect({ type: e.type, from: e.from, to: e.to, actor: e.actor, unit: e.detail.unit_id }).toMatchObject({ type: 'job.status_changed', to, actor: 'driver', unit: unit!.id })
      offered = buttonsOf(await page(path))
      expect({ at: to, offered }).toEqual({ at: to, offered: to === 'en_route' ? ['Move to On scene'] : next })
      if (to === 'en_route') offered = ['Move to On scene']
    }
  })

  test('GOA on scene by its button; a move the table does not give the driver is refused and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const path = driverPath(job.id)
    await press(path, 'acknowledge')
    const before = await snapshot(api, key, job.id)
    const skip = await post(`${path}/status`, { ...formOf(await page(path), 'status', 'GOA'), to: 'completed' })
    expect(skip.status).toBe(409)
    expect(alertOf(await skip.text())).toContain('cannot make that move')
    await expectNothingWritten(api, key, before)
    expect((await press(path, 'status', 'GOA')).headers.get('location')).toBe(`${path}?done=goa`)
    const e = (await events(job.id)).at(-1)
    expect({ to: e.to, actor: e.actor }).toEqual({ to: 'goa', actor: 'driver' })
  })

  test('GOA with its optional Reason keeps it as the job\'s cancel_reason; a one-letter reason is refused and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const path = driverPath(job.id)
    await press(path, 'acknowledge')
    expect(await page(path)).toContain('<label for="f-goa-reason">Reason</label>')
    const before = await snapshot(api, key, job.id)
    const short = await press(path, 'status', 'GOA', { reason: 'x' })
    expect(short.status).toBe(422)
    await expectNothingWritten(api, key, before)
    expect((await press(path, 'status', 'GOA', { reason: '  Vehicle gone on arrival  ' })).status).toBe(303)
    const e = (await events(job.id)).at(-1)
    expect({ to: e.to, actor: e.actor, reason: e.detail.cancel_reason }).toEqual({ to: 'goa', actor: 'driver', reason: 'Vehicle gone on arrival' })
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.cancel_reason).toBe('Vehicle gone on arrival')
  })

  test('a stale page is refused with role=alert and writes nothing; the same form sent twice acts once', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const path = driverPath(job.id)
    await press(path, 'acknowledge')
    const form = formOf(await page(path), 'status', 'Move to En route')
    expect((await post(`${path}/status`, form)).status).toBe(303)
    const count = (await events(job.id)).length
    // The same key and body: a double tap, or the offline queue's replay.
    expect((await post(`${path}/status`, form)).status).toBe(303)
    expect((await events(job.id)).length).toBe(count)
    // The driver's page shows En route; the dispatcher moves the job on meanwhile: the page is stale.
    const shown = formOf(await page(path), 'status', 'Move to On scene')
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    const before = await snapshot(api, key, job.id)
    const stale = await post(`${path}/status`, shown)
    expect(stale.status).toBe(409)
    expect(alertOf(await stale.text())).toBe('The job changed: it is now On scene, not En route as this page showed. Nothing was done; the page now shows the job as it is.')
    await expectNothingWritten(api, key, before)
  })

  test('a cross-origin post is refused (403) and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const path = driverPath(job.id)
    const before = await snapshot(api, key, job.id)
    const res = await post(`${path}/acknowledge`, formOf(await page(path), 'acknowledge'), 'https://evil.example')
    expect(res.status).toBe(403)
    await expectNothingWritten(api, key, before)
  })

  test('a reassigned or unassigned job\'s link answers 410 for the page and every write, and nothing is written', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const path = driverPath(job.id)
    const html = await page(path)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: makeUnit(api).id })).status).toBe(200)
    const before = await snapshot(api, key, job.id)
    const gone = await get(path)
    expect(gone.status).toBe(410)
    expect(await gone.text()).toContain('This job was handed to another driver.')
    for (const [action, form] of [['acknowledge', formOf(html, 'acknowledge')], ['status', { to: 'on_scene', expected_status: 'en_route', idempotency_key: 'C'.repeat(24) }]] as const) {
      const res = await post(`${path}/${action}`, form)
      expect({ action, status: res.status }).toEqual({ action, status: 410 })
      expect(await res.text()).toContain('This job was handed to another driver.')
    }
    const photo = await postFile(`${path}/photos`, { idempotency_key: 'D'.repeat(24) }, { photo: JPEG })
    expect(photo.status).toBe(410)
    const sig = await postFile(`${path}/signature`, { signer_name: 'Jo' }, { signature: PNG })
    expect(sig.status).toBe(410)
    const pos = await api.raw(new Request(`${ORIGIN}${path}/position`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/json' }, body: JSON.stringify({ lat: 45.5, lng: -122.6 }) }))
    expect(pos.status).toBe(410)
    expect((await get(`${path}/state`)).status).toBe(410)
    await expectNothingWritten(api, key, before)
    expect(api.db.$client.query('SELECT count(*) AS n FROM job_photos').get()).toEqual({ n: 0 })
    expect(api.db.$client.query('SELECT count(*) AS n FROM job_signatures').get()).toEqual({ n: 0 })

    const { job: other } = await bringTo(api, key, 'dispatched')
    const otherPath = driverPath(other.id)
    expect((await call(api, key, 'DELETE', `/jobs/${other.id}/assign`)).status).toBe(200)
    expect((await get(otherPath)).status).toBe(410)
  })

  test('the link answers 410 24 hours after the job finished (the injected clock), and works until then', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const path = driverPath(job.id)
    api.clock.advance(DAY)
    expect((await get(path)).status).toBe(200)
    api.clock.advance(1)
    const res = await get(path)
    expect(res.status).toBe(410)
    expect(await res.text()).toContain('This job link has expired: the job finished more than 24 hours ago.')
  })

  test('Add photo: a JPEG is kept (actor driver, detail.unit_id) and served to the link; a file that is not an image is refused beside the field', async () => {
    const { job, unit } = await bringTo(api, key, 'on_scene')
    const path = driverPath(job.id)
    const form = formOf(await page(path), 'photos')
    const res = await postFile(`${path}/photos`, form, { photo: JPEG })
    expect(res.status).toBe(303)
    const e = (await events(job.id)).at(-1)
    expect({ type: e.type, actor: e.actor, unit: e.detail.unit_id, type_: e.detail.content_type, bytes: e.detail.bytes, by: e.detail.by })
      .toEqual({ type: 'job.photo_added', actor: 'driver', unit: unit!.id, type_: 'image/jpeg', bytes: JPEG.length, by: 'driver' })
    const img = await get(`${path}/photos/${e.detail.photo_id}`)
    expect(img.headers.get('content-type')).toBe('image/jpeg')
    expect(new Uint8Array(await img.arrayBuffer())).toEqual(JPEG)
    // The phone keeps it only to ask again: once the link is taken back, the next look is refused.
    expect(img.headers.get('cache-control')).toBe('private, no-cache')
    // The page shows a small copy and links the photo itself.
    expect(await page(path)).toContain(`<a href="${path}/photos/${e.detail.photo_id}"><img src="${path}/photos/${e.detail.photo_id}/thumb"`)

    const count = (await events(job.id)).length
    const bad = await postFile(`${path}/photos`, { idempotency_key: 'E'.repeat(24) + '.photo' }, { photo: new TextEncoder().encode('GIF89a not really') })
    expect(bad.status).toBe(422)
    const html = await bad.text()
    expect(html).toContain('<p class="field-error" id="f-photo-error">must be a JPEG, PNG or WebP image</p>')
    expect(alertOf(html)).toBe('Nothing was saved: the photo must be a JPEG, PNG or WebP image.')
    expect((await events(job.id)).length).toBe(count)
  })

  test("a large photo added from the dashboard reaches the driver's page as a thumbnail of at most 320 px: the page stays light, the photo one tap away", async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const path = driverPath(job.id)
    // 4000 x 3000, full quality: about what a phone's camera makes.
    const big = await new Bun.Image(JPEG).resize(4000, 3000).jpeg({ quality: 100 }).bytes()
    const photo = addPhoto(api.contexts.forOperator(api.accountId), job.id, big)
    const html = await page(path)
    expect(html).toContain(`<img src="${path}/photos/${photo.id}/thumb"`)
    const thumb = await get(`${path}/photos/${photo.id}/thumb`)
    expect({ status: thumb.status, type: thumb.headers.get('content-type'), cache: thumb.headers.get('cache-control') }).toEqual({ status: 200, type: 'image/jpeg', cache: 'private, no-cache' })
    const bytes = new Uint8Array(await thumb.arrayBuffer())
    const size = await new Bun.Image(bytes).metadata()
    expect({ width: size.width, height: size.height }).toEqual({ width: 320, height: 240 })
    expect(bytes.length).toBeLessThan(big.length / 10)
    // Asked again with its tag: 304, no bytes; the full photo is still served whole.
    const again = await get(`${path}/photos/${photo.id}/thumb`, { 'if-none-match': thumb.headers.get('etag')! })
    expect({ status: again.status, bytes: (await again.arrayBuffer()).byteLength }).toEqual({ status: 304, bytes: 0 })
    expect(new Uint8Array(await (await get(`${path}/photos/${photo.id}`)).arrayBuffer())).toEqual(big as Uint8Array<ArrayBuffer>)
    // A PNG or a progressive JPEG over 16 megapixels (decoded whole, it would hold 64 MB and more)
    // is not decoded, and never sent whole as a thumbnail: a small drawn stand-in says to open it.
    // (A fresh Bun.Image for each: an image's encoder options stay with it.)
    const wide = () => new Bun.Image(JPEG).resize(5000, 4000)
    const progressive = await wide().jpeg({ quality: 40, progressive: true }).bytes()
    // The same with a TEM marker (FF 01, no length) before its frame: a decoder steps over it, so must the check.
    const withTem = new Uint8Array([0xff, 0xd8, 0xff, 0x01, ...progressive.subarray(2)])
    for (const bytes of [await wide().png().bytes(), progressive, withTem]) {
      const huge = addPhoto(api.contexts.forOperator(api.accountId), job.id, bytes)
      const standIn = await get(`${path}/photos/${huge.id}/thumb`)
      const body = await standIn.text()
      expect({ status: standIn.status, type: standIn.headers.get('content-type'), small: body.length < 1000 }).toEqual({ status: 200, type: 'image/svg+xml', small: true })
      expect(body).toContain('Open it to see it')
      expect((await (await get(`${path}/photos/${huge.id}`)).arrayBuffer()).byteLength).toBe(bytes.length)
    }
    // A baseline JPEG of the same size is shrunk while it is decoded: a real thumbnail.
    const baseline = addPhoto(api.contexts.forOperator(api.accountId), job.id, await wide().jpeg({ quality: 40 }).bytes())
    const small = await get(`${path}/photos/${baseline.id}/thumb`)
    expect(small.headers.get('content-type')).toBe('image/jpeg')
    expect(await new Bun.Image(new Uint8Array(await small.arrayBuffer())).metadata()).toMatchObject({ width: 320, height: 256 })
    // Once the link is taken back, the thumbnail is refused like the photo.
    expect((await call(api, key, 'DELETE', `/jobs/${job.id}/assign`)).status).toBe(200)
    expect((await get(`${path}/photos/${photo.id}/thumb`)).status).toBe(410)
  })

  test('a photo over 10 MB sent without the page\'s script gets the page back (413) with the message beside Add photo, nothing written', async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const path = driverPath(job.id)
    const before = await snapshot(api, key, job.id)
    const big = new Uint8Array(10 * 1024 * 1024 + 1)
    big.set([0xff, 0xd8, 0xff, 0xe0])
    const res = await postFile(`${path}/photos`, formOf(await page(path), 'photos'), { photo: big })
    expect(res.status).toBe(413)
    expect(res.headers.get('connection')).toBe('close')
    const html = await res.text()
    expect(html).toContain('<p class="field-error" id="f-photo-error">is larger than 10 MB: choose a smaller photo</p>')
    expect(alertOf(html)).toBe('Nothing was saved: the photo is larger than 10 MB: choose a smaller photo.')
    await expectNothingWritten(api, key, before)
  })

  test('a file that only starts like an image is refused beside the field: random bytes after a JPEG or WebP start, a PNG header with a wrong checksum', async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const path = driverPath(job.id)
    const before = await snapshot(api, key, job.id)
    const noise = crypto.getRandomValues(new Uint8Array(60_000))
    const fakeJpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, ...noise])
    const badPng = PNG.slice()
    badPng[29] = badPng[29]! ^ 0xff
    const riff = Uint8Array.from([...new TextEncoder().encode('RIFF'), 0x10, 0xea, 0, 0, ...new TextEncoder().encode('WEBPJUNK'), ...noise])
    for (const bytes of [fakeJpeg, badPng, riff]) {
      const res = await postFile(`${path}/photos`, formOf(await page(path), 'photos'), { photo: bytes })
      expect(res.status).toBe(422)
      expect(await res.text()).toContain('<p class="field-error" id="f-photo-error">must be a JPEG, PNG or WebP image</p>')
    }
    await expectNothingWritten(api, key, before)
    // The real ones still go in.
    for (const bytes of [JPEG, PNG]) expect((await postFile(`${path}/photos`, formOf(await page(path), 'photos'), { photo: bytes })).status).toBe(303)
  })

  test('a job keeps at most 100 photos: the next is refused beside the field and nothing is written (a leaked link cannot fill the disk)', async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const path = driverPath(job.id)
    const dispatcher = api.contexts.forDispatcher({ userId: 'usr_x', role: 'dispatcher', accountId: api.accountId })
    for (let i = 0; i < MAX_PHOTOS_PER_JOB - 1; i++) addPhoto(dispatcher, job.id, JPEG)
    expect((await postFile(`${path}/photos`, formOf(await page(path), 'photos'), { photo: JPEG })).status).toBe(303)
    const before = await snapshot(api, key, job.id)
    const over = await postFile(`${path}/photos`, formOf(await page(path), 'photos'), { photo: JPEG })
    expect(over.status).toBe(422)
    expect(await over.text()).toContain(`this job already has ${MAX_PHOTOS_PER_JOB} photos, the most one job keeps`)
    await expectNothingWritten(api, key, before)
  })

  test('Save signature: the PNG and Signer name are kept (job.signature_captured), listed, served to the link and the account\'s sessions; bad input refused beside its field', async () => {
    const { job, unit } = await bringTo(api, key, 'at_destination')
    const path = driverPath(job.id)
    const form = formOf(await page(path), 'signature')
    const res = await postFile(`${path}/signature`, { ...form, signer_name: '  Jo Bloggs ' }, { signature: PNG })
    expect(res.status).toBe(303)
    const e = (await events(job.id)).at(-1)
    expect({ type: e.type, actor: e.actor, unit: e.detail.unit_id, name: e.detail.signer_name }).toEqual({ type: 'job.signature_captured', actor: 'driver', unit: unit!.id, name: 'Jo Bloggs' })
    const sigId = e.detail.signature_id as string
    expect(sigId).toStartWith('sig_')
    const img = await get(`${path}/signatures/${sigId}`)
    expect(img.headers.get('content-type')).toBe('image/png')
    expect(new Uint8Array(await img.arrayBuffer())).toEqual(PNG)
    expect(await page(path)).toContain('Signature of Jo Bloggs</a>')

    // The account's sessions see it at /jobs/{id}/signatures/{sigId}; no session, no image.
    const password = 'correct horse battery'
    await createUser(api.contexts.forOperator(api.accountId), { email: 'ann@example.com', role: 'dispatcher', password })
    const login = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=ann%40example.com&password=${encodeURIComponent(password)}` }))
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!
    const bySession = await api.raw(new Request(`${ORIGIN}/jobs/${job.id}/signatures/${sigId}`, { headers: { cookie } }))
    expect(bySession.status).toBe(200)
    expect(new Uint8Array(await bySession.arrayBuffer())).toEqual(PNG)
    expect((await api.raw(new Request(`${ORIGIN}/jobs/${job.id}/signatures/${sigId}`, { redirect: 'manual' }))).status).toBe(303)

    const count = (await events(job.id)).length
    const noName = await postFile(`${path}/signature`, { idempotency_key: 'F'.repeat(24) + '.signature', signer_name: ' ' }, { signature: PNG })
    expect(noName.status).toBe(422)
    expect(await noName.text()).toContain('<p class="field-error" id="f-signer_name-error">must be 1 to 200 characters</p>')
    const notPng = await postFile(`${path}/signature`, { idempotency_key: 'G'.repeat(24) + '.signature', signer_name: 'Jo' }, { signature: JPEG })
    expect(notPng.status).toBe(422)
    const kept = await notPng.text()
    expect(kept).toContain('<p class="field-error" id="f-signature-error">must be a PNG image</p>')
    expect(kept).toContain('value="Jo"')
    const big = new Uint8Array(1024 * 1024 + 1)
    big.set(PNG)
    expect((await postFile(`${path}/signature`, { idempotency_key: 'H'.repeat(24) + '.signature', signer_name: 'Jo' }, { signature: big })).status).toBe(422)
    expect((await events(job.id)).length).toBe(count)
  })

  test('position: stored as the unit\'s while the job is active; an older fix never overwrites a newer one; a fix from the future is refused; none after the job finished', async () => {
    const { job, unit } = await bringTo(api, key, 'en_route')
    const path = driverPath(job.id)
    const send = (body: Record<string, unknown>) => api.raw(new Request(`${ORIGIN}${path}/position`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/json' }, body: JSON.stringify(body) }))
    const unitPosition = async () => (await call(api, key, 'GET', '/units')).body.data.find((u: any) => u.id === unit!.id).position
    const now = api.clock.now()
    const first = await send({ lat: 45.5, lng: -122.6, accuracy: 8, heading: -1, speed: -1, timestamp: now })
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ stored: true })
    expect(await unitPosition()).toMatchObject({ lat: 45.5, lng: -122.6, accuracy_m: 8, recorded_at: new Date(now).toISOString() })
    const older = await send({ lat: 1, lng: 1, timestamp: now - 60_000 })
    expect(await older.json()).toEqual({ stored: false })
    expect(await unitPosition()).toMatchObject({ lat: 45.5, lng: -122.6 })
    const future = await send({ lat: 2, lng: 2, timestamp: now + 3_600_000 })
    expect(future.status).toBe(422)
    expect(await unitPosition()).toMatchObject({ lat: 45.5 })
    const newer = await send({ lat: 45.6, lng: -122.7, timestamp: now + 1000 })
    expect(await newer.json()).toEqual({ stored: true })
    expect(await unitPosition()).toMatchObject({ lat: 45.6, lng: -122.7 })
    expect((await send({ lat: 'north', lng: 2 })).status).toBe(422)
    // Cross-origin: refused, nothing stored.
    const cross = await api.raw(new Request(`${ORIGIN}${path}/position`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: JSON.stringify({ lat: 3, lng: 3, timestamp: now + 2000 }) }))
    expect(cross.status).toBe(403)
    expect(await unitPosition()).toMatchObject({ lat: 45.6 })

    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'completed' })).status).toBe(200)
    const finished = await send({ lat: 4, lng: 4, timestamp: now + 3000 })
    expect(finished.status).toBe(409)
    expect(await unitPosition()).toMatchObject({ lat: 45.6 })
  })

  test('the state and live stream: a dispatcher\'s change reaches the open page\'s stream; resumed by Last-Event-ID', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const path = driverPath(job.id)
    const state = await (await get(`${path}/state`)).json() as any
    expect(state).toMatchObject({ status: 'dispatched', status_label: 'Dispatched', acknowledged: false, moves: ['en_route'], sharing: true })
    expect(state.actions_html).toContain('>Acknowledge</button>')
    const controller = new AbortController()
    const res = await api.raw(new Request(`${ORIGIN}${path}/events?after=${state.position}`, { signal: controller.signal }))
    expect(res.headers.get('content-type')).toStartWith('text/event-stream')
    const reader = res.body!.getReader()
    let got = ''
    const readUntil = async (needle: string) => {
      while (!got.includes(needle)) got += new TextDecoder().decode((await reader.read()).value)
    }
    await readUntil('event: hello')
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' })).status).toBe(200)
    await readUntil('"status":"en_route"')
    const id = /id: (\d+)\nevent: job\ndata: \{"type":"job.status_changed","status":"en_route"\}/.exec(got)?.[1]
    expect(id).toBeDefined()
    controller.abort()

    // Resumed after the last id seen: the later change comes, the earlier one does not again.
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    const c2 = new AbortController()
    const again = await api.raw(new Request(`${ORIGIN}${path}/events`, { headers: { 'last-event-id': id! }, signal: c2.signal }))
    const r2 = again.body!.getReader()
    let got2 = ''
    while (!got2.includes('"status":"on_scene"')) got2 += new TextDecoder().decode((await r2.read()).value)
    expect(got2).not.toContain('"status":"en_route"')
    c2.abort()
  })

  test('the stream says gone and ends when the job is handed to another unit', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const path = driverPath(job.id)
    const res = await get(`${path}/events`)
    const reader = res.body!.getReader()
    let got = ''
    while (!got.includes('event: hello')) got += new TextDecoder().decode((await reader.read()).value)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: makeUnit(api).id })).status).toBe(200)
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      got += new TextDecoder().decode(value)
    }
    expect(got).toContain('event: gone')
  })

  test('the service worker is served under /d/ as a script, under the page policy, and never cached stale', async () => {
    const res = await get('/d/sw.js')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    const source = await res.text()
    expect(() => new Function(source)).not.toThrow()
    expect(source).toContain("if (req.method !== 'GET') return")
  })

  test('an unknown or malformed token answers 404 like any address with no page', async () => {
    expect((await get('/d/' + 'x'.repeat(24))).status).toBe(404)
    expect((await get('/d/short')).status).toBe(404)
    expect((await get('/d/short/state')).status).toBe(404)
  })
})

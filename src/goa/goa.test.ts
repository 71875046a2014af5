/**
 * The GOA evidence pack through HTTP: a job driven to GOA through the API, the driver's page,
 * the OsmAnd feed (fixes with their own timestamps), the Twilio inbound webhook and the tracking
 * page shows each of those records on /jobs/{id}/goa, and nothing of another job; a job that did
 * not end GOA, another account's job and no session get no pack.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { call, makeJob, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { twilioSignature, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../../test/twilio-standin'
import { driverUrlOf } from '../jobs/job-links'
import { createUser } from '../users/create-user'
import { metresBetween } from './goa-evidence'
import { durationText } from './goa.page'

const ORIGIN = 'http://towline.test'
const PASSWORD = 'correct horse battery'
/** A real 1x1 PNG. */
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0))
/** The pickup: I-5 N at exit 299B, Portland. */
const PICKUP = { lat: 45.5017, lng: -122.6731 }

let api: TestApi
let key: string
let cookie: string
let strangerCookie: string
let otherAccount: string

async function signIn(email: string, accountId: string): Promise<string> {
  await createUser(api.contexts.forOperator(accountId), { email, role: 'dispatcher', password: PASSWORD })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=${encodeURIComponent(PASSWORD)}` }))
  return res.headers.get('set-cookie')!.split(';')[0]!
}

beforeAll(async () => {
  api = startTestApi({ ...NO_LIMITS, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM })
  key = api.key('all')
  cookie = await signIn('dee@example.com', api.accountId)
  otherAccount = api.account('Other Towing')
  strangerCookie = await signIn('eve@other.example', otherAccount)
})
afterAll(() => api.close())

const get = (path: string, withCookie = cookie) => api.raw(new Request(ORIGIN + path, { headers: withCookie ? { cookie: withCookie } : {}, redirect: 'manual' }))
const iso = (ms: number) => new Date(ms).toISOString()
const ok = async (res: Response | Promise<Response>, status = 303) => {
  const r = await res
  expect({ status: r.status, body: r.status === status ? '' : (await r.text()).slice(0, 400) }).toEqual({ status, body: '' })
}

/** The driver link's path the job holds now. */
function driverPath(jobId: string): string {
  const row = api.db.$client.query('SELECT driver_token_sealed FROM jobs WHERE id = ?').get(jobId) as { driver_token_sealed: string }
  return new URL(driverUrlOf(api.links, { driverTokenSealed: row.driver_token_sealed })!).pathname
}
const form = (path: string, fields: Record<string, string>) =>
  api.raw(new Request(ORIGIN + path, { method: 'POST', redirect: 'manual', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }))
function photo(path: string) {
  const fd = new FormData()
  fd.append('photo', new File([PNG as Uint8Array<ArrayBuffer>], 'scene.png', { type: 'image/png' }))
  return api.raw(new Request(ORIGIN + path, { method: 'POST', redirect: 'manual', headers: { origin: ORIGIN }, body: fd }))
}
/** A fix from the unit's phone as Traccar Client sends it (OsmAnd), taken at `atMs`. */
async function fix(deviceId: string, at: { lat: number; lng: number }, atMs: number) {
  const res = await api.request('POST', `/osmand?id=${deviceId}&lat=${at.lat}&lon=${at.lng}&timestamp=${Math.floor(atMs / 1000)}&accuracy=8`)
  expect(res.status).toBe(200)
}
let sids = 0
async function textFromCustomer(from: string, body: string) {
  const params: Record<string, string> = { AccountSid: TWILIO_SID, MessageSid: `SMgoa${String(++sids).padStart(29, '0')}`, From: from, To: TWILIO_FROM, Body: body, NumMedia: '0' }
  const res = await api.request('POST', '/sms/twilio/inbound', {
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(`${ORIGIN}/sms/twilio/inbound`, params) },
  })
  expect(res.status).toBe(200)
}
/** A point `metres` north of `p`. */
const north = (p: { lat: number; lng: number }, metres: number) => ({ lat: p.lat + metres / 111_195, lng: p.lng })

/** Drives a job to GOA as it happens on the road; returns what the pack must show. */
async function jobEndingGoa(opts: { ref: string; phone: string; words: string }) {
  const unit = makeUnit(api, { name: `Truck ${opts.ref}` })
  const job = await makeJob(api, key, {
    external_ref: opts.ref, customer: { name: `Customer ${opts.ref}`, phone: opts.phone, sms_consent: true },
    vehicle: { year: '2019', make: 'Honda', model: 'Civic', plate: `P${opts.ref}` }, pickup: { location: `I-5 N at exit 299B (${opts.ref})`, ...PICKUP },
  })
  expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
  const d = driverPath(job.id)
  api.clock.advance(60_000)
  await ok(form(`${d}/status`, { to: 'en_route', expected_status: 'dispatched' }))
  // On the way: a fix 2 km out, taken ten minutes before the arrival.
  api.clock.advance(10 * 60_000)
  await fix(unit.deviceId, north(PICKUP, 2000), api.clock.now() - 30_000)
  await textFromCustomer(opts.phone, `Where are you? ${opts.words}`)
  api.clock.advance(30_000)
  await ok(form(`${d}/status`, { to: 'on_scene', expected_status: 'en_route' }))
  const arrivedAt = api.clock.now()
  // At the pickup 40 s after arriving (35 m off); then a fix older than it, arriving late, is not kept.
  api.clock.advance(60_000)
  await fix(unit.deviceId, north(PICKUP, 35), arrivedAt + 40_000)
  await fix(unit.deviceId, north(PICKUP, 900), arrivedAt - 5 * 60_000)
  await ok(photo(`${d}/photos`))
  await ok(form(`${job.tracking_url.replace('http://towline.test', '')}/message`, { message: `I left with a friend <${opts.words}>` }))
  api.clock.advance(14 * 60_000)
  await ok(form(`${d}/status`, { to: 'goa', expected_status: 'on_scene', reason: `Nobody at the car (${opts.words})` }))
  return { job, unit, arrivedAt, goaAt: api.clock.now() }
}

const between = (html: string, from: string, to = '</section>') => {
  const at = html.indexOf(from)
  expect(at).toBeGreaterThan(-1)
  return html.slice(at, html.indexOf(to, at))
}

describe('the GOA evidence pack', () => {
  test('shows the job, the arrival, the fix nearest it, time on scene, the reason, photos and the conversation, and nothing of another job', async () => {
    const { job, unit, arrivedAt, goaAt } = await jobEndingGoa({ ref: 'MC-501', phone: '+15035550301', words: 'first' })
    const other = await jobEndingGoa({ ref: 'MC-502', phone: '+15035550302', words: 'SECOND-JOB' })

    const res = await get(`/jobs/${job.id}/goa`)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<h1>GOA evidence pack</h1>')
    // The job.
    const facts = between(html, 'id="h-goa-job"')
    for (const text of ['MC-501', job.id, 'Customer MC-501', '+15035550301', '2019 Honda Civic, PMC-501', 'I-5 N at exit 299B (MC-501)', '45.501700, -122.673100']) expect(facts).toContain(text)
    // Arrival, GOA, time on scene, reason, unit and driver.
    const arrival = between(html, 'id="h-goa-arrival"')
    expect(arrival).toContain(`${iso(arrivedAt).slice(0, 19).replace('T', ' ')} UTC</time>, recorded by the driver&#39;s page (${unit.name})`)
    expect(arrival).toContain(`${iso(goaAt).slice(0, 19).replace('T', ' ')} UTC</time>, by the driver&#39;s page (${unit.name})`)
    expect(arrival).toContain(`<dt>Time on scene</dt><dd>${durationText(goaAt - arrivedAt)}</dd>`)
    expect(durationText(goaAt - arrivedAt)).toBe('15 min')
    expect(arrival).toContain('Nobody at the car (first)')
    expect(arrival).toContain(`<dt>Driver</dt><dd>${unit.driverName}</dd>`)
    // The fix: the one taken 40 s after the arrival, 35 m from the pickup; not the late older one.
    const position = between(html, 'id="h-goa-position"')
    const kept = north(PICKUP, 35)
    expect(position).toContain(`${kept.lat.toFixed(6)}, ${kept.lng.toFixed(6)} (within 8 m)`)
    expect(position).toContain(`${iso(arrivedAt + 40_000).slice(0, 19).replace('T', ' ')} UTC</time>, 40 s after the arrival`)
    expect(Math.round(metresBetween(PICKUP, kept))).toBe(35)
    expect(position).toContain('35 m from the pickup&#39;s coordinates')
    expect(position).toContain('Taken while the job was on scene')
    expect(position).not.toContain(north(PICKUP, 900).lat.toFixed(6))
    // Photos: a thumbnail linking to the stored image, by the driver's unit, and it is served.
    const photoIds = [...between(html, 'id="h-goa-photos"').matchAll(/<a href="\/jobs\/([^/]+)\/photos\/([^"]+)"><img src="\/jobs\/\1\/photos\/\2" alt="Photo 1, by ([^"]+)"/g)]
    expect(photoIds.map((m) => [m[1], m[3]])).toEqual([[job.id, unit.name]])
    const image = await get(`/jobs/${job.id}/photos/${photoIds[0]![2]}`)
    expect(image.status).toBe(200)
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(PNG)
    // The conversation in time order: our request-received text, their text, our en-route texts, their tracking-page message.
    const talk = between(html, 'id="h-goa-messages"')
    const order = ['data-via="text"', 'Where are you? first', 'I left with a friend &lt;first&gt;']
    const at = order.map((s) => talk.indexOf(s))
    expect(at.every((v) => v > -1)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
    expect(talk).toContain('Customer by text')
    expect(talk).toContain('Customer on the tracking page')
    expect(talk).toMatch(/Text to the customer \+15035550301: (queued|sent|delivered)/)
    // The tracking link is a capability: never in a pack that leaves the company.
    expect(talk).toContain('[tracking link]')
    expect(html).not.toContain(new URL(job.tracking_url).pathname)
    // Nothing of the other job.
    for (const leak of ['SECOND-JOB', 'MC-502', other.job.id, other.unit.name, '+15035550302']) expect(html).not.toContain(leak)

    // The job page links to it.
    const jobPage = await (await get(`/jobs/${job.id}`)).text()
    expect(jobPage).toContain(`<a href="/jobs/${job.id}/goa">GOA evidence pack</a>`)
  })

  test('a job that went GOA without arriving says so; the last run counts after a reopen', async () => {
    const unit = makeUnit(api, { name: 'Truck Reopen' })
    const job = await makeJob(api, key, { customer: { name: 'Rae Open', phone: '+15035550303', sms_consent: false }, pickup: { location: 'Hwy 26 mile 40' } })
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    api.clock.advance(60_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    api.clock.advance(60_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'goa' })).status).toBe(200)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' })).status).toBe(200)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    api.clock.advance(60_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'goa', cancel_reason: 'Gone again' })).status).toBe(200)

    const html = await (await get(`/jobs/${job.id}/goa`)).text()
    const arrival = between(html, 'id="h-goa-arrival"')
    expect(arrival).toContain('No arrival on scene was recorded before the GOA.')
    expect(arrival).toContain('<dt>Time on scene</dt><dd>—</dd>')
    expect(arrival).toContain('Gone again')
    expect(arrival).toContain('by the API or the console (key test)')
    expect(between(html, 'id="h-goa-position"')).toContain('No arrival on scene was recorded, so there is no arrival to find a fix for.')
    expect(between(html, 'id="h-goa-messages"')).toContain('(no_consent)')
  })

  test('a job that did not end GOA has no pack (404 saying why) and no link on its page', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Not Goa', phone: '+15035550304', sms_consent: false } })
    const res = await get(`/jobs/${job.id}/goa`)
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(await res.text()).toContain('This job did not end GOA (it is confirmed), so it has no GOA evidence pack.')
    expect(await (await get(`/jobs/${job.id}`)).text()).not.toContain('GOA evidence pack')
  })

  test("another account's GOA job answers exactly as an unknown id; no session goes to sign in", async () => {
    const job = await makeJob(api, key, { customer: { name: 'Private Goa', phone: '+15035550305', sms_consent: false } })
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'goa' })).status).toBe(200)
    expect((await get(`/jobs/${job.id}/goa`)).status).toBe(200)

    const theirs = await get(`/jobs/${job.id}/goa`, strangerCookie)
    const unknown = await get('/jobs/job_01JF3Z8Q2W4E6R8T0Y2U4I6O8P/goa', strangerCookie)
    expect([theirs.status, unknown.status]).toEqual([404, 404])
    const body = await theirs.text()
    expect(body).not.toContain('Private Goa')
    expect(body.replace(job.id, 'ID').replace(/<code>[^<]+<\/code>/, '')).toBe((await unknown.text()).replace('job_01JF3Z8Q2W4E6R8T0Y2U4I6O8P', 'ID').replace(/<code>[^<]+<\/code>/, ''))

    const anonymous = await get(`/jobs/${job.id}/goa`, '')
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get('location')).toStartWith('/login')
  })

  test('the fix shown is the kept one nearest the arrival, not the newest; fixes within 10 s of a kept one are not kept; a re-GOA after a reopen takes its own arrival', async () => {
    const unit = makeUnit(api, { name: 'Truck Nearest' })
    const job = await makeJob(api, key, { customer: { name: 'Nia Near' }, pickup: { location: 'Hwy 30 mile 12', ...PICKUP } })
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    api.clock.advance(5 * 60_000)
    const arrive = api.clock.now() + 60_000
    // Kept: 12 s before the arrival. Not kept: 4 s before it (8 s after the kept one).
    await fix(unit.deviceId, north(PICKUP, 120), arrive - 12_000)
    await fix(unit.deviceId, north(PICKUP, 20), arrive - 4_000)
    api.clock.advance(60_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    expect(api.clock.now()).toBe(arrive)
    // Later fixes, the newest far away: none is nearer the arrival than 12 s.
    api.clock.advance(20 * 60_000)
    await fix(unit.deviceId, north(PICKUP, 300), arrive + 60_000)
    await fix(unit.deviceId, north(PICKUP, 5000), arrive + 19 * 60_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'goa', cancel_reason: 'Nobody there' })).status).toBe(200)
    let position = between(await (await get(`/jobs/${job.id}/goa`)).text(), 'id="h-goa-position"')
    expect(position).toContain(`${north(PICKUP, 120).lat.toFixed(6)}`)
    expect(position).toContain('12 s before the arrival')
    expect(position).toContain('120 m from the pickup')
    expect(position).toContain('Taken before the arrival.')
    for (const notShown of [20, 300, 5000]) expect(position).not.toContain(north(PICKUP, notShown).lat.toFixed(6))

    // Reopened, sent again, arrived again: the second arrival's nearest fix (taken 5 s after it).
    expect((await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' })).status).toBe(200)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    api.clock.advance(30 * 60_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    const second = api.clock.now()
    api.clock.advance(60_000)
    await fix(unit.deviceId, north(PICKUP, 45), second + 5_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'goa', cancel_reason: 'Gone again' })).status).toBe(200)
    position = between(await (await get(`/jobs/${job.id}/goa`)).text(), 'id="h-goa-position"')
    expect(position).toContain(`${north(PICKUP, 45).lat.toFixed(6)}`)
    expect(position).toContain('5 s after the arrival')
  })

  test('pruning drops fixes older than TOWLINE_POSITION_HISTORY_DAYS but keeps those around a GOA job\'s arrival, so its pack still shows the fix', async () => {
    const unit = makeUnit(api, { name: 'Truck Prune' })
    const job = await makeJob(api, key, { customer: { name: 'Pru Old' }, pickup: { location: 'Hwy 99 mile 3', ...PICKUP } })
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    api.clock.advance(60_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    const arrived = api.clock.now()
    api.clock.advance(60_000)
    await fix(unit.deviceId, north(PICKUP, 60), arrived + 30_000)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'goa', cancel_reason: 'No one' })).status).toBe(200)
    // Two hours later, on another job's road: far from any GOA arrival.
    api.clock.advance(2 * 3_600_000)
    await fix(unit.deviceId, north(PICKUP, 8000), api.clock.now())
    const kept = () => (api.db.$client.query('SELECT at FROM unit_positions WHERE unit_id = ? ORDER BY at').all(unit.id) as { at: number }[]).map((r) => r.at)
    expect(kept()).toEqual([arrived + 30_000, api.clock.now()])

    // 31 days on, the background prune (the server's 10-minute round) with the default 30 days.
    api.clock.advance(31 * 86_400_000)
    const { pruneFixes } = await import('../units/position-history')
    const { readConfig } = await import('../config')
    expect(pruneFixes(api.db, api.clock.now(), readConfig({}).positionHistoryMs)).toBe(1)
    expect(kept()).toEqual([arrived + 30_000])
    // The session has long expired by now: a fresh one reads the pack.
    const fresh = await signIn('pru@example.com', api.accountId)
    const position = between(await (await get(`/jobs/${job.id}/goa`, fresh)).text(), 'id="h-goa-position"')
    expect(position).toContain(`${north(PICKUP, 60).lat.toFixed(6)}`)
    expect(position).toContain('30 s after the arrival')
  })
})

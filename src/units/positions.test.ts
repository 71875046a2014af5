/**
 * The open position feed (POST/GET /osmand, unauthenticated): fixes that are not a valid time,
 * lie in the future or hold values out of range are refused and stored nowhere, stored values
 * can never break a view, and unknown device ids cannot be guessed at speed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, TEST_ENGINE, type TestApi } from '../../test/kit'
import { bringTo, call, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { databaseFingerprint } from '../../test/fingerprint'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterAll(() => api.close())

const nowS = () => Math.floor(api.clock.now() / 1000)
const ping = (query: string, address?: string) => api.raw(new Request(`http://localhost/osmand?${query}`), address ? { address } : undefined)
const post = (body: string, type: string) => api.raw(new Request('http://localhost/osmand', { method: 'POST', body, headers: { 'content-type': type } }))

/** A dispatched job whose unit reported one good fix; returns what the API shows. */
async function trackedJob() {
  const { job, unit } = await bringTo(api, key, 'dispatched')
  const res = await ping(`id=${unit!.deviceId}&lat=45.5&lon=-122.6&timestamp=${nowS() - 60}&speed=10&bearing=90&accuracy=5`)
  expect(res.status).toBe(200)
  const position = (await call(api, key, 'GET', `/jobs/${job.id}`)).body.position
  expect(position.lat).toBe(45.5)
  return { job, unit: unit!, position }
}

/** Asserts every view of the unit still answers, with the position it had. */
async function viewsStillAnswer(jobId: string, unitId: string, position: unknown) {
  const got = await call(api, key, 'GET', `/jobs/${jobId}`)
  expect({ status: got.status, position: got.body.position }).toEqual({ status: 200, position })
  const units = await call(api, key, 'GET', '/units?limit=100')
  expect(units.status).toBe(200)
  expect(units.body.data.find((u: any) => u.id === unitId).position).toEqual(position)
  const write = await call(api, key, 'PATCH', `/jobs/${jobId}`, { urgency: `u${Math.random()}` })
  expect({ status: write.status, position: write.body.position }).toEqual({ status: 200, position })
}

describe('fix times', () => {
  test('timestamp=1e300 is refused (400) and stored nowhere; GET /units, GET /jobs/{id} and writes keep answering', async () => {
    const { job, unit, position } = await trackedJob()
    for (const ts of ['1e300', '-1e300', '1e20', 'Infinity', 'NaN', '0x7fffffff', '2026-02-30T10:00:00Z', '%2B275760-09-13T00:00:00Z', 'yesterday', '2026-11-21']) {
      const before = databaseFingerprint(api.db)
      const res = await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${ts}`)
      expect({ ts, status: res.status }).toEqual({ ts, status: 400 })
      expect(databaseFingerprint(api.db)).toEqual(before)
    }
    await viewsStillAnswer(job.id, unit.id, position)
  })

  test('a fix from the year 2100 is refused, so it cannot freeze the position: the next real fix is stored', async () => {
    const { job, unit } = await trackedJob()
    const before = databaseFingerprint(api.db)
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${Date.UTC(2100, 0, 1) / 1000}`)).status).toBe(400)
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=2100-01-01T00:00:00Z`)).status).toBe(400)
    expect(databaseFingerprint(api.db)).toEqual(before)
    api.clock.advance(1_000)
    expect((await ping(`id=${unit.deviceId}&lat=47&lon=-121&timestamp=${nowS()}`)).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position).toMatchObject({ lat: 47, lng: -121 })
  })

  test('up to 5 minutes ahead of the clock is accepted (phones drift); more is refused', async () => {
    const { job, unit } = await trackedJob()
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${nowS() + 6 * 60}`)).status).toBe(400)
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${nowS() + 4 * 60}`)).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position).toMatchObject({ lat: 46, recorded_at: new Date((nowS() + 240) * 1000).toISOString() })
  })

  test('ISO times with an offset and milliseconds are read; a fix older than the stored one or over 7 days old is answered 200 and not stored', async () => {
    const { job, unit, position } = await trackedJob()
    const before = databaseFingerprint(api.db)
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${nowS() - 120}`)).status).toBe(200)
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${nowS() - 8 * 86_400}`)).status).toBe(200)
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=0`)).status).toBe(200)
    expect(databaseFingerprint(api.db)).toEqual(before)
    await viewsStillAnswer(job.id, unit.id, position)
    // The same instant written in UTC+2, ten seconds ago.
    const at = Math.floor(api.clock.now() / 1000) * 1000 - 10_000
    const local = `${new Date(at + 2 * 3_600_000).toISOString().slice(0, 19)}.250+02:00`
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${encodeURIComponent(local)}`)).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position.recorded_at).toBe(new Date(at + 250).toISOString())
  })
})

describe('fix values', () => {
  test('lat/lon/speed/bearing/accuracy that are not numbers in range are refused (400) and stored nowhere', async () => {
    const { job, unit, position } = await trackedJob()
    const t = nowS()
    const bad = [
      'lat=NaN&lon=1', 'lat=Infinity&lon=1', 'lat=abc&lon=1', 'lat=0x10&lon=1', 'lat=91&lon=1', 'lat=1&lon=-180.5', 'lat=1e999&lon=1',
      'lat=1&lon=1&speed=Infinity', 'lat=1&lon=1&speed=fast', 'lat=1&lon=1&speed=600', 'lat=1&lon=1&bearing=400', 'lat=1&lon=1&bearing=-90',
      'lat=1&lon=1&accuracy=-5', 'lat=1&lon=1&accuracy=NaN', 'lat=&lon=1', 'lon=1',
    ]
    for (const q of bad) {
      const before = databaseFingerprint(api.db)
      const res = await ping(`id=${unit.deviceId}&timestamp=${t}&${q}`)
      expect({ q, status: res.status }).toEqual({ q, status: 400 })
      expect(res.headers.get('content-type')).toStartWith('text/plain')
      expect(databaseFingerprint(api.db)).toEqual(before)
    }
    await viewsStillAnswer(job.id, unit.id, position)
  })

  test('speed and bearing of -1 mean "unknown" (what phones send without a heading) and are stored as null', async () => {
    const { job, unit } = await trackedJob()
    api.clock.advance(1_000)
    expect((await ping(`id=${unit.deviceId}&lat=46&lon=-122&timestamp=${nowS()}&speed=-1&bearing=-1&accuracy=12`)).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position).toMatchObject({ lat: 46, speed_kph: null, heading: null, accuracy_m: 12 })
  })

  test("Traccar Client's JSON body is read, and hostile JSON is refused without a 500", async () => {
    const { job, unit, position } = await trackedJob()
    const coords = (c: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ device_id: unit.deviceId, location: { timestamp: new Date(api.clock.now()).toISOString(), coords: { latitude: 46, longitude: -122, ...c } }, ...extra })
    const hostile = [
      JSON.stringify({ device_id: { toString: 1 }, location: { coords: { latitude: 1, longitude: 1 } } }),
      coords({ latitude: '46' }), coords({ latitude: { valueOf: 1 } }), coords({ speed: 'x' }), coords({ heading: [1] }), coords({ accuracy: -1 }),
      coords({}, { location: { timestamp: '2100-01-01T00:00:00Z', coords: { latitude: 1, longitude: 1 } } }),
      coords({}, { location: { timestamp: { toString: 1 }, coords: { latitude: 1, longitude: 1 } } }),
      `{"device_id":"${unit.deviceId}","location":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      `{"device_id":"${unit.deviceId}","location":{"coords":{"latitude":1e999,"longitude":1}}}`,
      '[1,2]', '"x"', 'null', '{"a":', '{"device_id":"\\ud800"}',
    ]
    for (const body of hostile) {
      const before = databaseFingerprint(api.db)
      const res = await post(body, 'application/json')
      expect({ body: body.slice(0, 120), status: res.status }).toEqual({ body: body.slice(0, 120), status: 400 })
      expect(databaseFingerprint(api.db)).toEqual(before)
    }
    await viewsStillAnswer(job.id, unit.id, position)
    api.clock.advance(1_000)
    expect((await post(coords({ speed: 10, heading: 180, accuracy: 4 }), 'application/json')).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position).toMatchObject({ lat: 46, lng: -122, speed_kph: 36, heading: 180, accuracy_m: 4 })
  })

  test('form bodies are read like the query', async () => {
    const { job, unit } = await trackedJob()
    api.clock.advance(1_000)
    expect((await post(`id=${unit.deviceId}&lat=44&lon=-120&timestamp=${nowS()}&altitude=12&batt=80`, 'application/x-www-form-urlencoded')).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position).toMatchObject({ lat: 44, lng: -120 })
    expect((await post(`id=${unit.deviceId}&lat=91&lon=-120&timestamp=${nowS()}`, 'application/x-www-form-urlencoded')).status).toBe(400)
  })
})

describe('stored values never break a view', () => {
  test('a position stored before these checks (time 1e300, lat Infinity) renders as null: units, the job and writes to it answer 200', async () => {
    const { job, unit } = await trackedJob()
    // PostgreSQL's bigint refuses to hold a time of 1e300: there only the real columns' infinities can be stored.
    const stored = [['position_at', 1e300], ['position_at', -1e300], ['lat', Infinity], ['speed_kph', -Infinity]] as const
    for (const [column, value] of stored.filter(([c]) => TEST_ENGINE === 'sqlite' || c !== 'position_at')) {
      const good = api.db.$client.query(`SELECT ${column} AS v FROM units WHERE id = ?`).get(unit.id) as { v: number }
      api.db.$client.query(`UPDATE units SET ${column} = ? WHERE id = ?`).run(value, unit.id)
      const expected = column === 'speed_kph' ? expect.objectContaining({ speed_kph: null }) : null
      const got = await call(api, key, 'GET', `/jobs/${job.id}`)
      expect({ column, status: got.status, position: got.body.position }).toEqual({ column, status: 200, position: expected })
      const units = await call(api, key, 'GET', '/units?limit=100')
      expect({ column, status: units.status }).toEqual({ column, status: 200 })
      expect(units.body.data.find((u: any) => u.id === unit.id).position).toEqual(expected)
      const write = await call(api, key, 'PATCH', `/jobs/${job.id}`, { urgency: column })
      expect({ column, status: write.status, position: write.body.position }).toEqual({ column, status: 200, position: expected })
      api.db.$client.query(`UPDATE units SET ${column} = ? WHERE id = ?`).run(good.v, unit.id)
    }
    // A newer real fix replaces a stored 1e300 (the largest time PostgreSQL holds) instead of being ignored as "older".
    api.db.$client.query('UPDATE units SET position_at = ? WHERE id = ?').run(TEST_ENGINE === 'sqlite' ? 1e300 : Number.MAX_SAFE_INTEGER, unit.id)
    api.clock.advance(1_000)
    expect((await ping(`id=${unit.deviceId}&lat=44&lon=-120&timestamp=${nowS()}`)).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position).toMatchObject({ lat: 44, recorded_at: new Date(nowS() * 1000).toISOString() })
  })
})

describe('unknown device ids', () => {
  test('after 20 unknown ids in a minute an address gets 429 with Retry-After for every report (a known id\'s fix still stored) until the minute has passed', async () => {
    const unit = makeUnit(api)
    const from = '203.0.113.7'
    for (let i = 0; i < 20; i++) expect((await ping(`id=guess-${i}&lat=1&lon=1`, from)).status).toBe(404)
    const limited = await ping('id=guess-20&lat=1&lon=1', from)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // A known id answers the same, so the limit cannot be used to tell ids apart; its fix is
    // still stored, so phones behind the same address keep reporting.
    const known = await ping(`id=${unit.deviceId}&lat=12&lon=13`, from)
    expect({ status: known.status, text: await known.text() }).toEqual({ status: 429, text: await (await ping('id=guess-x&lat=1&lon=1', from)).text() })
    expect(api.db.$client.query('SELECT lat, lng FROM units WHERE id = ?').get(unit.id)).toEqual({ lat: 12, lng: 13 })
    // Other addresses are not affected, and an IPv6 client is counted by its /64.
    expect((await ping(`id=${unit.deviceId}&lat=1&lon=1`, '198.51.100.1')).status).toBe(200)
    for (let i = 0; i < 20; i++) expect((await ping(`id=v6-${i}&lat=1&lon=1`, `2001:db8:1:2::${i.toString(16)}`)).status).toBe(404)
    expect((await ping('id=v6-x&lat=1&lon=1', '2001:db8:1:2:ffff::1')).status).toBe(429)
    api.clock.advance(Number(limited.headers.get('retry-after')) * 1000)
    expect((await ping('id=guess-21&lat=1&lon=1', from)).status).toBe(404)
    api.clock.advance(60_000)
    expect((await ping(`id=${unit.deviceId}&lat=1&lon=1`, from)).status).toBe(200)
  })
})

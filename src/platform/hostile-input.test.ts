/**
 * What every request can rely on, through HTTP: hostile JSON is refused fast and in the error
 * shape, validation messages never stringify what was sent, strict times, lone surrogates,
 * strings where numbers belong, and body caps counted while reading (chunked included).
 * Every refusal is checked for having written nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectError, startTestApi, type TestApi } from '../../test/kit'
import { makeJob, makeUnit, NEW_JOB, NO_LIMITS } from '../../test/jobs-helpers'
import { databaseFingerprint } from '../../test/fingerprint'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterAll(() => api.close())

/** Sends a raw body to an API route and returns the response with how long it took. */
async function send(method: string, path: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  const started = performance.now()
  const res = await api.raw(new Request(`http://localhost${path}`, {
    method, body, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, duplex: 'half',
  } as RequestInit))
  return { res, ms: performance.now() - started }
}

/** Asserts the refusal wrote nothing anywhere in the database. */
async function refusedWithoutWriting(run: () => Promise<Response>, status: number, code: string) {
  const before = databaseFingerprint(api.db)
  const err = await expectError(await run(), status, code)
  expect(databaseFingerprint(api.db)).toEqual(before)
  return err
}

const nested = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth)

describe('hostile JSON', () => {
  test('20,000 nested objects in a 120 KB body are 400 invalid_json within milliseconds', async () => {
    const body = nested(20_000, '{"a":', '}')
    expect(body.length).toBeGreaterThan(100_000)
    const before = databaseFingerprint(api.db)
    const { res, ms } = await send('POST', '/api/v1/jobs', body)
    const err = await expectError(res, 400, 'invalid_json')
    expect(err.message).toContain('64')
    expect(ms).toBeLessThan(1_000)
    expect(databaseFingerprint(api.db)).toEqual(before)
  })

  test('5,000 nested arrays, at the top or inside a field, are 400 invalid_json', async () => {
    for (const body of [`{"customer":{"name":${nested(5_000, '[', ']', '')}},"pickup":{"location":"x"}}`, `{"a":${nested(5_000, '[', ']', '')}}`]) {
      const { res, ms } = await send('POST', '/api/v1/jobs', body)
      await expectError(res, 400, 'invalid_json')
      expect(ms).toBeLessThan(1_000)
    }
  })

  test('64 levels are accepted as JSON (then judged by the schema); 65 are not', async () => {
    const at = (depth: number) => `{"customer":{"name":"Ann"},"pickup":{"location":"x"},"vehicle":${nested(depth - 2, '{"a":', '}', '{}')}}`
    await expectError((await send('POST', '/api/v1/jobs', at(64))).res, 422, 'validation_failed')
    await expectError((await send('POST', '/api/v1/jobs', at(65))).res, 400, 'invalid_json')
    // Brackets inside strings are text, not nesting.
    const job = await (await send('POST', '/api/v1/jobs', JSON.stringify({ ...NEW_JOB, destination: '['.repeat(400) + '{"'.repeat(40) }))).res.json()
    expect(job.destination).toStartWith('[[[')
  })

  test('values like {"toString":1} where a string, a number or an object belongs are 422 naming the field, never 500', async () => {
    const job = await makeJob(api, key)
    const hostile = '{"toString":1,"valueOf":"x","constructor":{"prototype":1},"__proto__":{"polluted":true}}'
    const cases: [string, string, string, string][] = [
      ['POST', '/api/v1/jobs', `{"customer":{"name":${hostile}},"pickup":{"location":"x"}}`, 'customer.name'],
      ['POST', '/api/v1/jobs', `{"customer":{"name":"Ann"},"pickup":{"location":"x"},"quote_cents":${hostile}}`, 'quote_cents'],
      ['POST', '/api/v1/jobs', `{"customer":{"name":"Ann"},"pickup":{"location":"x","lat":[[[[1]]]]}}`, 'pickup.lat'],
      ['POST', '/api/v1/jobs', `{"customer":{"name":"Ann"},"pickup":{"location":"x"},"vehicle":${hostile}}`, 'vehicle.toString'],
      ['POST', '/api/v1/jobs', `{"customer":{"name":"Ann"},"pickup":{"location":"x"},"vehicle":{"year":${hostile}}}`, 'vehicle.year'],
      ['PATCH', `/api/v1/jobs/${job.id}`, `{"status":${hostile}}`, 'status'],
      ['PATCH', `/api/v1/jobs/${job.id}`, `{"__proto__":{"status":"completed"},"constructor":{"prototype":{"status":"completed"}}}`, '__proto__'],
      ['POST', `/api/v1/jobs/${job.id}/notes`, `{"text":${hostile}}`, 'text'],
      ['POST', `/api/v1/jobs/${job.id}/assign`, `{"unit_id":${hostile}}`, 'unit_id'],
      ['POST', '/api/v1/webhooks', `{"url":${hostile},"events":["*"]}`, 'url'],
    ]
    for (const [method, path, body, field] of cases) {
      const err = await refusedWithoutWriting(async () => (await send(method, path, body)).res, 422, 'validation_failed')
      expect({ body, fields: err.details.fields.map((f: any) => f.path) }).toEqual({ body, fields: expect.arrayContaining([field]) })
    }
    expect(({} as any).polluted).toBeUndefined()
    expect(({} as any).status).toBeUndefined()
  })

  test('deeply nested arrays in a string field are 422 naming it, in milliseconds', async () => {
    const { res, ms } = await send('POST', '/api/v1/jobs', `{"customer":{"name":${nested(60, '[', ']', '"x"')}},"pickup":{"location":"x"}}`)
    const err = await expectError(res, 422, 'validation_failed')
    expect(err.details.fields).toEqual([{ path: 'customer.name', message: 'must be a string of 1 to 200 characters' }])
    expect(ms).toBeLessThan(1_000)
  })

  test('the body must be a JSON object', async () => {
    for (const body of ['[]', '"x"', '1', 'null', 'true', '{"a":1', '\u0000', '{"a":1}{"b":2}']) {
      await refusedWithoutWriting(async () => (await send('POST', '/api/v1/jobs', body)).res, 400, 'invalid_json')
    }
  })
})

describe('validation messages in plain words', () => {
  const fieldsOf = async (method: string, path: string, body: unknown) =>
    (await expectError((await send(method, path, JSON.stringify(body))).res, 422, 'validation_failed')).details.fields

  test('name the valid values, the expected type and the limits, never typebox\'s words', async () => {
    const job = await makeJob(api, key)
    expect(await fieldsOf('POST', '/api/v1/jobs', { ...NEW_JOB, status: 'bogus' })).toEqual([{ path: 'status', message: 'must be one of pending, confirmed' }])
    const patch = await fieldsOf('PATCH', `/api/v1/jobs/${job.id}`, { status: 'parked', quote_cents: 1.5, final_price_cents: -1, customer: { name: '' }, pickup: { lat: 91 } })
    expect(patch).toEqual([
      { path: 'status', message: 'must be one of pending, confirmed, dispatched, en_route, on_scene, towing, at_destination, completed, cancelled, goa' },
      { path: 'customer.name', message: 'must be a string of 1 to 200 characters' },
      { path: 'pickup.lat', message: 'must be a number from -90 to 90, or null' },
      { path: 'quote_cents', message: 'must be a whole number from 0 to 100000000, or null' },
      { path: 'final_price_cents', message: 'must be a whole number from 0 to 100000000, or null' },
    ])
    expect(await fieldsOf('POST', '/api/v1/jobs', { pickup: { location: 'x' }, colour: 'red' })).toEqual([
      { path: 'customer', message: 'is required' },
      { path: 'colour', message: 'is not a field this request accepts' },
    ])
    expect(await fieldsOf('POST', '/api/v1/jobs', { ...NEW_JOB, customer: {} })).toEqual([{ path: 'customer.name', message: 'is required' }])
    expect(await fieldsOf('POST', `/api/v1/jobs/${job.id}/notes`, { text: 'x', customer_visible: 'yes' })).toEqual([{ path: 'customer_visible', message: 'must be true or false' }])
    const err = await expectError((await send('POST', '/api/v1/jobs', JSON.stringify({ ...NEW_JOB, status: 'bogus' }))).res, 422, 'validation_failed')
    expect(err.message).toBe('status: must be one of pending, confirmed')
  })

  test('name at most 10 problems', async () => {
    const body = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`extra_${i}`, i]))
    const fields = await fieldsOf('POST', '/api/v1/jobs', body)
    expect(fields.length).toBe(10)
  })

  test('query problems are named the same way', async () => {
    const err = await expectError(await api.request('GET', '/api/v1/jobs?limit=ten', { key }), 422, 'validation_failed')
    expect(err.details.fields).toEqual([{ path: 'limit', message: 'must be a whole number' }])
    // What was sent is never echoed, in a query either.
    const status = await expectError(await api.request('GET', '/api/v1/jobs?status=bogus', { key }), 422, 'validation_failed')
    expect(status.details.fields).toEqual([{ path: 'status', message: 'must be one of pending, confirmed, dispatched, en_route, on_scene, towing, at_destination, completed, cancelled, goa, or several of them separated by commas' }])
    expect(JSON.stringify(status)).not.toContain('bogus')
  })

  test('a query parameter a route does not take is refused, on routes that take none too, and nothing is written', async () => {
    const job = await makeJob(api, key)
    for (const [path, name] of [[`/api/v1/jobs/${job.id}?expand=unit`, 'expand'], ['/api/v1/me?verbose=1', 'verbose'], [`/api/v1/webhooks/whk_x?x=1`, 'x']]) {
      const err = await expectError(await api.request('GET', path, { key }), 422, 'validation_failed')
      expect({ path, fields: err.details.fields }).toEqual({ path, fields: [{ path: name, message: 'is not a field this request accepts' }] })
    }
    const created = await refusedWithoutWriting(async () => (await send('POST', '/api/v1/jobs?dry_run=true', JSON.stringify(NEW_JOB))).res, 422, 'validation_failed')
    expect(created.details.fields).toEqual([{ path: 'dry_run', message: 'is not a field this request accepts' }])
    const patched = await refusedWithoutWriting(async () => (await send('PATCH', `/api/v1/jobs/${job.id}?notify=false`, JSON.stringify({ destination: 'Elsewhere' }))).res, 422, 'validation_failed')
    expect(patched.details.fields).toEqual([{ path: 'notify', message: 'is not a field this request accepts' }])
    // A bare "?" names nothing.
    expect((await api.request('GET', `/api/v1/jobs/${job.id}?`, { key })).status).toBe(200)
  })
})

describe('a string where a number belongs', () => {
  test('is refused with 422, never read as the number it spells', async () => {
    const job = await makeJob(api, key)
    for (const [method, path, body, field] of [
      ['POST', '/api/v1/jobs', { ...NEW_JOB, quote_cents: '15' }, 'quote_cents'],
      ['POST', '/api/v1/jobs', { ...NEW_JOB, pickup: { location: 'x', lat: '45.5' } }, 'pickup.lat'],
      ['PATCH', `/api/v1/jobs/${job.id}`, { final_price_cents: '1200' }, 'final_price_cents'],
      ['PATCH', `/api/v1/jobs/${job.id}`, { quote_cents: '1e3' }, 'quote_cents'],
    ] as [string, string, unknown, string][]) {
      const err = await refusedWithoutWriting(async () => (await send(method, path, JSON.stringify(body))).res, 422, 'validation_failed')
      expect(err.details.fields.map((f: any) => f.path)).toEqual([field])
    }
  })

  test('numbers JSON cannot hold exactly (1e309) are refused where a number belongs', async () => {
    const err = await refusedWithoutWriting(async () => (await send('POST', '/api/v1/jobs', `{"customer":{"name":"Ann"},"pickup":{"location":"x","lat":1e309}}`)).res, 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['pickup.lat'])
  })
})

describe('lone surrogates', () => {
  test('a lone UTF-16 surrogate in any string or key is 422 naming where it is, and nothing is stored', async () => {
    const job = await makeJob(api, key)
    const cases: [string, string, string, string][] = [
      ['POST', '/api/v1/jobs', '{"customer":{"name":"Ann \\ud800"},"pickup":{"location":"x"}}', 'customer.name'],
      ['POST', '/api/v1/jobs', '{"customer":{"name":"Ann"},"pickup":{"location":"\\udfff tail"}}', 'pickup.location'],
      ['POST', '/api/v1/jobs', '{"customer":{"name":"Ann"},"pickup":{"location":"x"},"vehicle":{"make":"\\ud83d"}}', 'vehicle.make'],
      ['PATCH', `/api/v1/jobs/${job.id}`, '{"destination":"x\\ude00\\ud83d"}', 'destination'],
      ['POST', `/api/v1/jobs/${job.id}/notes`, '{"text":"hi","\\ud800":1}', '\ufffd'],
      ['POST', '/api/v1/webhooks', '{"url":"https://127.0.0.1:9/x","events":["*","\\udc00"]}', 'events.1'],
    ]
    for (const [method, path, body, where] of cases) {
      const err = await refusedWithoutWriting(async () => (await send(method, path, body)).res, 422, 'validation_failed')
      expect({ body, fields: err.details.fields }).toEqual({ body, fields: [{ path: where, message: 'holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair); send well-formed text' }] })
      expect(JSON.stringify(err)).not.toMatch(/[\ud800-\udfff]/u)
    }
  })

  test('the NUL character in any string or key is 422 naming where it is, and nothing is stored', async () => {
    const job = await makeJob(api, key)
    const cases: [string, string, string, string][] = [
      ['POST', '/api/v1/jobs', '{"customer":{"name":"Ann\\u0000"},"pickup":{"location":"x"}}', 'customer.name'],
      ['PATCH', `/api/v1/jobs/${job.id}`, '{"destination":"a\\u0000b"}', 'destination'],
      ['POST', `/api/v1/jobs/${job.id}/notes`, '{"text":"hi","\\u0000":1}', '\u0000'],
    ]
    for (const [method, path, body, where] of cases) {
      const err = await refusedWithoutWriting(async () => (await send(method, path, body)).res, 422, 'validation_failed')
      expect({ body, fields: err.details.fields }).toEqual({ body, fields: [{ path: where, message: 'holds the NUL character (\\u0000), which no text may hold' }] })
    }
  })

  test('a well-formed pair (an emoji) is stored and read back', async () => {
    const res = (await send('POST', '/api/v1/jobs', '{"customer":{"name":"Ann \\ud83d\\ude00"},"pickup":{"location":"x"}}')).res
    expect(res.status).toBe(201)
    expect((await res.json()).customer.name).toBe('Ann 😀')
  })
})

describe('lengths count characters, as the document\'s maxLength does', () => {
  test('an emoji is one character: 200 in a name, 500 in a location, 2000 in a note are taken; one more is 422 and nothing is stored', async () => {
    const e = '\u{1F600}'
    const res = (await send('POST', '/api/v1/jobs', JSON.stringify({ customer: { name: e.repeat(200) }, pickup: { location: e.repeat(500) }, destination: e.repeat(500) }))).res
    expect(res.status).toBe(201)
    const job = await res.json()
    expect([...job.customer.name].length).toBe(200)
    expect((await send('POST', `/api/v1/jobs/${job.id}/notes`, JSON.stringify({ text: e.repeat(2000) }))).res.status).toBe(201)
    for (const [method, path, body, field, limit] of [
      ['POST', '/api/v1/jobs', { customer: { name: e.repeat(201) }, pickup: { location: 'x' } }, 'customer.name', '1 to 200'],
      ['PATCH', `/api/v1/jobs/${job.id}`, { destination: e.repeat(501) }, 'destination', 'at most 500'],
      ['POST', `/api/v1/jobs/${job.id}/notes`, { text: e.repeat(2001) }, 'text', '1 to 2000'],
    ] as [string, string, unknown, string, string][]) {
      const err = await refusedWithoutWriting(async () => (await send(method, path, JSON.stringify(body))).res, 422, 'validation_failed')
      expect(err.details.fields[0].path).toBe(field)
      expect(err.details.fields[0].message).toContain(`${limit} characters`)
    }
  })

  test('a cancel reason of three emoji is three characters; three zero-width spaces are no reason', async () => {
    const job = await makeJob(api, key)
    const invisible = await refusedWithoutWriting(async () => (await send('PATCH', `/api/v1/jobs/${job.id}`, JSON.stringify({ status: 'cancelled', cancel_reason: '\u200b\u200b\u200b' }))).res, 422, 'job_reason_required')
    expect(invisible.details).toMatchObject({ field: 'cancel_reason', length: 0 })
    const res = (await send('PATCH', `/api/v1/jobs/${job.id}`, JSON.stringify({ status: 'cancelled', cancel_reason: '\u{1F697}\u{1F4A5}\u{1F6A7}' }))).res
    expect(res.status).toBe(200)
  })
})

describe('times', () => {
  test('an impossible eta_at (2026-02-30, 24:00:01, month 13) or a year outside 0000-9999 is 422 naming eta_at, never rolled over', async () => {
    const job = await makeJob(api, key)
    for (const eta of ['2026-02-30T10:00:00Z', '2026-11-21T24:00:01Z', '2026-13-01T00:00:00Z', '+275760-09-13T00:00:00.000Z', '+010000-01-01T00:00:00Z', '-000001-01-01T00:00:00Z', '2026-11-21', 'Sat, 21 Nov 2026 10:00:00 GMT']) {
      for (const [method, path, body] of [['POST', '/api/v1/jobs', { ...NEW_JOB, eta_at: eta }], ['PATCH', `/api/v1/jobs/${job.id}`, { eta_at: eta }]] as const) {
        const err = await refusedWithoutWriting(async () => (await send(method, path, JSON.stringify(body))).res, 422, 'validation_failed')
        expect({ eta, method, fields: err.details.fields.map((f: any) => f.path) }).toEqual({ eta, method, fields: ['eta_at'] })
      }
    }
  })

  test('eta_at with an offset is stored as the same instant in UTC', async () => {
    const job = await makeJob(api, key, { eta_at: '2026-11-21T11:45:00+02:00' })
    expect(job.eta_at).toBe('2026-11-21T09:45:00.000Z')
  })

  test('since and updated_since refuse impossible dates and years outside 0000-9999, and take a date alone', async () => {
    for (const since of ['2026-02-30', '2026-02-30T00:00:00Z', '2026-11-21T24:00:01Z', '%2B275760-09-13T00:00:00Z', '10000-01-01']) {
      const err = await expectError(await api.request('GET', `/api/v1/jobs?since=${since}`, { key }), 422, 'validation_failed')
      expect(err.details.fields.map((f: any) => f.path)).toEqual(['since'])
    }
    expect((await api.request('GET', '/api/v1/jobs?updated_since=2026-11-21', { key })).status).toBe(200)
  })
})

describe('bodies', () => {
  /** A stream of `total` bytes of JSON-looking text, sent chunked (no Content-Length). */
  const chunked = (total: number) => {
    let sent = 0
    const piece = new TextEncoder().encode('{"a":"' + 'x'.repeat(16 * 1024 - 6))
    const stream = new ReadableStream<Uint8Array>({
      pull(c) { if (sent >= total) return c.close(); sent += piece.length; c.enqueue(piece) },
    })
    return { stream, sent: () => sent }
  }

  test('a chunked body over 256 KiB is 413 payload_too_large, counted while reading: the rest is never read', async () => {
    const body = chunked(8 * 1024 * 1024)
    const { res } = await send('POST', '/api/v1/jobs', body.stream)
    const err = await expectError(res, 413, 'payload_too_large')
    expect(err.details.limit_bytes).toBe(256 * 1024)
    expect(body.sent()).toBeLessThan(1024 * 1024)
  })

  test('a declared Content-Length over the cap is 413 before a byte is read, and a key is still checked first', async () => {
    const declared = { 'content-length': String(300 * 1024) }
    const never = new ReadableStream<Uint8Array>({ pull() { throw new Error('the body was read') } })
    await expectError((await send('POST', '/api/v1/jobs', never, declared)).res, 413, 'payload_too_large')
    await expectError(await api.request('POST', '/api/v1/jobs', { body: JSON.stringify({ text: 'x'.repeat(300 * 1024) }), headers: declared }), 401, 'unauthorized')
  })

  test('a chunked body to /osmand over 16 KiB or to /sms/twilio/inbound over 64 KiB is 413, the rest never read', async () => {
    for (const [path, cap] of [['/osmand', 16 * 1024], ['/sms/twilio/inbound', 64 * 1024]] as const) {
      const body = chunked(8 * 1024 * 1024)
      const res = await api.raw(new Request(`http://localhost${path}`, { method: 'POST', body: body.stream, headers: { 'content-type': 'application/x-www-form-urlencoded' }, duplex: 'half' } as RequestInit))
      expect({ path, status: res.status }).toEqual({ path, status: 413 })
      expect(body.sent()).toBeLessThan(cap + 256 * 1024)
    }
  })

  test('a body just under the /osmand cap is read', async () => {
    const unit = makeUnit(api)
    const form = `id=${unit.deviceId}&lat=45.5&lon=-122.6&timestamp=${Math.floor(api.clock.now() / 1000)}&pad=${'x'.repeat(15 * 1024)}`
    const res = await api.raw(new Request('http://localhost/osmand', { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } }))
    expect(res.status).toBe(200)
  })
})

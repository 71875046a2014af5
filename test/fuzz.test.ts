/**
 * Property-based fuzzing of every route, in-process on a real database: every operation of
 * the OpenAPI document and the unauthenticated routes get random and hostile bodies (deep
 * nesting, huge strings, prototype keys, lone surrogates, 1e309, wrong types, unknown fields),
 * queries, path ids and headers (Authorization and Idempotency-Key garbage, Content-Type lies,
 * huge values). Whatever is sent: never a 5xx; every API error in the error shape; /healthz
 * answering meanwhile; and a refusal writes nothing to any table.
 *
 * The seed is fixed (FUZZ_SEED to change it, FUZZ_RUNS for more runs per route); a failure
 * prints the seed and the shrunk request. Nothing leaves this machine: webhook targets are a
 * closed loopback port, and any other outgoing request fails the suite.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { startTestApi, type TestApi } from './kit'
import { databaseFingerprint } from './fingerprint'
import { kindOf, makeResources, unknownIdOf, validBodyFor, type ResourceIds } from './resources'
import { pathParams } from './scope-checks'
import { ERROR_CATALOG } from '../src/platform/errors'

const SEED = Number(process.env.FUZZ_SEED ?? 20261121)
const RUNS = Number(process.env.FUZZ_RUNS ?? 14)

let api: TestApi
let key: string
let theirKey: string
let own: ResourceIds
let theirs: ResourceIds
let operations: { method: string; path: string; query: string[]; body: boolean }[]
const escaped: string[] = []
const realFetch = globalThis.fetch

beforeAll(async () => {
  // Webhook tests and retries really send: only to loopback, and the suite fails if anything else is tried.
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const host = new URL(input instanceof Request ? input.url : String(input)).hostname.replace(/^\[|\]$/g, '')
    if (host !== '127.0.0.1' && host !== '::1') { escaped.push(host); throw new Error(`fuzz: refused to send to ${host}`) }
    return realFetch(input, init)
  }) as typeof fetch
  api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_WEBHOOK_TIMEOUT_MS: '500', TOWLINE_RATE_LIMIT_READS: '1000000', TOWLINE_RATE_LIMIT_WRITES: '1000000' })
  key = api.key('all')
  const rival = api.account('Rival Towing')
  theirKey = api.key('all', { accountId: rival })
  own = await makeResources(api, key, api.accountId, 'mine')
  theirs = await makeResources(api, theirKey, rival, 'theirs')
  const doc: any = await (await api.request('GET', '/api/v1/openapi.json')).json()
  operations = Object.entries<any>(doc.paths).flatMap(([path, methods]) => Object.entries<any>(methods).map(([method, op]) => ({
    method: method.toUpperCase(), path,
    query: (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name as string),
    body: op.requestBody !== undefined,
  })))
})
afterAll(() => {
  globalThis.fetch = realFetch
  api?.close()
})

// ---- hostile building blocks -------------------------------------------------------------

const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '', ' ', 'a.b', '$where', '\u0000', 'x'.repeat(300)]
const hostileKey = fc.oneof(fc.constantFrom(...HOSTILE_KEYS), fc.string({ maxLength: 12 }))
const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  {
    weight: 3, arbitrary: fc.constantFrom(
      '', ' ', '\u0000', '\ud800', 'a\udc00b', '\udbff\udbff', '😀', '\u202e', 'null', 'true', '15', '-0', '1e309', '1e300', '4102444800', '-1', 'NaN', 'Infinity', '0x10',
      '2026-02-30T00:00:00Z', '2026-11-21T24:00:01Z', '+275760-09-13T00:00:00.000Z', '2026-11-21', '%E0%A4%A', '%00', '../../etc/passwd',
      '<script>alert(1)</script>', "'; DROP TABLE jobs; --", 'https://127.0.0.1:9/x', 'http://169.254.169.254/', 'pending', 'goa', '*',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 70_000 }).map((n) => 'x'.repeat(n)) },
)
/** What a broken or hostile phone puts in a number or time parameter. */
const hostileNumberText = fc.oneof(
  fc.constantFrom('1e300', '-1e300', '1e309', '4102444800', '4102444800000', '1e20', 'NaN', 'Infinity', '-Infinity', '-1', '0', '-0', '0x10', '1,5', ' 1', '',
    '2100-01-01T00:00:00Z', '2026-02-30T10:00:00Z', '+275760-09-13T00:00:00Z', '2026-11-21'),
  fc.double().map(String),
  fc.integer().map(String),
)
const hostileNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, 0.1, 1.5, -1, 1e308, 2 ** 53 + 2, 100_000_001, '__1E309__'))
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString, hostileNumber, fc.boolean(), fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(hostileKey, tie('value'), { maxKeys: 3 }),
    fc.constant({ toString: 1, valueOf: 'x' }),
  ),
})).value

/** JSON text of a value; a `"__1E309__"` marker becomes the literal 1e309 (a number JSON.parse reads as Infinity). */
const jsonText = (v: unknown) => JSON.stringify(v)?.replaceAll('"__1E309__"', '1e309') ?? 'null'

const nested = (depth: number, open: string, close: string) => open.repeat(depth) + '1' + close.repeat(depth)
const hostileText = fc.oneof(
  fc.integer({ min: 60, max: 20_000 }).map((d) => nested(d, '{"a":', '}')),
  fc.integer({ min: 60, max: 20_000 }).map((d) => `{"customer":{"name":${nested(d, '[', ']')}}}`),
  fc.string({ maxLength: 60 }),
  fc.constantFrom(
    '', ' ', '{', '{"a":1', '{"a":1}{"b":2}', '\ufeff{}', '[]', 'null', '"x"', '1e309', '{"a":1e309}', '{"text":"\\ud800"}', '{"\\udc00":1}',
    '{"__proto__":{"status":"completed"},"constructor":{"prototype":{"admin":true}}}', '{"a":"\\u0000"}', '{"a":' + '"x'.repeat(10) + '}',
    `{"customer":{"name":"${'x'.repeat(300 * 1024)}"},"pickup":{"location":"x"}}`,
  ),
)

/** Applies one mutation to a body the route accepts: a field set to a hostile value, an unknown field, or a field removed. */
function mutate(body: unknown, pick: number, how: 'set' | 'add' | 'delete', value: unknown, extraKey: string): unknown {
  const copy = JSON.parse(JSON.stringify(body ?? {}))
  const paths: string[][] = []
  const walk = (o: any, at: string[]) => { for (const k of Object.keys(o)) { paths.push([...at, k]); if (o[k] && typeof o[k] === 'object') walk(o[k], [...at, k]) } }
  walk(copy, [])
  const target = paths[pick % Math.max(1, paths.length)] ?? []
  const parent = target.slice(0, -1).reduce((o: any, k) => o[k], copy)
  const last = target[target.length - 1]
  if (how === 'add' || last === undefined) Object.defineProperty(parent, extraKey, { value, enumerable: true, configurable: true, writable: true })
  else if (how === 'delete') delete parent[last]
  else parent[last] = value
  return copy
}

/** URLs are UTF-8: a lone surrogate cannot travel in one, so it goes as U+FFFD. */
const enc = (s: string) => encodeURIComponent(s.replace(/\p{Cs}/gu, '\ufffd'))

/** Header values must be Latin-1 without line breaks; anything else is squeezed into that. */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e\x80-\xff]/g, '?')
const CONTENT_TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=zz', 'application/json; charset=utf-16', 'application/xml', '', 'application/json, text/html']

const headersArb = fc.record({
  auth: fc.oneof({ weight: 6, arbitrary: fc.constant('mine') }, fc.constantFrom('theirs', 'none', 'Bearer', 'Basic dXNlcjpwYXNz', 'Bearer svc_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'Bearer ' + 'a'.repeat(9000)), hostileString.map((s) => `Bearer ${s}`)),
  idempotency: fc.option(hostileString, { nil: undefined }),
  contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
  requestId: fc.option(hostileString, { nil: undefined }),
  extra: fc.option(fc.tuple(fc.constantFrom('x-forwarded-for', 'host', 'accept', 'x-huge', 'content-encoding', 'transfer-encoding'), fc.oneof(hostileString, fc.constant('x'.repeat(16_000)))), { nil: undefined }),
})

const bodyArb = (seedBody: unknown) => fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.nat(), fc.constantFrom('set' as const, 'add' as const, 'delete' as const), hostileValue, hostileKey).map(([pick, how, value, extra]) => jsonText(mutate(seedBody, pick, how, value, extra))) },
  { weight: 1, arbitrary: fc.constant(jsonText(seedBody ?? {})) },
  { weight: 2, arbitrary: hostileValue.map(jsonText) },
  { weight: 3, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.constant(undefined) },
)

/** A path segment for a parameter: one of ours, one of theirs, an id naming nothing, or something hostile. */
const idArb = (kind: string) => fc.oneof(
  { weight: 3, arbitrary: fc.constant(enc(own[kind] ?? `${kind}_x`)) },
  { weight: 2, arbitrary: fc.constant(theirs[kind] ?? `${kind}_y`) },
  { weight: 1, arbitrary: fc.constant(unknownIdOf(kind, own)) },
  { weight: 2, arbitrary: hostileString.map(enc) },
  { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%00', '..', '%2F', '%', 'x'.repeat(5000)) },
)

const queryArb = (names: string[]) => fc.array(fc.tuple(
  fc.oneof(fc.constantFrom(...(names.length ? names : ['limit'])), hostileKey, fc.constantFrom('limit[]', 'a[b]', '__proto__[x]')),
  fc.oneof(hostileString.map(enc), fc.constantFrom('%E0%A4%A', '%', '1e300', '-1', '0', '101', '25', '2026-11-21T09:00:00Z', 'pending,goa', '')),
), { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${enc(k)}=${v}`).join('&'))

interface Sent { method: string; url: string; headers: Record<string, string>; body?: string }

/** Sends one fuzzed request beside a /healthz, and checks everything a request can rely on. */
async function sendAndCheck(req: Sent) {
  const before = databaseFingerprint(api.db)
  const started = performance.now()
  let request: Request
  try {
    request = new Request(`http://localhost${req.url}`, { method: req.method, headers: req.headers, body: req.body })
  } catch {
    return // a request no client could send (a header fetch itself refuses)
  }
  const [res, health] = await Promise.all([api.raw(request), api.request('GET', '/healthz')])
  const ms = performance.now() - started
  const text = await res.text()
  const label = `${req.method} ${req.url.slice(0, 200)}`
  expect({ label, serverError: res.status >= 500, status: res.status }).toEqual({ label, serverError: false, status: res.status })
  expect({ label, health: health.status }).toEqual({ label, health: 200 })
  // In-process there is no other client; what it shows is that no input blocks the loop for long.
  expect({ label, slow: ms > 2000 }).toEqual({ label, slow: false })
  let error: any
  if (res.status >= 400 && req.url.startsWith('/api/')) {
    const body = JSON.parse(text)
    error = body.error
    expect({ label, code: error?.code, status: (ERROR_CATALOG as any)[error?.code]?.status }).toEqual({ label, code: error?.code, status: res.status })
    expect({ label, message: typeof error.message, database: error.details?.database_message }).toEqual({ label, message: 'string', database: error.message })
    expect(text).not.toMatch(/\p{Cs}/u)
  }
  // A PATCH whose status change stood before its other fields failed says so (transition_applied).
  if (res.status >= 400 && !error?.details?.transition_applied) {
    expect({ label, written: databaseFingerprint(api.db) }).toEqual({ label, written: before })
  }
  // Whatever a device sent, the views that show positions keep answering.
  if (req.url.startsWith('/osmand')) {
    for (const view of ['/api/v1/units?limit=100', `/api/v1/jobs/${own.jobs}`, `/api/v1/jobs?limit=100`]) {
      const got = await api.request('GET', view, { key })
      expect({ label, view, status: got.status }).toEqual({ label, view, status: 200 })
    }
  }
}

type FuzzHeaders = typeof headersArb extends fc.Arbitrary<infer H> ? H : never
const headersFor = (h: FuzzHeaders, hasBody: boolean): Record<string, string> => {
  const out: Record<string, string> = {}
  if (h.auth === 'mine') out.authorization = `Bearer ${key}`
  else if (h.auth === 'theirs') out.authorization = `Bearer ${theirKey}`
  else if (h.auth !== 'none') out.authorization = headerSafe(h.auth)
  if (h.idempotency !== undefined) out['idempotency-key'] = headerSafe(h.idempotency)
  if (h.contentType !== undefined) out['content-type'] = h.contentType
  else if (hasBody) out['content-type'] = 'application/json'
  if (h.requestId !== undefined) out['request-id'] = headerSafe(h.requestId)
  if (h.extra) out[h.extra[0]] = headerSafe(h.extra[1])
  return out
}

// ---- the properties ------------------------------------------------------------------------

describe('fuzzing every route', () => {
  test('every operation of the OpenAPI document: no 5xx, the error shape, /healthz answering, nothing written on refusal', async () => {
    expect(operations.length).toBeGreaterThan(10)
    for (const [i, op] of operations.entries()) {
      const params = pathParams(op.path)
      const seedBody = validBodyFor(op.method, op.path, own)
      const withBody = op.method !== 'GET' && op.method !== 'HEAD'
      await fc.assert(fc.asyncProperty(
        fc.tuple(...params.map((p) => idArb(kindOf(op.path, p)))) as fc.Arbitrary<string[]>,
        queryArb(op.query), headersArb, withBody ? bodyArb(seedBody) : fc.constant(undefined),
        async (ids, query, headers, body) => {
          let k = 0
          const path = '/api/v1' + op.path.replace(/\{[^}]+\}/g, () => ids[k++]!)
          await sendAndCheck({ method: op.method, url: query ? `${path}?${query}` : path, headers: headersFor(headers, body !== undefined), body })
        },
      ), { numRuns: RUNS, seed: SEED + i })
    }
    expect(escaped).toEqual([])
  })

  test('the unauthenticated routes: /osmand (GET and POST), Twilio webhooks, /healthz, the OpenAPI document and the docs page', async () => {
    const fix = () => `id=${own.device}&lat=45.5&lon=-122.6&timestamp=${Math.floor(api.clock.now() / 1000)}&speed=10&bearing=90&accuracy=5`
    const routes: { method: string; path: string; query: string[]; seed?: () => unknown; form?: boolean; seedQuery?: () => string }[] = [
      { method: 'GET', path: '/osmand', query: ['id', 'lat', 'lon', 'timestamp', 'speed', 'bearing', 'accuracy', 'deviceid'], seedQuery: fix },
      { method: 'POST', path: '/osmand', query: ['id', 'lat', 'lon', 'timestamp'], form: true, seed: fix },
      { method: 'POST', path: '/osmand', query: [], seed: () => ({ device_id: own.device, location: { timestamp: new Date(api.clock.now()).toISOString(), coords: { latitude: 45.5, longitude: -122.6, speed: 3, heading: 90, accuracy: 5 } } }) },
      { method: 'POST', path: '/sms/twilio/inbound', query: [], form: true, seed: () => 'From=%2B15035550142&Body=STOP&MessageSid=SM1&NumMedia=2&MediaUrl0=x' },
      { method: 'POST', path: '/sms/twilio/status', query: [], form: true, seed: () => 'MessageSid=SM1&MessageStatus=delivered' },
      { method: 'GET', path: '/healthz', query: [] },
      { method: 'GET', path: '/api/v1/openapi.json', query: [] },
      { method: 'GET', path: '/api/v1/docs', query: [] },
    ]
    for (const [i, route] of routes.entries()) {
      const seed = route.seed?.()
      const body = route.method === 'GET' ? fc.constant(undefined)
        : route.form ? fc.oneof(fc.constant(seed as string), fc.tuple(fc.nat(), fc.oneof(hostileNumberText, hostileString)).map(([n, v]) => (seed as string).split('&').map((kv, j, all) => (j === n % all.length ? `${kv.split('=')[0]}=${enc(v)}` : kv)).join('&')), hostileText, fc.string())
          : bodyArb(seed)
      /** A valid fix with one parameter made hostile (or the whole query random). */
      const query = route.seedQuery
        ? fc.oneof(fc.tuple(fc.nat(), fc.oneof(hostileNumberText, hostileString)).map(([n, v]) => route.seedQuery!().split('&').map((kv, j, all) => (j === n % all.length ? `${kv.split('=')[0]}=${enc(v)}` : kv)).join('&')), queryArb(route.query))
        : queryArb(route.query)
      await fc.assert(fc.asyncProperty(query, headersArb, body, fc.integer({ min: -400, max: 400 }), async (query, headers, b, drift) => {
        api.clock.advance(1000 + drift)
        const url = query ? `${route.path}?${query}` : route.path
        await sendAndCheck({ method: route.method, url, headers: headersFor(headers, b !== undefined), body: b as string | undefined })
      }), { numRuns: route.path === '/osmand' ? RUNS * 4 : RUNS * 2, seed: SEED + 1000 + i })
    }
    expect(escaped).toEqual([])
  })
})

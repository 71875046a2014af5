/**
 * The HTTP layer pages plug into, through HTTP with page fixture routes (test/page-fixtures.ts)
 * mounted beside the real API: per-route body caps counted while reading, form and multipart
 * parsing under hostile input, HTML error pages outside /api/ (JSON or plain text where a route
 * answers programs), security headers by kind, the same-origin guard of state-changing page
 * requests, and the request id on every error log line.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { expectError, startTestApi, type TestApi } from '../../test/kit'
import { pageFixtures, type Calls } from '../../test/page-fixtures'
import { twilioSignature, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../../test/twilio-standin'
import { databaseFingerprint } from '../../test/fingerprint'
import { createLogger } from './log'
import { MAX_REQUEST_BODY_BYTES } from './route-props'

const OWN = 'http://towline.test'
const calls: Calls = {}
const logLines: string[] = []
let api: TestApi
let key: string

beforeAll(() => {
  api = startTestApi({ TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM }, {
    pages: [pageFixtures(calls)],
    logger: createLogger('info', { write: (line: string) => { logLines.push(line) } }),
  })
  key = api.key('all')
})
afterAll(() => api.close())

/** Sends a request through the app; page posts carry this service's Origin unless `headers` say otherwise. */
function send(method: string, path: string, opts: { body?: BodyInit; type?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(method !== 'GET' ? { origin: OWN } : {}), ...(opts.type ? { 'content-type': opts.type } : {}), ...opts.headers }
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k]
  return api.raw(new Request(`http://localhost${path}`, { method, headers, body: opts.body, duplex: 'half' } as RequestInit))
}
const FORM = 'application/x-www-form-urlencoded'
const postForm = (path: string, body: BodyInit, headers: Record<string, string> = {}) => send('POST', path, { body, type: FORM, headers })

/** A chunked stream of `total` bytes (no Content-Length); `sent()` says how much of it was pulled. */
function chunked(total: number, piece = new TextEncoder().encode('a='.padEnd(64 * 1024, 'x'))) {
  let sent = 0
  const stream = new ReadableStream<Uint8Array>({ pull(c) { if (sent >= total) return c.close(); sent += piece.length; c.enqueue(piece) } })
  return { stream, sent: () => sent }
}
/** A body that fails the request if anyone reads it. */
const untouchable = () => new ReadableStream<Uint8Array>({ pull() { throw new Error('the body was read') } })

/** Builds a multipart body from parts (raw strings or bytes, joined as given). */
function multipart(boundary: string, parts: { headers: string[]; content: string | Uint8Array }[], close = true): Uint8Array<ArrayBuffer> {
  const chunks: (string | Uint8Array)[] = []
  for (const p of parts) chunks.push(`--${boundary}\r\n${p.headers.join('\r\n')}\r\n\r\n`, p.content, '\r\n')
  if (close) chunks.push(`--${boundary}--\r\n`)
  return bytesOf(...chunks)
}
/** Joins text (as UTF-8) and bytes into one body. */
const bytesOf = (...chunks: (string | Uint8Array | number[])[]): Uint8Array<ArrayBuffer> =>
  new Uint8Array(Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : Buffer.from(c))))) as Uint8Array<ArrayBuffer>
const field = (name: string, value: string | Uint8Array) => ({ headers: [`Content-Disposition: form-data; name="${name}"`], content: value })
const file = (name: string, filename: string, content: string | Uint8Array, type = 'image/jpeg') => ({ headers: [`Content-Disposition: form-data; name="${name}"; filename="${filename}"`, `Content-Type: ${type}`], content })
const MP = (boundary: string) => `multipart/form-data; boundary=${boundary}`

/** Asserts an HTML error page: status, title, the request id of the response, and returns the page. */
async function expectPage(res: Response, status: number) {
  const html = await res.text()
  expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status, type: 'text/html; charset=utf-8' })
  expect(html).toMatch(new RegExp(`<title>${status} [^<]+</title>`))
  expect(html).toContain(`<code>${res.headers.get('request-id')}</code>`)
  expect(html).not.toMatch(/<script|at \/|\.ts:\d/)
  return html
}

describe('body caps declared with the route, counted while reading', () => {
  test('a form over its 64 KiB cap is a 413 page before the handler runs: declared lengths unread, chunked bodies cut at the cap; a route that declares no body reads none', async () => {
    const before = calls.form ?? 0
    const declared = await postForm('/fixture/form', untouchable(), { 'content-length': String(65 * 1024) })
    expect(await expectPage(declared, 413)).toContain('larger than 64 KiB')
    expect(declared.headers.get('connection')).toBe('close')
    const body = chunked(8 * 1024 * 1024)
    await expectPage(await postForm('/fixture/form', body.stream), 413)
    expect(body.sent()).toBeLessThan(256 * 1024)
    expect(calls.form ?? 0).toBe(before)
    expect((await postForm('/fixture/form', `a=${'x'.repeat(60 * 1024)}`)).status).toBe(200)
    const none = await send('POST', '/fixture/nobody', { body: untouchable(), type: FORM })
    expect(await none.json()).toEqual({ body: {} })
  })

  test('a chunked 11 MiB upload to the 10 MiB photo route is 413, the rest never taken; a 9 MiB photo arrives intact', async () => {
    const body = chunked(11 * 1024 * 1024)
    expect(await expectPage(await send('POST', '/fixture/photo', { body: body.stream, type: MP('zz') }), 413)).toContain('larger than 10 MiB')
    expect(body.sent()).toBeLessThan(10.5 * 1024 * 1024)
    const bytes = new Uint8Array(9 * 1024 * 1024)
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + (i >>> 11)) & 0xff
    const res = await send('POST', '/fixture/photo', { body: multipart('ph0to', [file('photo', 'truck.jpg', bytes), field('caption', 'Front bumper')]), type: MP('ph0to') })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ photo: { file: 'truck.jpg', type: 'image/jpeg', size: bytes.length }, caption: 'Front bumper', sha256: createHash('sha256').update(bytes).digest('hex') })
  })

  test('the CSV route takes 2 MiB: a 3 MiB file is 413 naming the limit', async () => {
    const big = multipart('csv', [file('file', 'jobs.csv', 'x'.repeat(3 * 1024 * 1024), 'text/csv')])
    expect(await expectPage(await send('POST', '/fixture/import', { body: big, type: MP('csv') }), 413)).toContain('larger than 2 MiB')
  })

  test("a page's JSON endpoint takes a JSON object up to 256 KiB and answers its refusals in JSON", async () => {
    const ok = await send('POST', '/fixture/state', { body: '{"lat":45.5}', type: 'application/json' })
    expect(await ok.json()).toEqual({ got: { lat: 45.5 } })
    await expectError(await send('POST', '/fixture/state', { body: `{"a":"${'x'.repeat(300 * 1024)}"}`, type: 'application/json' }), 413, 'payload_too_large')
    await expectError(await send('POST', '/fixture/state', { body: '{"a":', type: 'application/json' }), 400, 'invalid_json')
    await expectError(await send('POST', '/fixture/state', { body: '[1]', type: 'application/json' }), 400, 'invalid_json')
  })

})

describe('forms', () => {
  const fields = async (body: string) => {
    const res = await postForm('/fixture/form', body)
    expect(res.status).toBe(200)
    return res.json()
  }

  test('urlencoded fields arrive decoded (+, %-escapes, UTF-8), `name[]` fields as lists, prototype names as plain fields', async () => {
    expect(await fields('name=Ann+Lee&note=caf%C3%A9%20%F0%9F%98%80&empty=&bare&scopes[]=jobs%3Aread&scopes%5B%5D=roster%3Aread&one[]=x')).toEqual({
      name: 'Ann Lee', note: 'café 😀', empty: '', bare: '', scopes: ['jobs:read', 'roster:read'], one: ['x'],
    })
    expect(await fields('')).toEqual({})
    expect(await fields('__proto__=x&constructor=y&toString=z')).toEqual(JSON.parse('{"__proto__":"x","constructor":"y","toString":"z"}'))
    expect(({} as any).x).toBeUndefined()
  })

  test('refuses with a 400 page, before the handler: a repeated field, malformed or non-UTF-8 escapes, non-UTF-8 bytes, a huge name, too many fields', async () => {
    const before = calls.form ?? 0
    const cases: [BodyInit, string][] = [
      ['a=1&a=2', 'appears more than once'],
      ['a=1&a[]=2', 'appears more than once'],
      ['a=%zz', 'malformed'],
      ['a=%', 'malformed'],
      ['a=%ff', 'not UTF-8'],
      ['a=%ED%A0%80', 'not UTF-8'],
      [bytesOf([0x61, 0x3d, 0xff, 0xfe]), 'not UTF-8'],
      [`${'n'.repeat(201)}=1`, 'longer than 200'],
      [`${'n'.repeat(50_000)}=1`, 'longer than 200'],
      [Array.from({ length: 5000 }, (_, i) => `f${i}=1`).join('&'), 'more than 256 fields'],
      ['=1', 'no name'],
    ]
    for (const [body, says] of cases) {
      const started = performance.now()
      const page = await expectPage(await postForm('/fixture/form', body), 400)
      expect({ body: String(body).slice(0, 40), says: page.includes(says) }).toEqual({ body: String(body).slice(0, 40), says: true })
      expect(performance.now() - started).toBeLessThan(1_000)
    }
    expect(calls.form ?? 0).toBe(before)
    // A route may take fewer fields than the default.
    expect(await expectPage(await postForm('/fixture/few', 'a=1&b=2&c=3&d=4'), 400)).toContain('more than 3 fields')
  })

  test('multipart: text fields, Files with name, type and size, a file part without filename as text, an empty file input left out, `name[]` files as a list', async () => {
    const body = multipart('b0und', [
      field('caption', 'Rear view — café'),
      file('photo', 'C:\\fakepath\\rear.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47]), 'image/png'),
      { headers: ['Content-Disposition: form-data; name="note"', 'Content-Type: application/octet-stream'], content: 'no filename, so text' },
      { headers: ['Content-Disposition: form-data; name="spare"; filename=""', 'Content-Type: application/octet-stream'], content: '' },
      file('more[]', 'a.jpg', 'aa'),
      file('more[]', 'b.jpg', 'bbb'),
      field('empty', ''),
    ])
    const res = await send('POST', '/fixture/photo', { body, type: MP('b0und') })
    expect(await res.json()).toEqual({
      caption: 'Rear view — café',
      photo: { file: 'rear.png', type: 'image/png', size: 4 },
      note: 'no filename, so text',
      more: [{ file: 'a.jpg', type: 'image/jpeg', size: 2 }, { file: 'b.jpg', type: 'image/jpeg', size: 3 }],
      empty: '',
      sha256: createHash('sha256').update(new Uint8Array([0x89, 0x50, 0x4e, 0x47])).digest('hex'),
    })
  })

  test('multipart boundaries: quoted, a preamble, and a boundary-like line inside a file are read right', async () => {
    const quoted = multipart('a b:c', [field('x', '1')])
    expect(await (await send('POST', '/fixture/import', { body: quoted, type: 'multipart/form-data; boundary="a b:c"' })).json()).toEqual({ x: '1' })
    const preamble = bytesOf('ignored preamble\r\n', multipart('pp', [field('x', '2')]))
    expect(await (await send('POST', '/fixture/import', { body: preamble, type: MP('pp') })).json()).toEqual({ x: '2' })
    const csv = 'line1\r\n--zzX not a frame\r\n--zz  \tstill content\r\nend'
    const tricky = multipart('zz', [file('file', 'a.csv', csv, 'text/csv')])
    // "--zz" followed by text is no frame: only padding then CRLF, or "--", ends a part.
    expect(await (await send('POST', '/fixture/import', { body: tricky, type: MP('zz') })).json()).toEqual({ file: { file: 'a.csv', type: 'text/csv', size: csv.length } })
  })

  test('hostile multipart bodies are a 400 page, never more: boundary tricks, a part without a name, thousands of parts, huge headers, non-UTF-8 text; random bodies never a 5xx', async () => {
    const before = calls.import ?? 0
    const enc = (s: string) => new TextEncoder().encode(s)
    const cases: [string, Uint8Array<ArrayBuffer> | string, string][] = [
      ['multipart/form-data', multipart('zz', [field('x', '1')]), 'valid boundary'],
      [MP('x'.repeat(71)), multipart('x'.repeat(71), [field('x', '1')]), 'valid boundary'],
      [MP('zz'), multipart('zz', [field('x', '1')], false), 'ended before its closing boundary'],
      [MP('zz'), 'no frames at all', 'no part framed'],
      [MP('zz'), multipart('other', [field('x', '1')]), 'no part framed'],
      [MP('zz'), multipart('zz', [{ headers: ['Content-Disposition: form-data'], content: 'x' }]), 'no field name'],
      [MP('zz'), multipart('zz', [{ headers: ['Content-Disposition: attachment; name="x"'], content: 'x' }]), 'not form-data'],
      [MP('zz'), multipart('zz', [{ headers: ['Content-Type: text/plain'], content: 'x' }]), 'no field name'],
      [MP('zz'), multipart('zz', [{ headers: ['Content-Disposition: form-data; name="x', 'X: y'], content: 'x' }]), 'malformed Content-Disposition'],
      [MP('zz'), multipart('zz', [{ headers: ['Content-Disposition: form-data; name="x"', ` folded: ${'y'.repeat(10)}`], content: 'x' }]), 'malformed header'],
      [MP('zz'), multipart('zz', [{ headers: ['Content-Disposition: form-data; name="x"', `X-Huge: ${'y'.repeat(20_000)}`], content: 'x' }]), 'no complete header block'],
      [MP('zz'), multipart('zz', [field('x', bytesOf([0xc3, 0x28]))]), 'not UTF-8'],
      [MP('zz'), bytesOf('--zz\r\nContent-Disposition: form-data; name="', [0xff], '"\r\n\r\nx\r\n--zz--\r\n'), 'not UTF-8'],
      [MP('zz'), multipart('zz', [field('x', '1'), field('x', '2')]), 'appears more than once'],
      [MP('zz'), multipart('zz', [field('n'.repeat(300), '1')]), 'longer than 200'],
      [MP('zz'), multipart('zz', Array.from({ length: 3000 }, (_, i) => field(`f${i}`, 'v'))), 'more than 256 parts'],
    ]
    for (const [type, body, says] of cases) {
      const bytes = typeof body === 'string' ? enc(body) : body
      const started = performance.now()
      const page = await expectPage(await send('POST', '/fixture/import', { body: bytes, type }), 400)
      expect({ says, found: page.includes(says) }).toEqual({ says, found: true })
      expect(performance.now() - started).toBeLessThan(1_000)
    }
    expect(calls.import ?? 0).toBe(before)
    // And whatever else is thrown at the form routes: never a 5xx.
    const piece = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('--zz', '\r\n', '--zz--', '\r\n\r\n', 'Content-Disposition: form-data; name="a"', '; filename="f"', '%', '%ff', '&', '=', '[]', '"', '\u0000', '\ud800', 'é'))
    await fc.assert(fc.asyncProperty(fc.array(piece, { maxLength: 30 }), fc.constantFrom('/fixture/form', '/fixture/import', '/fixture/state'), fc.constantFrom(FORM, MP('zz'), 'multipart/form-data; boundary="zz"', 'text/plain', ''), async (pieces, path, type) => {
      const res = await send('POST', path, { body: pieces.join(''), type, headers: type ? {} : { 'content-type': '' } })
      expect({ pieces, status: res.status < 500 }).toEqual({ pieces, status: true })
    }), { numRuns: 300, seed: 20261121 })
  })
})

describe('error pages outside /api/', () => {
  test('an unknown path is an HTML 404 that echoes nothing it was sent; under /api/ it stays JSON', async () => {
    const page = await expectPage(await send('GET', '/t/%3Cscript%3Ealert(1)%3C%2Fscript%3E?q=<b>hi</b>'), 404)
    expect(page).toContain('There is no page at this address.')
    expect(page).not.toContain('alert(')
    expect(page).not.toContain('<b>hi')
    await expectError(await send('GET', '/api/v1/nope'), 404, 'not_found')
  })

  test('a known path with another method is 405 with Allow: a page for pages, plain text for device callbacks; the API keeps its 404', async () => {
    const page = await send('GET', '/fixture/form')
    expect(page.headers.get('allow')).toBe('POST')
    expect(await expectPage(page, 405)).toContain('does not take GET requests')
    const osmand = await send('PUT', '/osmand')
    expect({ status: osmand.status, allow: osmand.headers.get('allow'), type: osmand.headers.get('content-type') }).toEqual({ status: 405, allow: 'GET, HEAD, POST', type: 'text/plain; charset=utf-8' })
    const json = await send('PUT', '/fixture/state')
    expect(json.headers.get('allow')).toBe('GET, HEAD, POST')
    await expectError(json, 405, 'method_not_allowed')
    await expectError(await api.request('DELETE', '/api/v1/me', { key }), 404, 'not_found')
  })

  test('a 429 page says the wait (escaped) and carries Retry-After', async () => {
    const res = await send('GET', '/fixture/limited')
    expect(res.headers.get('retry-after')).toBe('900')
    const page = await expectPage(res, 429)
    expect(page).toContain('Too many attempts for &lt;b&gt;ann@example.com&lt;/b&gt;; retry in 900 seconds.')
  })

  test('a crash on a page is a 500 page with no stack or message; on a page\'s JSON endpoint it is the JSON error', async () => {
    const page = await expectPage(await send('GET', '/fixture/boom'), 500)
    expect(page).not.toContain('boom')
    expect(page).toContain('Something went wrong on our side.')
    await expectError(await send('GET', '/fixture/boom.json'), 500, 'internal_error')
  })

  test('a handler that answers with a promise (without being declared async) is awaited; its refusal or crash is rendered as if thrown', async () => {
    const later = await send('GET', '/fixture/later')
    expect({ status: later.status, text: await later.text() }).toMatchObject({ status: 200, text: expect.stringContaining('a page, later') })
    const limited = await send('GET', '/fixture/later-limited')
    expect(limited.headers.get('retry-after')).toBe('60')
    expect(await expectPage(limited, 429)).toContain('Too many attempts; retry in 60 seconds.')
    const crash = await send('GET', '/fixture/later-boom.json')
    expect(crash.headers.get('request-id')).toMatch(/^req_/)
    expect(crash.headers.get('x-content-type-options')).toBe('nosniff')
    await expectError(crash, 500, 'internal_error')
  })

  test('routes that answer programs keep their answers: /healthz JSON, /osmand and Twilio callbacks plain text', async () => {
    const health = await send('GET', '/healthz')
    expect({ status: health.status, json: (await health.json() as any).status }).toEqual({ status: 200, json: 'ok' })
    const osmand = await send('POST', '/osmand', { body: 'x'.repeat(17 * 1024), type: FORM })
    expect({ status: osmand.status, type: osmand.headers.get('content-type'), text: await osmand.text() }).toEqual({ status: 413, type: 'text/plain; charset=utf-8', text: 'The request body is larger than 16 KiB.\n' })
    const twilio = await send('POST', '/sms/twilio/inbound', { body: 'a=1&a=2', type: FORM })
    expect({ status: twilio.status, type: twilio.headers.get('content-type') }).toEqual({ status: 400, type: 'text/plain; charset=utf-8' })
  })

  test('the page\'s only inline style is allowed by the hash in its own policy, which allows nothing else', async () => {
    const res = await send('GET', '/nothing-here')
    const html = await res.text()
    const style = /<style>([^<]*)<\/style>/.exec(html)![1]!
    const policy = res.headers.get('content-security-policy')!
    expect(policy).toBe(`default-src 'none'; style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`)
  })
})

describe('security headers', () => {
  const headersOf = (res: Response) => Object.fromEntries([...res.headers].filter(([k]) => !['request-id', 'content-length', 'date'].includes(k)))

  test('an HTML page: same-origin scripts, styles and connections, images also from the tile server, no framing, no caching, geolocation and camera for itself', async () => {
    const res = await send('GET', '/fixture/page')
    expect(headersOf(res)).toEqual({
      'content-type': 'text/html; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https://tile.openstreetmap.org; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'",
      'cross-origin-opener-policy': 'same-origin',
      'permissions-policy': 'geolocation=(self), camera=(self), microphone=(), payment=(), usb=()',
      'cache-control': 'no-store',
    })
  })

  test('an authenticated API response, an API error and /healthz: nosniff, no Referer, no framing, nothing loads, no caching, no HSTS on http', async () => {
    for (const res of [await api.request('GET', '/api/v1/me', { key }), await send('GET', '/api/v1/nope'), await send('GET', '/healthz')]) {
      const h = headersOf(res)
      expect<Record<string, string | undefined>>({
        nosniff: h['x-content-type-options'], frame: h['x-frame-options'], referrer: h['referrer-policy'], csp: h['content-security-policy'],
        cache: h['cache-control'], hsts: h['strict-transport-security'], coop: h['cross-origin-opener-policy'],
      }).toEqual({ nosniff: 'nosniff', frame: 'DENY', referrer: 'no-referrer', csp: "default-src 'none'; frame-ancestors 'none'", cache: 'no-store', hsts: undefined, coop: undefined })
    }
  })

  test('the docs script keeps its own caching; the docs page has its own policy (inline styles for the reference UI), still same-origin only', async () => {
    const script = await send('GET', '/api/v1/docs/scalar.js')
    expect(script.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(script.headers.get('x-content-type-options')).toBe('nosniff')
    await script.arrayBuffer()
    const docs = await send('GET', '/api/v1/docs')
    const csp = docs.headers.get('content-security-policy')!
    expect(csp).toContain("style-src 'self' 'unsafe-inline'")
    expect(csp).toContain("script-src 'self';")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(docs.headers.get('referrer-policy')).toBe('same-origin')
  })

  test('Strict-Transport-Security only when the public URL is https', async () => {
    const https = startTestApi({ TOWLINE_PUBLIC_URL: 'https://towline.example' })
    try {
      for (const path of ['/healthz', '/nothing-here']) {
        expect((await https.request('GET', path)).headers.get('strict-transport-security')).toBe('max-age=31536000')
      }
    } finally { https.close() }
  })
})

describe('the same-origin guard of state-changing page requests', () => {
  const attacks: [string, Record<string, string>][] = [
    ['no Origin, no Sec-Fetch-Site', { origin: '' }],
    ['Origin: null', { origin: 'null' }],
    ['Origin: null, cross-site', { origin: 'null', 'sec-fetch-site': 'cross-site' }],
    ['no Origin, cross-site', { origin: '', 'sec-fetch-site': 'cross-site' }],
    ['no Origin, same-site', { origin: '', 'sec-fetch-site': 'same-site' }],
    ['no Origin, typed by hand (none)', { origin: '', 'sec-fetch-site': 'none' }],
    ['a look-alike that shares a prefix', { origin: 'http://towline.test.evil.com' }],
    ['another port', { origin: 'http://towline.test:8080' }],
    ['https instead of http', { origin: 'https://towline.test' }],
    ['upper case', { origin: 'HTTP://TOWLINE.TEST' }],
    ['a trailing dot', { origin: 'http://towline.test.' }],
    ['a trailing slash', { origin: 'http://towline.test/' }],
    ['a sub-domain', { origin: 'http://evil.towline.test' }],
    ['two origins', { origin: 'http://towline.test, http://evil.com' }],
    ['the right Origin but cross-site', { origin: OWN, 'sec-fetch-site': 'cross-site' }],
    ['another Origin claiming same-origin', { origin: 'http://evil.com', 'sec-fetch-site': 'same-origin' }],
  ]

  test('refuses every cross-site shape with 403 before the body is read (a page for forms, JSON for a page\'s JSON endpoint; nothing runs or is written) and lets same-origin requests through', async () => {
    const before = { ...calls }
    const db = databaseFingerprint(api.db)
    for (const [what, headers] of attacks) {
      const page = await send('POST', '/fixture/form', { body: untouchable(), type: FORM, headers })
      expect({ what, status: page.status }).toEqual({ what, status: 403 })
      expect(await expectPage(page, 403)).toContain('did not come from this service')
      const json = await send('POST', '/fixture/state', { body: untouchable(), type: 'application/json', headers })
      expect((await expectError(json, 403, 'cross_site_request')).details.public_origin).toBe(OWN)
      expect({ what, status: (await send('DELETE', '/fixture/thing', { headers })).status }).toEqual({ what, status: 403 })
    }
    expect(calls).toEqual(before)
    expect(databaseFingerprint(api.db)).toEqual(db)
    // What it lets through: the exact public origin, or the browser's word that the page is ours.
    for (const headers of [{ origin: OWN }, { origin: OWN, 'sec-fetch-site': 'same-origin' }, { origin: '', 'sec-fetch-site': 'same-origin' }, { origin: 'null', 'sec-fetch-site': 'same-origin' }] as Record<string, string>[]) {
      expect({ headers, status: (await postForm('/fixture/form', 'a=1', headers)).status }).toEqual({ headers, status: 200 })
    }
    // And what it never looks at: GET pages, routes that opt out, device and provider callbacks, the API.
    expect((await send('GET', '/fixture/page', { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(200)
    expect((await send('POST', '/fixture/open', { headers: { origin: 'http://evil.com' } })).status).toBe(200)
    expect((await send('POST', '/osmand', { body: 'id=nobody&lat=1&lon=1', type: FORM, headers: { origin: 'http://evil.com' } })).status).toBe(404)
    expect((await send('POST', '/sms/twilio/status', { body: 'MessageSid=SM1', type: FORM, headers: { origin: '' } })).status).toBe(403)
    expect((await api.request('POST', '/api/v1/jobs', { key, body: { customer: { name: 'Ann' }, pickup: { location: 'x' } }, headers: { origin: 'http://evil.com' } })).status).toBe(201)
  })

  test('the public URL is compared as an origin: case and a default port in the setting do not matter', async () => {
    const other = startTestApi({ TOWLINE_PUBLIC_URL: 'HTTP://Towline.TEST:80/base' }, { pages: [pageFixtures()] })
    try {
      const post = (origin: string) => other.raw(new Request('http://localhost/fixture/form', { method: 'POST', body: 'a=1', headers: { origin, 'content-type': FORM } }))
      expect((await post('http://towline.test')).status).toBe(200)
      expect((await post('http://towline.test:80')).status).toBe(403)
    } finally { other.close() }
  })
})

describe('the request id in error logs', () => {
  const linesWith = (msg: string) => logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === msg)

  test('an unhandled error is logged with the request id the response carries, and the route pattern, never the path', async () => {
    for (const path of ['/fixture/boom', '/fixture/boom.json']) {
      const res = await send('GET', path)
      const id = res.headers.get('request-id')!
      const line = linesWith('unhandled error').find((l) => l.request_id === id)
      expect({ path, level: line?.level, route: line?.route, err: line?.err?.message?.slice(0, 4) }).toEqual({ path, level: 50, route: path, err: 'boom' })
    }
  })

  test('a response is not checked against its schema at run time: the suite checks every response against the OpenAPI document instead', async () => {
    const res = await send('GET', '/fixture/bad-response')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ a: 1 })
    expect(linesWith('response failed its own schema')).toEqual([])
  })

  test("an operation's warning logged through the request logger carries it too (an inbound text that matched no job)", async () => {
    const params = { AccountSid: TWILIO_SID, MessageSid: 'SMnomatch000000000000000000001', From: '+15035550199', To: TWILIO_FROM, Body: 'hello?', NumMedia: '0' }
    const res = await postForm('/sms/twilio/inbound', new URLSearchParams(params).toString(), { 'x-twilio-signature': twilioSignature('http://towline.test/sms/twilio/inbound', params) })
    expect(res.status).toBe(200)
    const warned = logLines.map((l) => JSON.parse(l)).filter((l) => l.level === 40 && l.message_sid === params.MessageSid)
    expect(warned.map((l) => l.request_id)).toEqual([res.headers.get('request-id')])
  })
})

describe('answering at once', () => {
  test('API reads are answered without a promise (createApp compiles GET routes synchronously); a page that waits still gets its promise', async () => {
    const get = (path: string) => api.app.fetch(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${key}` } }))
    for (const path of ['/api/v1/me', '/api/v1/jobs', '/api/v1/units', '/healthz']) expect({ path, answer: get(path) }).toEqual({ path, answer: expect.any(Response) })
    const later = get('/fixture/later')
    expect(later).toBeInstanceOf(Promise)
    expect((await later).status).toBe(200)
  })
})

describe('over a real socket', () => {
  test('chunked 11 MiB to the 10 MiB route is 413 without the process holding it; a client hanging up mid-upload is no error', async () => {
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: MAX_REQUEST_BODY_BYTES, fetch: (req) => api.raw(req) })
    try {
      const body = chunked(11 * 1024 * 1024)
      let status: number
      try {
        const res = await fetch(`http://127.0.0.1:${server.port}/fixture/photo`, { method: 'POST', body: body.stream, headers: { origin: OWN, 'content-type': MP('zz') }, duplex: 'half' } as RequestInit)
        status = res.status
        expect(await res.text()).toContain('larger than 10 MiB')
      } catch {
        status = 413 // the server may close before the client has finished sending
      }
      expect(status).toBe(413)
      const errorsBefore = logLines.filter((l) => JSON.parse(l).level >= 50).length
      const socket = await Bun.connect({ hostname: '127.0.0.1', port: server.port!, socket: { data() {} } })
      socket.write(`POST /fixture/photo HTTP/1.1\r\nHost: x\r\nOrigin: ${OWN}\r\nContent-Type: ${MP('zz')}\r\nContent-Length: 900000\r\n\r\n--zz\r\n`)
      await Bun.sleep(50)
      socket.end()
      const health = await fetch(`http://127.0.0.1:${server.port}/healthz`)
      expect(health.status).toBe(200)
      await Bun.sleep(50)
      const lines = logLines.map((l) => JSON.parse(l))
      expect(lines.filter((l) => l.level >= 50).length).toBe(errorsBefore)
      expect(lines.filter((l) => l.route === '/fixture/photo' && l.body_problem === 'aborted').length).toBe(1)
    } finally {
      server.stop(true)
    }
  })
})

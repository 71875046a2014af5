/**
 * The HTTP layer pages plug into, in the compiled binary: an unknown path outside /api/ is an
 * HTML 404 with the security headers, the API stays JSON, /healthz is unchanged, and an upload
 * declared far over a route's cap gets the route's own 413, not Bun's empty one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  key = createKeyWithCli(folder.bin, folder.dir, 'jobs:write')
})
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

/** Sends raw bytes on a fresh connection and returns what came back until the server closed it (or the wait ran out). */
async function raw(bytes: string, waitMs = 1500): Promise<string> {
  let got = ''
  let done!: () => void
  const closed = new Promise<void>((r) => { done = r })
  const { port } = new URL(server.url)
  const socket = await Bun.connect({ hostname: '127.0.0.1', port: Number(port), socket: { data(_s, c) { got += Buffer.from(c).toString('latin1') }, close() { done() }, error() { done() } } })
  socket.write(bytes)
  await Promise.race([closed, Bun.sleep(waitMs)])
  socket.end()
  return got
}

describe('the compiled binary', () => {
  test('an unknown path outside /api/ is an HTML 404 page with the security headers and the request id', async () => {
    const res = await fetch(server.url + '/t/not-a-page-yet')
    const html = await res.text()
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status: 404, type: 'text/html; charset=utf-8' })
    expect(html).toContain('<title>404 Not found · Towline</title>')
    expect(html).toContain(`<code>${res.headers.get('request-id')}</code>`)
    expect({
      nosniff: res.headers.get('x-content-type-options'), frame: res.headers.get('x-frame-options'), referrer: res.headers.get('referrer-policy'),
      csp: res.headers.get('content-security-policy')?.includes("frame-ancestors 'none'"), cache: res.headers.get('cache-control'),
      coop: res.headers.get('cross-origin-opener-policy'), hsts: res.headers.get('strict-transport-security'),
    }).toEqual({ nosniff: 'nosniff', frame: 'DENY', referrer: 'same-origin', csp: true, cache: 'no-store', coop: 'same-origin', hsts: null })
  })

  test('an unknown /api/ path is the JSON 404; /healthz answers as before, with the headers of a non-page', async () => {
    const nope = await fetch(server.url + '/api/v1/nope')
    expect({ status: nope.status, code: ((await nope.json()) as any).error.code }).toEqual({ status: 404, code: 'not_found' })
    const health = await fetch(server.url + '/healthz')
    const body: any = await health.json()
    expect({ status: health.status, ok: body.status, database: body.database }).toEqual({ status: 200, ok: 'ok', database: 'ok' })
    expect({ nosniff: health.headers.get('x-content-type-options'), referrer: health.headers.get('referrer-policy'), csp: health.headers.get('content-security-policy') })
      .toEqual({ nosniff: 'nosniff', referrer: 'no-referrer', csp: "default-src 'none'; frame-ancestors 'none'" })
  })

  test('a body declared at 200 MiB gets the route\'s own 413 (plain text for /osmand, with a Request-Id), not Bun\'s empty one', async () => {
    const answer = await raw(`POST /osmand HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`)
    expect(answer).toMatch(/^HTTP\/1\.1 413/)
    expect(answer.toLowerCase()).toContain('request-id: req_')
    expect(answer).toContain('The request body is larger than 16 KiB.')
  })

  for (const declared of [2 * 1024 ** 3, Number.MAX_SAFE_INTEGER]) {
    test(`a body declared at ${declared} bytes on the API gets its JSON 413 payload_too_large with a Request-Id, the body unread`, async () => {
      const answer = await raw(`POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{"a":`)
      expect(answer).toMatch(/^HTTP\/1\.1 413/)
      expect(answer.toLowerCase()).toContain('request-id: req_')
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
      expect(body.error).toMatchObject({ code: 'payload_too_large', details: { limit_bytes: 262144 } })
    })
  }
})

/**
 * Hostile input against the compiled binary over real sockets: chunked floods on the
 * unauthenticated routes are cut at their caps without the process growing, uploads cut off
 * mid-way are not server faults, and raw HTTP framing (chunked, lying Content-Type, truncated
 * bodies) never gets a 5xx while the service keeps answering others.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string
let port: number

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  port = Number(new URL(server.url).port)
})
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

/** Resident memory of the server process, in MB (Linux). */
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.proc.pid}/status`, 'utf8'))![1]) / 1024

/** POSTs `total` bytes as a chunked stream (no Content-Length); returns the status and how much was taken. */
async function chunkedUpload(path: string, total: number, type = 'application/x-www-form-urlencoded') {
  const piece = new TextEncoder().encode('a='.padEnd(64 * 1024, 'x'))
  let sent = 0
  const body = new ReadableStream<Uint8Array>({ pull(c) { if (sent >= total) return c.close(); sent += piece.length; c.enqueue(piece) } })
  try {
    const res = await fetch(server.url + path, { method: 'POST', body, headers: { 'content-type': type }, duplex: 'half' } as RequestInit)
    await res.arrayBuffer()
    return { status: res.status, sent }
  } catch {
    // The server may close the connection before the client has finished sending.
    return { status: 413, sent }
  }
}

/** Sends raw bytes on a fresh connection; returns what came back before the server closed it (or the wait ran out). */
async function raw(bytes: string | Uint8Array, opts: { closeAfterWrite?: boolean; waitMs?: number } = {}): Promise<string> {
  let got = ''
  let done!: () => void
  const closed = new Promise<void>((r) => { done = r })
  const socket = await Bun.connect({
    hostname: '127.0.0.1', port,
    socket: { data(_s, chunk) { got += Buffer.from(chunk).toString('latin1') }, close() { done() }, error() { done() } },
  })
  socket.write(bytes)
  if (opts.closeAfterWrite) { await Bun.sleep(50); socket.end() }
  await Promise.race([closed, Bun.sleep(opts.waitMs ?? 1500)])
  socket.end()
  return got
}

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0)

/** Waits for the access-log line of a fresh request: proof that everything logged before it is in. */
async function logSettled(): Promise<string[]> {
  const res = await fetch(server.url + '/healthz')
  const id = res.headers.get('request-id')!
  const end = Date.now() + 5000
  while (!server.stdout().includes(id)) { if (Date.now() > end) throw new Error('access log line never came'); await Bun.sleep(10) }
  return server.stdout().split('\n').filter(Boolean)
}

const errorLines = (lines: string[]) => lines.filter((l) => { try { return JSON.parse(l).level >= 50 } catch { return false } })

describe('body caps on unauthenticated routes', () => {
  test('chunked 5 MiB bodies to /osmand and /sms/twilio/inbound are refused with 413, the process does not grow, and /healthz answers meanwhile', async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(server.url + '/healthz')).status).toBe(200)
    const before = rssMb()
    const uploads = Array.from({ length: 8 }, (_, i) => chunkedUpload(i % 2 ? '/osmand' : '/sms/twilio/inbound', 5 * 1024 * 1024))
    const health = await fetch(server.url + '/healthz')
    expect(health.status).toBe(200)
    const results = await Promise.all(uploads)
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(413))
    const grown = rssMb() - before
    // Eight whole 5 MiB bodies held at once would be 40 MB and more; the caps keep it to noise.
    expect(grown).toBeLessThan(25)
    expect((await fetch(server.url + '/healthz')).status).toBe(200)
  })

  test('a declared Content-Length over the /osmand cap is 413 before the body is sent', async () => {
    const answer = await raw(`POST /osmand HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 900000\r\n\r\n`)
    expect(statusOf(answer)).toBe(413)
  })
})

describe('body caps on the API', () => {
  test('the key is checked before the body is read: 300 KiB declared is 401 without a key, 413 in the JSON shape with one', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(300 * 1024) })
    const send = (headers: Record<string, string>) => fetch(server.api + '/jobs', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: big })
    const anonymous = await send({})
    expect({ status: anonymous.status, code: ((await anonymous.json()) as any).error.code }).toEqual({ status: 401, code: 'unauthorized' })
    const keyed = await send({ authorization: `Bearer ${key}` })
    const body: any = await keyed.json()
    expect({ status: keyed.status, code: body.error.code, limit: body.error.details.limit_bytes }).toEqual({ status: 413, code: 'payload_too_large', limit: 256 * 1024 })
  })

  test('a chunked API body is cut at 256 KiB with 413 in the JSON shape', async () => {
    let sent = 0
    const piece = new TextEncoder().encode('{"text":"'.padEnd(64 * 1024, 'x'))
    const stream = new ReadableStream<Uint8Array>({ pull(c) { if (sent >= 5 * 1024 * 1024) return c.close(); sent += piece.length; c.enqueue(piece) } })
    const res = await fetch(server.api + '/jobs', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit)
    // (How much the client pushed is up to its socket buffers; that the server holds none of
    // it beyond the cap is what the RSS test above measures.)
    expect({ status: res.status, code: ((await res.json()) as any).error.code }).toEqual({ status: 413, code: 'payload_too_large' })
  })
})

describe('a client that hangs up mid-upload', () => {
  test('is not a server fault: no error-level log line, no 5xx in the access log', async () => {
    const cut = (head: string) => raw(head + 'x'.repeat(4096), { closeAfterWrite: true, waitMs: 300 })
    await cut(`POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`)
    await cut(`POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n`)
    await cut(`POST /osmand HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 9000\r\n\r\n`)
    await cut(`POST /sms/twilio/inbound HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n`)
    const lines = await logSettled()
    expect(errorLines(lines)).toEqual([])
    expect(lines.filter((l) => l.includes('"status":5'))).toEqual([])
  })
})

describe('the device-id 404 oracle', () => {
  test('is limited per client address as the socket reports it: the 21st unknown id in a minute is 429 with Retry-After', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 21; i++) statuses.push((await fetch(`${server.url}/osmand?id=guess-${i}&lat=1&lon=1`)).status)
    expect(statuses).toEqual([...Array(20).fill(404), 429])
    const again = await fetch(`${server.url}/osmand?id=guess-x&lat=1&lon=1`)
    expect(again.status).toBe(429)
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe('raw HTTP framing, fuzzed', () => {
  test('chunked, lying Content-Type and truncated bodies on every unauthenticated route never get a 5xx, and the service keeps answering', async () => {
    const routes = ['POST /osmand', 'GET /osmand', 'POST /sms/twilio/inbound', 'POST /sms/twilio/status', 'GET /healthz', 'GET /api/v1/openapi.json', 'GET /api/v1/docs', 'POST /api/v1/jobs']
    const types = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=zz', 'text/plain', 'application/json; charset=utf-16', '', 'application/octet-stream']
    const bodies = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.constantFrom('{"device_id":"x","location":{"coords":{"latitude":1e999}}}', '{"a":' + '['.repeat(3000), 'id=x&lat=NaN&lon=1&timestamp=1e300', '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\n', '\u0000\u00ff\ud800', 'Body=STOP&From=%2B1&MessageSid=SM1'),
    )
    const framing = fc.constantFrom('length', 'chunked', 'short', 'long', 'badchunk')
    const seed = Number(process.env.FUZZ_SEED ?? 20261121)
    await fc.assert(fc.asyncProperty(fc.constantFrom(...routes), fc.constantFrom(...types), bodies, framing, fc.boolean(), async (route, type, body, frame, withKey) => {
      const [method, path] = route.split(' ') as [string, string]
      const bytes = Buffer.from(body, 'utf8')
      const head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${type ? `Content-Type: ${type}\r\n` : ''}${withKey ? `Authorization: Bearer ${key}\r\n` : ''}`
      const request = frame === 'chunked' ? `${head}Transfer-Encoding: chunked\r\n\r\n${bytes.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
        : frame === 'badchunk' ? `${head}Transfer-Encoding: chunked\r\n\r\nzz\r\n${body}\r\n`
          : frame === 'short' ? `${head}Content-Length: ${bytes.length + 10}\r\n\r\n${body}`
            : frame === 'long' ? `${head}Content-Length: ${Math.max(0, bytes.length - 1)}\r\n\r\n${body}`
              : `${head}Content-Length: ${bytes.length}\r\n\r\n${body}`
      const answer = await raw(request, { closeAfterWrite: frame === 'short', waitMs: 800 })
      const status = statusOf(answer)
      expect({ route, frame, status: status >= 500 }).toEqual({ route, frame, status: false })
    }), { numRuns: Number(process.env.FUZZ_RUNS ?? 60), seed })
    expect((await fetch(server.url + '/healthz')).status).toBe(200)
    const lines = await logSettled()
    expect(errorLines(lines)).toEqual([])
  })
})

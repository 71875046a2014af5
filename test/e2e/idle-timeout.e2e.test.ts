/**
 * The server's idle timeout against the compiled binary, set to its shortest
 * (TOWLINE_IDLE_TIMEOUT_SECONDS=5) rather than waited out at its 10 s default; Bun checks idle
 * connections every 4 s, so a connection is cut 4 to 8 s after it went quiet.
 * - The pages' live streams (board, driver, tracking) stay open on one connection while nothing
 *   happens, on their heartbeats, and an event still arrives on that same connection after.
 * - A body that keeps arriving slowly (a phone on a weak signal) is taken whole, however much
 *   longer than the idle timeout it takes (Bun's idle timer does not count bytes coming in);
 *   one that stops arriving is still cut off.
 * - A test ping to an endpoint that never answers waits the whole webhook timeout and says so
 *   (Bun's idle timer also runs while a handler works without answering).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect, createServer } from 'node:net'
import { cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'

const IDLE_S = 5
let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string

beforeAll(async () => {
  folder = freshFolder()
  // Webhook sends wait up to 9 s: longer than a request may work unanswered at this idle timeout (8 s).
  server = await startServer(folder.bin, { cwd: folder.dir, env: { TOWLINE_IDLE_TIMEOUT_SECONDS: String(IDLE_S), TOWLINE_WEBHOOK_TIMEOUT_MS: '9000', TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' } })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  expect(cli(folder.bin, ['users', 'create', '--email', 'dee@example.com', '--role', 'dispatcher', '--password', 'correct horse battery'], { cwd: folder.dir }).code).toBe(0)
}, 30_000)
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.api}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as any }
}

/** A stream read raw: every chunk's text kept, whether the server ended it, and when each heartbeat came. */
function record(res: Response) {
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/event-stream')
  const reader = res.body!.getReader()
  const seen = { text: '', ended: false, heartbeats: [] as number[] }
  const opened = Date.now()
  void (async () => {
    const dec = new TextDecoder()
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done) { seen.ended = true; return }
      const text = dec.decode(chunk.value)
      for (const _ of text.matchAll(/^: heartbeat$/gm)) seen.heartbeats.push(Date.now() - opened)
      seen.text += text
    }
  })()
  return { seen, cancel: () => reader.cancel().catch(() => {}) }
}

test('the board, driver and tracking streams stay open through the idle timeout on heartbeats, and still carry events after', async () => {
  const unit = JSON.parse(cli(folder.bin, ['units', 'add', '--name', 'Truck 4', '--driver-phone', '+15035550104', '--json'], { cwd: folder.dir }).stdout) as { id: string }
  const job = (await api('POST', '/jobs', { customer: { name: 'Pat', phone: '+15035550142', sms_consent: true }, pickup: { location: 'I-5 exit 299B' } })).body
  expect((await api('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
  const texts = JSON.parse(cli(folder.bin, ['texts', 'list', '--json', '--job', job.id], { cwd: folder.dir }).stdout) as { data: { body: string }[] }
  const driverUrl = texts.data.map((t) => /https?:\/\/\S+\/d\/[0-9A-Za-z]+/.exec(t.body)?.[0]).find(Boolean)!
  expect(driverUrl).toBeString()

  // Pages are reached by the public URL (localhost:<port>), the origin their form posts must come from.
  const pages = server.url.replace('127.0.0.1', 'localhost')
  const login = await fetch(`${pages}/login`, { method: 'POST', redirect: 'manual', headers: { origin: pages, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email: 'dee@example.com', password: 'correct horse battery' }).toString() })
  expect(login.status).toBe(303)
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!

  const streams = {
    board: record(await fetch(`${pages}/board/events`, { headers: { cookie } })),
    driver: record(await fetch(`${driverUrl}/events`)),
    tracking: record(await fetch(`${job.tracking_url}/events`)),
  }
  try {
    // Nothing happens for longer than a silent stream would last (8 s at most).
    await Bun.sleep(9000)
    for (const [name, { seen }] of Object.entries(streams)) {
      expect({ name, ended: seen.ended }).toEqual({ name, ended: false })
      expect({ name, hello: seen.text.startsWith('retry: 2000\nevent: hello\n') }).toEqual({ name, hello: true })
      // No gap between heartbeats (nor before the first) as long as the idle timeout.
      const gaps = seen.heartbeats.map((t, i) => t - (seen.heartbeats[i - 1] ?? 0))
      expect({ name, enough: seen.heartbeats.length >= 2, longestGapMs: Math.max(...gaps) < IDLE_S * 1000 }).toEqual({ name, enough: true, longestGapMs: true })
    }
    // The same connections still carry what happens next.
    expect((await api('PATCH', `/jobs/${job.id}`, { status: 'en_route' })).status).toBe(200)
    const deadline = Date.now() + 5000
    while (Object.values(streams).some(({ seen }) => !/en_route/.test(seen.text)) && Date.now() < deadline) await Bun.sleep(50)
    for (const [name, { seen }] of Object.entries(streams)) expect({ name, enRoute: /en_route/.test(seen.text), ended: seen.ended }).toEqual({ name, enRoute: true, ended: false })
  } finally {
    for (const s of Object.values(streams)) await s.cancel()
  }
}, 30_000)

/** Sends a request by hand, its body in pieces every `everyMs`; resolves with what came back and when the connection closed. */
function dripped(port: number, head: string, body: string, pieceBytes: number, everyMs: number, stopAfterBytes = Infinity) {
  return new Promise<{ answer: string; closedAfterMs: number; sentBytes: number }>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const started = Date.now()
    let answer = ''
    let at = 0
    socket.on('data', (d) => { answer += String(d) })
    socket.on('error', () => {})
    socket.on('close', () => { clearInterval(timer); resolve({ answer, closedAfterMs: Date.now() - started, sentBytes: at }) })
    socket.write(head)
    const timer = setInterval(() => {
      if (at >= body.length || at >= stopAfterBytes) return
      const piece = body.slice(at, at + pieceBytes)
      at += piece.length
      socket.write(piece)
      // Answered: close our side, as a browser done with the request would.
      if (at >= body.length) setTimeout(() => socket.end(), 500)
    }, everyMs)
  })
}

test('a body sent slowly for longer than the idle timeout is taken whole; one that stops coming is cut off', async () => {
  const port = Number(new URL(server.url).port)
  // A job whose JSON is padded to 100 KiB (whitespace is JSON), sent at 10 KiB/s: about 10 s, twice the idle timeout.
  const json = JSON.stringify({ external_ref: 'SLOW-1', customer: { name: 'Slow Signal' }, pickup: { location: 'Mile 12' } }) + ' '.repeat(100 * 1024)
  const head = (length: number) => `POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
  const [slow, stalled] = await Promise.all([
    dripped(port, head(json.length), json, 1024, 100),
    // Declares 2 KiB and sends half: it may take the idle timeout and a moment more, not forever.
    dripped(port, head(2048), 'x'.repeat(2048), 1024, 100, 1024),
  ])
  expect({ status: slow.answer.split('\r\n')[0], sent: slow.sentBytes }).toEqual({ status: 'HTTP/1.1 201 Created', sent: json.length })
  expect(slow.closedAfterMs).toBeGreaterThan(IDLE_S * 1000 + 2000)
  const made = (await api('GET', '/jobs?external_ref=SLOW-1')).body.data
  expect(made.map((j: any) => j.customer.name)).toEqual(['Slow Signal'])
  expect(stalled.answer).not.toContain('201')
  expect(stalled.closedAfterMs).toBeLessThan(15_000)
}, 30_000)

test('a test ping to an endpoint that never answers is answered after the webhook timeout, not cut off', async () => {
  // Takes the connection and never says a word (the TLS handshake never ends).
  const hole = createServer((socket) => { socket.on('error', () => {}) }).listen(0, '127.0.0.1')
  await new Promise((r) => hole.once('listening', r))
  try {
    const port = (hole.address() as { port: number }).port
    const endpoint = await api('POST', '/webhooks', { url: `https://127.0.0.1:${port}/hook`, events: ['*'] })
    expect(endpoint.status).toBe(201)
    const started = Date.now()
    const ping = await api('POST', `/webhooks/${endpoint.body.id}/test`)
    expect({ status: ping.status, delivered: ping.body.delivered, error: ping.body.error }).toEqual({ status: 200, delivered: false, error: 'timeout' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(9000)
  } finally {
    hole.close()
  }
}, 30_000)

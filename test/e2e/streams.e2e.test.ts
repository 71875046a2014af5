/**
 * The pages' live streams against the compiled binary: the board's, the driver's and the
 * tracking page's Server-Sent Events stay open on one connection through several of the
 * server's idle timeouts while nothing happens (Bun closes a connection silent that long; each
 * stream's heartbeat keeps it open), and an event still arrives on that same connection after.
 * The idle timeout is set to its shortest (TOWLINE_IDLE_TIMEOUT_SECONDS=5) rather than waited out at its 10 s default;
 * Bun checks idle connections every 4 s, so a silent stream is cut 4 to 8 s after its last byte.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'

const IDLE_S = 5
let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir, env: { TOWLINE_IDLE_TIMEOUT_SECONDS: String(IDLE_S) } })
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

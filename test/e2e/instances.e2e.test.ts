/**
 * Two instances of the compiled binary on one PostgreSQL database, as behind a load balancer:
 * jobs written through both, each instance's board hearing the other's writes, one instance
 * killed (SIGKILL) in the middle of deliveries, and every event delivered exactly once, by one
 * instance or the other. Runs on PostgreSQL whichever engine the rest of the suite is on.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'
import { makeTestCa, startReceiver } from '../https-receiver'
import { pgCluster } from '../pg'
import { readSse } from '../sse-reader'
import { startTwilioStandin, twilioSignature, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../twilio-standin'

const ca = makeTestCa()
// Deliveries to /slow take long enough that a kill lands while some are being sent.
const receiver = startReceiver(ca, { behave: (r) => ({ delayMs: r.path === '/slow' ? 150 : 2 }) })
const a = freshFolder()
const b = freshFolder()
let url: string
let env: Record<string, string>
const servers: RunningServer[] = []
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.stop('SIGKILL')
  receiver.stop()
  a.cleanup()
  b.cleanup()
})

beforeAll(() => {
  url = pgCluster().createDatabase()
  env = {
    TOWLINE_DB: url,
    // One link key for both, as every instance must share it.
    TOWLINE_LINK_KEY_FILE: join(a.dir, 'towline.key'),
    NODE_EXTRA_CA_CERTS: ca.caPath,
    TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1',
    TOWLINE_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms,400ms,500ms,600ms',
    TOWLINE_RATE_LIMIT_WRITES: '100000',
    // A lease outlives its attempt's timeout: short here, so the survivor takes over within seconds.
    TOWLINE_WEBHOOK_TIMEOUT_MS: '1000',
  }
  expect(cli(a.bin, ['migrate'], { cwd: a.dir, env }).code).toBe(0)
})

/** An instance's pages as a browser reaches them: by its public URL (localhost:<port>). */
const pagesOf = (server: RunningServer) => server.url.replace('127.0.0.1', 'localhost')

async function signedIn(server: RunningServer, email: string, password: string): Promise<string> {
  const res = await fetch(`${pagesOf(server)}/login`, { method: 'POST', redirect: 'manual', headers: { origin: pagesOf(server), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email, password }).toString() })
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie')!.split(';')[0]!
}

test('two instances on one database: jobs through both, each board hears the other, a killed instance\'s deliveries are finished by the other, every event delivered once', async () => {
  const one = await startServer(a.bin, { cwd: a.dir, env })
  const two = await startServer(b.bin, { cwd: b.dir, env })
  servers.push(one, two)
  const key = createKeyWithCli(a.bin, a.dir, 'all', [], env)
  expect(cli(b.bin, ['users', 'create', '--email', 'dee@example.com', '--role', 'dispatcher', '--password', 'correct horse battery'], { cwd: b.dir, env }).code).toBe(0)
  const call = (s: RunningServer, method: string, path: string, body?: unknown) =>
    fetch(s.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })

  // A session made on one instance works on the other; each board streams what the other writes.
  const cookie = await signedIn(one, 'dee@example.com', 'correct horse battery')
  const boards = await Promise.all([one, two].map(async (s) => readSse(await fetch(`${pagesOf(s)}/board/events`, { headers: { cookie } }))))
  for (const board of boards) await board.until((m) => m.some((x) => x.event === 'hello'))

  for (const path of ['/fast', '/slow']) expect((await call(one, 'POST', '/webhooks', { url: receiver.url + path, events: ['job.created'] })).status).toBe(201)

  // Jobs written through both instances at once.
  const made: string[] = []
  await Promise.all(Array.from({ length: 40 }, async (_, i) => {
    const res = await call(i % 2 ? two : one, 'POST', '/jobs', { external_ref: `LB-${i}`, customer: { name: `C${i}` }, pickup: { location: 'x' } })
    expect(res.status).toBe(201)
    made.push(((await res.json()) as any).id)
  }))
  // Every job on both boards, whichever instance wrote it.
  for (const board of boards) await board.until((m) => made.every((id) => m.some((x) => x.event === 'job' && x.data?.job?.id === id)), 10_000)
  for (const board of boards) await board.cancel()

  // Kill one instance while it is delivering to /slow; the other finishes its work.
  for (const end = Date.now() + 10_000; receiver.received.filter((r) => r.path === '/slow').length < 3 && Date.now() < end;) await Bun.sleep(5)
  one.proc.kill('SIGKILL')
  await one.proc.exited
  const delivered = (path: string) => receiver.received.filter((r) => r.path === path)
  for (const end = Date.now() + 30_000; Date.now() < end;) {
    if (['/fast', '/slow'].every((p) => made.every((id) => delivered(p).some((r) => r.body.data.job.id === id)))) break
    await Bun.sleep(50)
  }
  for (const path of ['/fast', '/slow']) {
    const got = delivered(path)
    expect({ path, missing: made.filter((id) => !got.some((r) => r.body.data.job.id === id)) }).toEqual({ path, missing: [] })
    // Once each: a delivery cut short by the kill may be attempted again, under its same id, never
    // as a second delivery of the event.
    const deliveriesPerJob = new Map<string, Set<string>>()
    for (const r of got) deliveriesPerJob.set(r.body.data.job.id, (deliveriesPerJob.get(r.body.data.job.id) ?? new Set()).add(r.body.id))
    expect({ path, twice: [...deliveriesPerJob].filter(([, ids]) => ids.size > 1).map(([job]) => job) }).toEqual({ path, twice: [] })
  }
  // The survivor's records agree: every delivery succeeded.
  const status = await call(two, 'GET', '/webhooks')
  expect(status.status).toBe(200)
  expect(await two.stop()).toBe(0)
}, 90_000)

test('the same inbound text reaching both instances at once (the provider retrying a slow answer) is handled once: both answer 200, one message on the timeline', async () => {
  const twilio = startTwilioStandin()
  const publicUrl = 'http://towline.test'
  const texting = { ...env, TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: TWILIO_SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM, TOWLINE_TWILIO_API_BASE: twilio.apiBase, TOWLINE_PUBLIC_URL: publicUrl }
  const one = await startServer(a.bin, { cwd: a.dir, env: texting })
  const two = await startServer(b.bin, { cwd: b.dir, env: texting })
  servers.push(one, two)
  try {
    const key = createKeyWithCli(a.bin, a.dir, 'all', [], texting)
    const call = (method: string, path: string, body?: unknown) =>
      fetch(one.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
    const phone = '+15035550177'
    const job = await call('POST', '/jobs', { customer: { name: 'Rae Kim', phone, sms_consent: true }, pickup: { location: 'NE Sandy Blvd' } })
    expect(job.status).toBe(201)
    // The customer has had the service's first text: their replies thread onto the job.
    for (const end = Date.now() + 10_000; !twilio.messages.some((m) => m.to === phone) && Date.now() < end;) await Bun.sleep(20)
    expect(twilio.messages.some((m) => m.to === phone)).toBe(true)

    const sids: string[] = []
    for (let i = 0; i < 8; i++) {
      const sid = `SM${String(i).padStart(2, '0')}${'0'.repeat(30)}`
      sids.push(sid)
      const params = { AccountSid: TWILIO_SID, MessageSid: sid, From: phone, To: TWILIO_FROM, Body: i === 7 ? 'STOP' : `Reply ${i}`, NumMedia: '0' }
      const signature = twilioSignature(`${publicUrl}/sms/twilio/inbound`, params)
      const send = (s: RunningServer) => fetch(`${s.url}/sms/twilio/inbound`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, body: new URLSearchParams(params) })
      const answers = await Promise.all([send(one), send(two)])
      expect({ sid, statuses: answers.map((r) => r.status) }).toEqual({ sid, statuses: [200, 200] })
    }
    const messages = (await call('GET', `/jobs/${job.body.id}/events?limit=100`)).body.data.filter((e: any) => e.type === 'job.customer_message')
    expect(messages.map((e: any) => e.detail.text)).toEqual([...Array.from({ length: 7 }, (_, i) => `Reply ${i}`), 'STOP'])
  } finally {
    for (const s of [one, two]) await s.stop('SIGKILL')
    twilio.stop()
  }
}, 60_000)

test('PATCHes without expected_status sent to both instances at once are unconditional: each one is written (no 409), the last write of each field wins, the timeline has one job.updated a write', async () => {
  const one = await startServer(a.bin, { cwd: a.dir, env })
  const two = await startServer(b.bin, { cwd: b.dir, env })
  servers.push(one, two)
  try {
    const key = createKeyWithCli(a.bin, a.dir, 'all', [], env)
    const call = (s: RunningServer, method: string, path: string, body?: unknown) =>
      fetch(s.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
    const job = (await call(one, 'POST', '/jobs', { customer: { name: 'Ivy Park' }, pickup: { location: 'SE Foster Rd' } })).body
    const statuses: number[] = []
    for (let i = 0; i < 60; i++) {
      // Two different fields at once: neither may undo the other (each is merged into the job as it is then).
      const answers = await Promise.all([
        call(one, 'PATCH', `/jobs/${job.id}`, { destination: `Garage ${i}` }),
        call(two, 'PATCH', `/jobs/${job.id}`, { vehicle: { color: `color ${i}` } }),
      ])
      statuses.push(...answers.map((r) => r.status))
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    const now = (await call(two, 'GET', `/jobs/${job.id}`)).body
    expect({ destination: now.destination, color: now.vehicle.color }).toEqual({ destination: 'Garage 59', color: 'color 59' })
    const updated = []
    for (let cursor = ''; ;) {
      const page = (await call(one, 'GET', `/jobs/${job.id}/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).body
      updated.push(...page.data.filter((e: any) => e.type === 'job.updated'))
      if (!page.has_more) break
      cursor = page.next_cursor
    }
    expect(updated.length).toBe(120)
  } finally {
    for (const s of [one, two]) await s.stop('SIGKILL')
  }
}, 90_000)

/**
 * Webhooks end to end: the compiled binary delivering to a real HTTPS receiver whose
 * certificate comes from a CA this test makes (trusted through NODE_EXTRA_CA_CERTS).
 * The retry schedule is shrunk to milliseconds through TOWLINE_WEBHOOK_RETRY_SCHEDULE.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'
import { makeTestCa, startHangUpServer, startReceiver, type Behaviour, type Received } from '../https-receiver'
import { webhookProblems } from '../openapi-check'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string
const ca = makeTestCa()
const secrets: string[] = []
const behaviour = new Map<string, (r: Received) => Behaviour>()
const receiver = startReceiver(ca, { secrets: () => secrets, behave: (r) => behaviour.get(r.path)?.(r) ?? {} })
const SCHEDULE = '150ms,300ms,450ms,600ms,750ms,900ms'

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, {
    cwd: folder.dir,
    env: { NODE_EXTRA_CA_CERTS: ca.caPath, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_WEBHOOK_RETRY_SCHEDULE: SCHEDULE, TOWLINE_WEBHOOK_TIMEOUT_MS: '800' },
  })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
})
afterAll(async () => {
  await server?.stop()
  receiver.stop()
  folder?.cleanup()
})

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(server.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: await res.json() as any }
}
async function endpoint(path: string, events: string[] = ['*']) {
  const r = await call('POST', '/webhooks', { url: `${receiver.url}${path}`, events, description: path })
  expect(r.status).toBe(201)
  secrets.push(r.body.secret)
  return r.body
}
const newJob = (ref: string) => call('POST', '/jobs', { external_ref: ref, customer: { name: 'Ann Lee' }, pickup: { location: 'I-5 N mile 12' } })
const at = (path: string) => receiver.received.filter((r) => r.path === path)
async function until(cond: () => boolean, ms = 8000) {
  const end = Date.now() + ms
  while (!cond()) { if (Date.now() > end) throw new Error('condition not met in time'); await Bun.sleep(20) }
}
/** The endpoint's delivery log once `cond` holds for it (attempts are recorded just after they are answered). */
async function attemptsWhen(endpointId: string, cond: (log: any[]) => boolean, ms = 8000): Promise<any[]> {
  const end = Date.now() + ms
  for (;;) {
    const log = (await call('GET', `/webhooks/${endpointId}/deliveries`)).body.data as any[]
    if (cond(log)) return log
    if (Date.now() > end) throw new Error(`delivery log never matched: ${JSON.stringify(log.map((a) => [a.attempt, a.status, a.error]))}`)
    await Bun.sleep(20)
  }
}

describe('webhook endpoints', () => {
  test('a new endpoint returns its whsec_ secret once; lists never show it', async () => {
    const e = await endpoint('/mgmt')
    expect(e).toMatchObject({ object: 'webhook_endpoint', id: expect.stringMatching(/^whk_/), status: 'active', events: ['*'], consecutive_failures: 0 })
    expect(e.secret).toMatch(/^whsec_/)
    const list = await call('GET', '/webhooks')
    expect(JSON.stringify(list.body)).not.toContain(e.secret)
  })

  test('http URLs and unknown event types are refused with 422', async () => {
    const http = await call('POST', '/webhooks', { url: 'http://example.com/hook', events: ['*'] })
    expect(http.status).toBe(422)
    expect(http.body.error.details.fields[0].path).toBe('url')
    const bad = await call('POST', '/webhooks', { url: `${receiver.url}/x`, events: ['job.created', 'job.exploded'] })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details.fields[0].path).toBe('events.1')
  })
})

describe('deliveries', () => {
  test('every job event arrives signed, in the envelope of the spec, with the job as it was', async () => {
    await endpoint('/all')
    const job = (await newJob('WH-1')).body
    await call('POST', `/jobs/${job.id}/notes`, { text: 'gate code 4411' })
    await until(() => at('/all').length >= 2)
    const [created, note] = at('/all')
    expect(created!.validSignatures).toBe(1)
    expect(created!.headers['x-svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(created!.body).toMatchObject({
      id: expect.stringMatching(/^dlv_/), object: 'event', type: 'job.created', api_version: '2026-09-01', attempt: 1,
      account_id: expect.stringMatching(/^acct_/), created_at: expect.any(String),
      data: { job: { id: job.id, status: 'confirmed', tracking_url: job.tracking_url, unit: null }, event: { type: 'job.created', actor: 'system', sequence: 1 } },
    })
    expect(note!.body).toMatchObject({ type: 'job.note_added', data: { event: { sequence: 2, detail: { text: 'gate code 4411' } } } })
  })

  test('an endpoint gets only the types it subscribed to', async () => {
    await endpoint('/assigned-only', ['job.reopened'])
    const job = (await newJob('WH-2')).body
    await call('PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    await call('POST', `/jobs/${job.id}/reopen`, { reason: 'customer called back' })
    // A second reopen, delivered after everything before it (one endpoint's deliveries go in order): the proof that nothing else came.
    await call('PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: 'customer left again' })
    await call('POST', `/jobs/${job.id}/reopen`, { reason: 'customer called back again' })
    await until(() => at('/assigned-only').length >= 2)
    expect(at('/assigned-only').map((r) => r.body.type)).toEqual(['job.reopened', 'job.reopened'])
    expect(at('/assigned-only')[0]!.body.data.event).toMatchObject({ from: 'cancelled', to: 'confirmed', detail: { reason: 'customer called back', cancel_reason: 'customer left' } })
  })

  test('a failing receiver gets retries with the same delivery id and growing attempt numbers', async () => {
    const e = await endpoint('/flaky', ['job.created'])
    behaviour.set('/flaky', (r) => ({ status: at('/flaky').filter((x) => x.body.id === r.body.id).length <= 2 ? 500 : 200 }))
    await newJob('WH-3')
    await until(() => at('/flaky').length >= 3)
    const tries = at('/flaky')
    expect(new Set(tries.map((r) => r.body.id)).size).toBe(1)
    expect(tries.map((r) => r.body.attempt)).toEqual([1, 2, 3])
    expect(tries.every((r) => r.validSignatures === 1)).toBe(true)
    expect(tries[1]!.headers['x-svc-signature']).not.toBe(tries[0]!.headers['x-svc-signature'])
    const log = await attemptsWhen(e.id, (l) => l.length >= 3)
    expect(log.map((a: any) => [a.attempt, a.status, a.response_status, a.error])).toEqual([[3, 'succeeded', 200, null], [2, 'failed', 500, 'http'], [1, 'failed', 500, 'http']])
    expect(log[2].request_body).toBe(tries[0]!.raw)
    expect(log[2].request_headers['x-svc-signature']).toBe(tries[0]!.headers['x-svc-signature'])
  })

  test('six retries, then it stops; a redirect is a failure and is not followed', async () => {
    const e = await endpoint('/moved', ['job.created'])
    behaviour.set('/moved', () => ({ redirectTo: `${receiver.url}/elsewhere` }))
    await newJob('WH-4')
    // The seventh attempt is recorded as the last (no next attempt): nothing can follow it.
    const log = await attemptsWhen(e.id, (l) => l[0]?.attempt === 7, 10_000)
    expect(log[0]).toMatchObject({ attempt: 7, status: 'failed', error: 'redirect', next_attempt_at: null })
    expect(at('/moved')).toHaveLength(7)
    expect(at('/elsewhere')).toHaveLength(0)
  })

  test('a receiver slower than the timeout is a timeout failure', async () => {
    const e = await endpoint('/slow', ['job.created'])
    behaviour.set('/slow', (r) => (r.body.attempt === 1 ? { delayMs: 1500 } : {}))
    await newJob('WH-5')
    const log = await attemptsWhen(e.id, (l) => l.length >= 2)
    expect(log.map((a: any) => a.error)).toEqual([null, 'timeout'])
  })

  test('a connection closed without an answer is a connect failure, retried', async () => {
    const hangUp = startHangUpServer(ca)
    try {
      const e = (await call('POST', '/webhooks', { url: `${hangUp.url}/hook`, events: ['job.created'] })).body
      await newJob('WH-6')
      let log: any[] = []
      await until(() => { void call('GET', `/webhooks/${e.id}/deliveries`).then((r) => { log = r.body.data }); return log.length >= 2 })
      expect(log.map((a: any) => [a.status, a.error, a.response_status])).toEqual([['failed', 'connect', null], ['failed', 'connect', null]])
      await call('DELETE', `/webhooks/${e.id}`)
    } finally {
      hangUp.stop()
    }
  })

  test('an event another process writes (towline jobs archive from the console) is delivered without waiting for another write', async () => {
    await endpoint('/archived', ['job.archived'])
    const job = (await newJob('WH-AR')).body
    const r = cli(folder.bin, ['jobs', 'archive', job.id], { cwd: folder.dir })
    expect(r.code).toBe(0)
    await until(() => at('/archived').length >= 1, 5000)
    expect(at('/archived')[0]!.body.data).toMatchObject({ job: { id: job.id, archived: true }, event: { type: 'job.archived', actor: 'system' } })
  })

  test('one delivery can be resent by hand: same id, next attempt number', async () => {
    const e = await endpoint('/resend', ['job.created'])
    await newJob('WH-7')
    await until(() => at('/resend').length >= 1)
    const first = at('/resend')[0]!
    // Until its attempt is recorded the delivery is in flight, and a resend would be 409 delivery_in_flight.
    await attemptsWhen(e.id, (l) => l.length >= 1)
    const again = await call('POST', `/webhooks/${e.id}/deliveries/${first.body.id}/retry`)
    expect(again.body).toMatchObject({ delivery_id: first.body.id, delivered: true, response_status: 200 })
    const second = at('/resend')[1]!
    expect(second.body).toMatchObject({ id: first.body.id, attempt: 2, type: 'job.created' })
    expect(second.body.data).toEqual(first.body.data)
    expect((await call('POST', `/webhooks/${e.id}/deliveries/dlv_01ZZZZZZZZZZZZZZZZZZZZZZZZ/retry`)).status).toBe(404)
  })

  test('a rotated secret signs beside the new one; a ping answers what the endpoint said', async () => {
    const e = await endpoint('/rotate', ['job.created'])
    const rotated = await call('PATCH', `/webhooks/${e.id}`, { rotate_secret: true })
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(e.secret)
    secrets.push(rotated.body.secret)
    const ping = await call('POST', `/webhooks/${e.id}/test`)
    expect(ping.body).toMatchObject({ delivered: true, response_status: 200, error: null })
    const got = at('/rotate').at(-1)!
    expect(got.body.type).toBe('ping')
    expect(got.headers['x-svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
    expect(got.validSignatures).toBe(2)
  })

  test("docs/webhooks.md's sample, run as written, verifies real deliveries and takes again a delivery whose work could not be queued", async () => {
    // The ts block of "Verifying the signature", as an integrator copies it.
    const docs = readFileSync(join(import.meta.dir, '../../docs/webhooks.md'), 'utf8')
    const code = docs.slice(docs.indexOf('## Verifying the signature')).match(/```ts\n([\s\S]*?)```/)![1]!
    const file = join(folder.dir, 'towline-webhook.ts')
    writeFileSync(file, code)
    const sample = await import(file) as { verifyTowlineWebhook(raw: string, header: string, secret: string, nowS?: number): any; handleTowlineDelivery(raw: string, header: string, secret: string, queue: (event: any) => void): number }
    let secret = ''
    const queued: string[] = []
    const refusedOnce = new Set<string>()
    behaviour.set('/docs-sample', (r) => ({
      status: sample.handleTowlineDelivery(r.raw, r.headers['x-svc-signature'] ?? '', secret, (event) => {
        // The receiver's own work fails the first time it sees each job.created.
        if (event.type === 'job.created' && !refusedOnce.has(event.id)) { refusedOnce.add(event.id); throw new Error('queue down') }
        queued.push(event.id)
      }),
    }))
    const e = await endpoint('/docs-sample', ['job.created', 'job.updated'])
    secret = e.secret
    const job = (await newJob('DOCS-1')).body
    expect((await call('PATCH', `/jobs/${job.id}`, { destination: 'Joe\'s Garage' })).status).toBe(200)
    const log = await attemptsWhen(e.id, (l) => l.filter((a) => a.status === 'succeeded').length === 2)
    const created = log.filter((a) => a.event_type === 'job.created').map((a) => [a.attempt, a.response_status])
    expect(created).toEqual([[2, 200], [1, 500]])
    // Each delivery's work queued exactly once, the one that failed first included.
    const deliveries = at('/docs-sample').map((r) => r.body.id)
    expect(queued.sort()).toEqual([...new Set(deliveries)].sort())
    expect(queued.length).toBe(2)
    // A delivery already queued, received again, is answered 2xx without queueing it twice.
    const again = at('/docs-sample').at(-1)!
    expect(sample.handleTowlineDelivery(again.raw, again.headers['x-svc-signature']!, secret, () => { throw new Error('queued twice') })).toBe(200)
    // Tampered bytes, another secret or a time outside five minutes are refused.
    expect(sample.handleTowlineDelivery(again.raw.replace('DOCS-1', 'DOCS-2'), again.headers['x-svc-signature']!, secret, () => {})).toBe(400)
    expect(() => sample.verifyTowlineWebhook(again.raw, again.headers['x-svc-signature']!, 'whsec_other')).toThrow('bad signature')
    const t = Number(again.headers['x-svc-signature']!.match(/t=(\d+)/)![1])
    expect(() => sample.verifyTowlineWebhook(again.raw, again.headers['x-svc-signature']!, secret, t + 301)).toThrow('timestamp outside the tolerance')
    expect(sample.verifyTowlineWebhook(again.raw, again.headers['x-svc-signature']!, secret, t + 300).id).toBe(again.body.id)
  })

  test('a slow endpoint with a backlog does not delay the others', async () => {
    await endpoint('/slowlane', ['job.created'])
    behaviour.set('/slowlane', () => ({ delayMs: 250 }))
    await endpoint('/fastlane', ['job.created'])
    for (let i = 0; i < 8; i++) await newJob(`S-${i}`)
    await until(() => at('/fastlane').length >= 8, 3000)
    expect(at('/slowlane').length).toBeLessThan(8)
    await until(() => at('/slowlane').length >= 8, 5000)
    expect(at('/slowlane').map((r) => r.body.data.job.external_ref)).toEqual(Array.from({ length: 8 }, (_, i) => `S-${i}`))
  })

  test('a paused endpoint holds its deliveries; resuming sends them in order', async () => {
    const e = await endpoint('/paused', ['job.created'])
    await endpoint('/paused-witness', ['job.created'])
    expect((await call('PATCH', `/webhooks/${e.id}`, { status: 'paused' })).body).toMatchObject({ status: 'paused', paused_reason: 'manual' })
    for (const ref of ['P-1', 'P-2', 'P-3']) await newJob(ref)
    // The same jobs reach an active endpoint: the scheduler has been through them.
    await until(() => at('/paused-witness').length >= 3)
    expect(at('/paused')).toHaveLength(0)
    await call('PATCH', `/webhooks/${e.id}`, { status: 'active' })
    await until(() => at('/paused').length >= 3)
    expect(at('/paused').map((r) => r.body.data.job.external_ref)).toEqual(['P-1', 'P-2', 'P-3'])
  })

  test('25 failed attempts in a row pause the endpoint; a deleted endpoint gets nothing more', async () => {
    const e = await endpoint('/dead', ['job.created'])
    behaviour.set('/dead', () => ({ status: 503 }))
    for (const ref of ['D-1', 'D-2', 'D-3', 'D-4']) await newJob(ref)
    // The 25th failure pauses the endpoint in the transaction that records it, and an endpoint
    // never has two attempts in flight: once it reads paused, no 26th can come.
    await until(() => at('/dead').length >= 25, 20_000)
    for (const end = Date.now() + 10_000; (await call('GET', `/webhooks/${e.id}`)).body.status !== 'paused';) { if (Date.now() > end) throw new Error('not paused'); await Bun.sleep(20) }
    expect(at('/dead')).toHaveLength(25)
    expect((await call('GET', `/webhooks/${e.id}`)).body).toMatchObject({ status: 'paused', paused_reason: 'failures', consecutive_failures: 25 })
    const gone = await endpoint('/gone', ['job.created'])
    await endpoint('/gone-witness', ['job.created'])
    expect((await call('DELETE', `/webhooks/${gone.id}`)).body).toEqual({ object: 'webhook_endpoint', id: gone.id, deleted: true })
    await newJob('D-5')
    await until(() => at('/gone-witness').some((r) => r.body.data.job.external_ref === 'D-5'))
    expect(at('/gone')).toHaveLength(0)
    expect((await call('GET', `/webhooks/${gone.id}`)).status).toBe(404)
  }, 30_000)
})

describe('the OpenAPI document', () => {
  test("every body the receiver got matches the webhooks entry of its type, with the headers it declares", async () => {
    const doc = await (await fetch(server.api + '/openapi.json')).json()
    const types = new Set(receiver.received.map((r) => JSON.parse(r.raw).type as string))
    // The tests above made deliveries of these at least.
    expect([...types]).toEqual(expect.arrayContaining(['ping', 'job.created', 'job.status_changed', 'job.note_added', 'job.reopened', 'job.archived']))
    const declared = (doc.components.parameters as Record<string, { name: string }>)
    for (const r of receiver.received) {
      // The raw body as sent: earlier tests' matchers may have touched the parsed one.
      const body = JSON.parse(r.raw)
      const label = `${body.type} ${body.id} attempt ${body.attempt}`
      expect({ label, problems: webhookProblems(doc, body) }).toEqual({ label, problems: [] })
      for (const { name } of Object.values(declared)) expect({ label, name, sent: r.headers[name.toLowerCase()] !== undefined }).toEqual({ label, name, sent: true })
      expect({ label, attempt: r.headers['x-svc-attempt'], type: r.headers['x-svc-event-type'], id: r.headers['x-svc-delivery-id'] })
        .toEqual({ label, attempt: String(body.attempt), type: body.type, id: body.id })
    }
  })
})

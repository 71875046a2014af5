/**
 * Idempotency-Key is honoured on every POST (contract: "What every request can rely on"): the
 * same key and body answer the first response and write nothing; another body is 422.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, until, type TestApi } from '../../test/kit'
import { call, countRows, makeJob, makeUnit, NO_LIMITS, REASON } from '../../test/jobs-helpers'
import { makeTestCa, startReceiver } from '../../test/https-receiver'

const ca = makeTestCa()
let hold: { promise: Promise<unknown>; release: () => void } | null = null
const receiver = startReceiver(ca, { behave: () => (hold ? { hold: hold.promise } : {}) })
let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi({ ...NO_LIMITS, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' }, { webhookSend: { tls: { ca: ca.ca } } })
  key = api.key('all')
})
afterAll(() => { api.close(); receiver.stop() })

let n = 0
const idem = () => `idem-${++n}-${Date.now()}`
const post = (path: string, body: unknown, idemKey: string) => call(api, key, 'POST', path, body, { 'idempotency-key': idemKey })
const rows = (sql: string, ...args: string[]) => (api.db.$client.query(sql).get(...args) as { n: number }).n

/** Sends a POST twice with one key: same status and body, the second marked replayed; then another body under the key is 422. */
async function expectIdempotent(path: string, body: unknown, written: () => number, otherBody?: unknown) {
  const k = idem()
  const before = written()
  const first = await post(path, body, k)
  expect(first.status).toBeLessThan(300)
  const after = written()
  expect(after).toBeGreaterThan(before)
  const again = await post(path, body, k)
  expect({ status: again.status, body: again.body, replayed: again.headers.get('idempotent-replayed') }).toEqual({ status: first.status, body: first.body, replayed: 'true' })
  expect(written()).toBe(after)
  if (otherBody !== undefined) {
    const reused = await post(path, otherBody, k)
    expect({ status: reused.status, code: reused.body.error.code }).toEqual({ status: 422, code: 'idempotency_key_reused' })
    expect(written()).toBe(after)
  }
  return first.body
}

describe('Idempotency-Key on every POST', () => {
  test('every POST of the OpenAPI document accepts the Idempotency-Key header', async () => {
    const doc = (await call(api, key, 'GET', '/openapi.json')).body
    const posts = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(([, ops]) => ops.post).map(([path, ops]) => [path, ops.post] as const)
    expect(posts.length).toBeGreaterThanOrEqual(7)
    for (const [path, op] of posts) {
      const names = (op.parameters ?? []).map((p: any) => `${p.in}:${String(p.name).toLowerCase()}`)
      expect({ path, header: names.includes('header:idempotency-key') }).toEqual({ path, header: true })
    }
  })

  test('POST /jobs', async () => {
    await expectIdempotent('/jobs', { customer: { name: 'Ann' }, pickup: { location: 'A' } }, () => countRows(api, 'jobs'), { customer: { name: 'Bob' }, pickup: { location: 'A' } })
  })

  test('POST /jobs/{id}/assign: one assignment, one driver text', async () => {
    const job = await makeJob(api, key)
    const unit = makeUnit(api)
    await expectIdempotent(`/jobs/${job.id}/assign`, { unit_id: unit.id }, () => rows('SELECT count(*) AS n FROM job_events WHERE job_id = ?', job.id) + rows('SELECT count(*) AS n FROM texts WHERE job_id = ?', job.id),
      { unit_id: makeUnit(api).id })
  })

  test('POST /jobs/{id}/notes: a retried note is one note', async () => {
    const job = await makeJob(api, key)
    await expectIdempotent(`/jobs/${job.id}/notes`, { text: 'Gate code 4411' }, () => countRows(api, 'job_notes'), { text: 'Gate code 9999' })
  })

  test('POST /jobs/{id}/reopen', async () => {
    const job = await makeJob(api, key)
    await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: REASON })
    await expectIdempotent(`/jobs/${job.id}/reopen`, { reason: 'Customer called back' }, () => rows('SELECT count(*) AS n FROM job_events WHERE job_id = ?', job.id), { reason: 'Another reason' })
  })

  test('POST /webhooks: a retry makes one endpoint, not a second that doubles every delivery', async () => {
    const made = await expectIdempotent('/webhooks', { url: `${receiver.url}/a`, events: ['*'] }, () => rows('SELECT count(*) AS n FROM webhook_endpoints WHERE deleted_at IS NULL'),
      { url: `${receiver.url}/b`, events: ['*'] })
    expect(made.secret).toStartWith('whsec_')
  })

  test('POST /webhooks/{id}/test and a resend: a retry sends nothing more', async () => {
    const endpoint = (await call(api, key, 'POST', '/webhooks', { url: `${receiver.url}/ping`, events: ['job.note_added'] })).body
    const sent = () => receiver.received.filter((r) => r.path === '/ping').length
    const ping = await expectIdempotent(`/webhooks/${endpoint.id}/test`, undefined, sent)
    expect(ping.delivered).toBe(true)
    await expectIdempotent(`/webhooks/${endpoint.id}/deliveries/${ping.delivery_id}/retry`, undefined, sent)
  })

  test('a retry while the first request is still sending answers 409 idempotency_key_in_use, then the first answer', async () => {
    const endpoint = (await call(api, key, 'POST', '/webhooks', { url: `${receiver.url}/slow`, events: ['job.note_added'] })).body
    let release!: () => void
    hold = { promise: new Promise<void>((r) => { release = r }), release: () => release() }
    const k = idem()
    const first = post(`/webhooks/${endpoint.id}/test`, undefined, k)
    await until(() => receiver.received.some((r) => r.path === '/slow'), 5000, 'the ping to arrive')
    const during = await post(`/webhooks/${endpoint.id}/test`, undefined, k)
    expect({ status: during.status, code: during.body.error.code }).toEqual({ status: 409, code: 'idempotency_key_in_use' })
    hold.release()
    hold = null
    const done = await first
    expect(done.status).toBe(200)
    const later = await post(`/webhooks/${endpoint.id}/test`, undefined, k)
    expect(later.body).toEqual(done.body)
    expect(receiver.received.filter((r) => r.path === '/slow').length).toBe(1)
  })

  test('a refused first request keeps nothing under the key: the corrected retry runs', async () => {
    const k = idem()
    const bad = await post('/webhooks', { url: 'http://plain.example/hook', events: ['*'] }, k)
    expect(bad.status).toBe(422)
    const good = await post('/webhooks', { url: `${receiver.url}/fixed`, events: ['*'] }, k)
    expect(good.status).toBe(201)
    expect(good.headers.get('idempotent-replayed')).toBeNull()
  })
})

/**
 * GET /api/v1/jobs/{id} without a query is answered before Elysia routes it (the fetch handler's
 * pre-routed table); with a query (`?`) it goes through the router. Both must answer alike in
 * every case: the same body, headers and errors, one count against the key's limit, one
 * access-log line naming the route.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { addSite } from '../accounts/add-site'
import { addUnit } from '../units/add-unit'
import { createCommercialAccount } from '../commercial-accounts/create-commercial-account'
import { createLogger } from '../platform/log'
import { updateCommercialAccount } from '../commercial-accounts/update-commercial-account'
import { closeDatabase, openDatabase } from '../db/client'

let api: TestApi
let lines: string[]
beforeEach(() => {
  lines = []
  api = startTestApi({ TOWLINE_RATE_LIMIT_READS: '40' }, { logger: createLogger('info', { write: (line: string) => { lines.push(line) } }) })
})
afterEach(() => api.close())

async function get(path: string, authorization?: string) {
  const res = await api.raw(new Request(`http://towline.test${path}`, { headers: authorization ? { authorization } : {} }))
  const headers = Object.fromEntries([...res.headers.entries()].filter(([k]) => !['request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset'].includes(k)))
  return { status: res.status, headers, body: await res.text(), requestId: res.headers.get('request-id'), remaining: res.headers.get('x-ratelimit-remaining') }
}

/** The pre-routed answer and the routed one for `path`, compared whole. */
async function same(path: string, authorization?: string) {
  const a = await get(path, authorization)
  const b = await get(`${path}?`, authorization)
  expect({ status: a.status, headers: a.headers, body: a.body }).toEqual({ status: b.status, headers: b.headers, body: b.body })
  expect(a.requestId).toMatch(/^req_/)
  return a
}

test('the pre-routed answer and the routed one are the same: a job with its unit, position and commercial account, and every refusal', async () => {
  const all = `Bearer ${api.key('all')}`
  const unit = addUnit(api.db, api.clock, { accountId: api.accountId, name: 'Truck 7', deviceId: 'dev-7' })
  const fix = await api.raw(new Request(`http://localhost/osmand?id=dev-7&lat=45.5&lon=-122.6&timestamp=${Math.floor(api.clock.now() / 1000)}`))
  expect(fix.status).toBe(200)
  const club = createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'AAA Oregon', kind: 'motor_club', contacts: [] })
  const created = await api.request('POST', '/api/v1/jobs', { key: all.slice(7), body: { customer: { name: 'Pat' }, pickup: { location: '1 Main St' }, commercial_account_id: club.id } })
  const job = (await created.json()) as { id: string }
  expect((await api.request('POST', `/api/v1/jobs/${job.id}/assign`, { key: all.slice(7), body: { unit_id: unit.id } })).status).toBe(200)

  const ok = await same(`/api/v1/jobs/${job.id}`, all)
  expect(ok.status).toBe(200)
  expect(JSON.parse(ok.body)).toMatchObject({ object: 'job', id: job.id, unit: { id: unit.id, name: 'Truck 7' }, position: { lat: 45.5 }, commercial_account: { id: club.id, name: 'AAA Oregon' } })

  // Refusals: no key, not a key, a revoked-looking key, no jobs:read, an unknown job, another account's job, a site the key cannot see.
  const other = api.account('Other Towing')
  const otherKey = api.key('all', { accountId: other })
  const theirs = (await (await api.request('POST', '/api/v1/jobs', { key: otherKey, body: { customer: { name: 'Lee' }, pickup: { location: '2 Main St' } } })).json()) as { id: string }
  const south = addSite(api.db, api.clock, { accountId: api.accountId, name: 'South yard' }).id
  const southOnly = `Bearer ${api.key(['jobs:read'], { sites: [south] })}`
  const cases: [string, string | undefined, number][] = [
    [job.id, undefined, 401],
    [job.id, 'Basic Zm9vOmJhcg==', 401],
    [job.id, 'Bearer svc_live_notakeyatall', 401],
    [job.id, `Bearer ${api.key(['webhooks:manage'])}`, 403],
    ['job_01ZZZZZZZZZZZZZZZZZZZZZZZZ', all, 404],
    [theirs.id, all, 404],
    [job.id, southOnly, 404],
    ['not_a_job', all, 404],
  ]
  for (const [id, auth, status] of cases) expect((await same(`/api/v1/jobs/${id}`, auth)).status).toBe(status)
})

test('a job read again shows every change since its last read: two writes in one millisecond, its unit\'s position and name, its commercial account\'s name, a write by another connection', async () => {
  const all = `Bearer ${api.key('all')}`
  const unit = addUnit(api.db, api.clock, { accountId: api.accountId, name: 'Truck 7', deviceId: 'dev-7' })
  const fix = (lat: number) => api.raw(new Request(`http://localhost/osmand?id=dev-7&lat=${lat}&lon=-122.6&timestamp=${Math.floor(api.clock.now() / 1000)}`))
  expect((await fix(45.5)).status).toBe(200)
  const club = createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'AAA Oregon', kind: 'motor_club', contacts: [] })
  const job = (await (await api.request('POST', '/api/v1/jobs', { key: all.slice(7), body: { customer: { name: 'Pat' }, pickup: { location: '1 Main St' }, commercial_account_id: club.id } })).json()) as { id: string }
  expect((await api.request('POST', `/api/v1/jobs/${job.id}/assign`, { key: all.slice(7), body: { unit_id: unit.id } })).status).toBe(200)
  const read = async () => JSON.parse((await same(`/api/v1/jobs/${job.id}`, all)).body)
  expect(await read()).toMatchObject({ destination: null, position: { lat: 45.5 }, unit: { name: 'Truck 7' }, commercial_account: { name: 'AAA Oregon' } })

  // The test clock stands still: both writes carry the same updated_at.
  for (const destination of ["Joe's Garage", 'Main St Tire']) {
    expect((await api.request('PATCH', `/api/v1/jobs/${job.id}`, { key: all.slice(7), body: { destination } })).status).toBe(200)
    expect((await read()).destination).toBe(destination)
  }
  api.clock.advance(1_000)
  expect((await fix(45.6)).status).toBe(200)
  expect((await read()).position.lat).toBe(45.6)
  updateCommercialAccount(api.contexts.forOperator(api.accountId), club.id, { name: 'AAA Washington', kind: 'motor_club', contacts: [] })
  expect((await read()).commercial_account.name).toBe('AAA Washington')
  // Another connection to the same database, as a console command run beside serve would be.
  const other = openDatabase(api.dbEnv.TOWLINE_DB)
  try {
    other.$client.prepare('UPDATE units SET name = ? WHERE id = ?').run('Truck 8', unit.id)
    expect((await read()).unit.name).toBe('Truck 8')
    other.$client.prepare('UPDATE jobs SET customer = ? WHERE id = ?').run(JSON.stringify({ name: 'Pat Lee', phone: null, sms_consent: false }), job.id)
    expect((await read()).customer.name).toBe('Pat Lee')
  } finally {
    closeDatabase(other)
  }
})

test('ids that are not one plain segment go through the router (same answers), and each request counts once against the key\'s reads until 429', async () => {
  const key = `Bearer ${api.key('all')}`
  const job = (await (await api.request('POST', '/api/v1/jobs', { key: key.slice(7), body: { customer: { name: 'Pat' }, pickup: { location: '1 Main St' } } })).json()) as { id: string }
  // An encoded id, and a path one level deeper: the router's answers, whatever they are.
  expect((await get(`/api/v1/jobs/${encodeURIComponent(job.id)}%20`, key)).status).toBe(404)
  expect((await get(`/api/v1/jobs/${job.id}/events`, key)).status).toBe(200)
  const before = Number((await get(`/api/v1/jobs/${job.id}`, key)).remaining)
  const seen: number[] = []
  for (let i = 0; i < 4; i++) seen.push(Number((await get(`/api/v1/jobs/${job.id}${i % 2 ? '?' : ''}`, key)).remaining))
  expect(seen).toEqual([before - 1, before - 2, before - 3, before - 4])
  while (Number((await get(`/api/v1/jobs/${job.id}`, key)).remaining) > 0) { /* use up the reads */ }
  const a = await get(`/api/v1/jobs/${job.id}`, key)
  const b = await get(`/api/v1/jobs/${job.id}?`, key)
  expect(a.status).toBe(429)
  expect({ status: a.status, headers: a.headers, body: a.body }).toEqual({ status: b.status, headers: b.headers, body: b.body })
})

test('a pre-routed read writes one access-log line with the route, its key and its request id', async () => {
  const key = `Bearer ${api.key('all')}`
  const job = (await (await api.request('POST', '/api/v1/jobs', { key: key.slice(7), body: { customer: { name: 'Pat' }, pickup: { location: '1 Main St' } } })).json()) as { id: string }
  for (const path of [`/api/v1/jobs/${job.id}`, '/api/v1/jobs/job_01ZZZZZZZZZZZZZZZZZZZZZZZZ']) {
    const a = await get(path, key)
    const line = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.request_id === a.requestId)
    expect(line).toHaveLength(1)
    expect(line[0]).toMatchObject({ method: 'GET', route: '/api/v1/jobs/:id', status: a.status, key_id: expect.stringMatching(/^key_/) })
  }
})

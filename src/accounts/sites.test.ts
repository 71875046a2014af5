/**
 * Keys limited to sites: they see and touch only their sites' jobs, units and webhook
 * endpoints, everywhere in the API; and the operations behind the sites, units and accounts
 * commands refuse what they cannot do.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { call, expectCallError, makeJob, NO_LIMITS } from '../../test/jobs-helpers'
import { addUnit } from '../units/add-unit'
import { addSite, resolveSites, SiteInputError } from './add-site'
import { createKey, KeyInputError } from './create-key'
import { AccountInputError, updateAccount } from './update-account'
import { findAccountById } from './account.queries'
import { DeliveryScheduler } from '../webhooks/scheduler'
import { createLogger } from '../platform/log'

let api: TestApi
let north: string
let south: string
let northKey: string
let southKey: string
let bothKey: string
let allKey: string
const unit: Record<string, { id: string; name: string }> = {}

beforeAll(() => {
  api = startTestApi({ ...NO_LIMITS, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
  api.clock.advance(1)
  north = addSite(api.db, api.clock, { accountId: api.accountId, name: 'North' }).id
  api.clock.advance(1)
  south = addSite(api.db, api.clock, { accountId: api.accountId, name: 'South' }).id
  northKey = api.key('all', { sites: ['North'] })
  southKey = api.key('all', { sites: [south] })
  bothKey = api.key('all', { sites: ['south', 'NORTH'] })
  allKey = api.key('all')
  const add = (name: string, siteIds: string[] | null) => { unit[name] = addUnit(api.db, api.clock, { accountId: api.accountId, name, siteIds }) }
  add('a-north', [north])
  add('b-south', [south])
  add('c-both', [north, south])
  add('d-every', null)
})
afterAll(() => api.close())

const names = (res: { body: any }) => res.body.data.map((x: any) => x.name ?? x.id)

describe('GET /me and POST /jobs', () => {
  test('GET /me lists the key\'s sites only, oldest first, whatever order they were named in', async () => {
    expect((await call(api, northKey, 'GET', '/me')).body.sites).toEqual([{ id: north, name: 'North' }])
    expect((await call(api, bothKey, 'GET', '/me')).body).toMatchObject({ sites: [{ id: north, name: 'North' }, { id: south, name: 'South' }], site_restricted: true })
    expect((await call(api, allKey, 'GET', '/me')).body).toMatchObject({ sites: [{ name: 'Main yard' }, { name: 'North' }, { name: 'South' }], site_restricted: false })
  })

  test('a job goes to the key\'s first site by default; a site it cannot use is 422 on site_id, and nothing is written', async () => {
    expect((await makeJob(api, bothKey)).site_id).toBe(north)
    expect((await makeJob(api, bothKey, { site_id: south })).site_id).toBe(south)
    const other = api.account('Other Towing')
    const otherSite = api.db.$client.query<{ id: string }, [string]>('SELECT id FROM sites WHERE account_id = ?').get(other)!.id
    const before = (await call(api, allKey, 'GET', '/jobs?limit=100')).body.data.length
    for (const site_id of [south, otherSite, 'site_nope']) {
      const err = expectCallError(await call(api, northKey, 'POST', '/jobs', { customer: { name: 'Al' }, pickup: { location: 'x' }, site_id }), 422, 'validation_failed')
      expect(err.details.fields).toEqual([{ path: 'site_id', message: 'is not a site this key can use' }])
    }
    expect(expectCallError(await call(api, allKey, 'POST', '/jobs', { customer: { name: 'Al' }, pickup: { location: 'x' }, site_id: otherSite }), 422, 'validation_failed').details.fields[0].path).toBe('site_id')
    expect((await call(api, allKey, 'GET', '/jobs?limit=100')).body.data.length).toBe(before)
  })
})

describe('jobs of another site', () => {
  test('answer 404 on every job route, and are never listed', async () => {
    const job = await makeJob(api, southKey)
    for (const [method, path, body] of [
      ['GET', `/jobs/${job.id}`], ['GET', `/jobs/${job.id}/events`], ['GET', `/jobs/${job.id}/texts`],
      ['PATCH', `/jobs/${job.id}`, { urgency: 'low' }], ['POST', `/jobs/${job.id}/notes`, { text: 'hi' }],
      ['POST', `/jobs/${job.id}/assign`, { unit_id: unit['d-every']!.id }], ['DELETE', `/jobs/${job.id}/assign`],
      ['POST', `/jobs/${job.id}/reopen`, { reason: 'customer called back' }],
    ] as [string, string, unknown?][]) {
      const res = await call(api, northKey, method, path, body)
      expect({ method, path, status: res.status, code: res.body?.error?.code }).toEqual({ method, path, status: 404, code: 'not_found' })
    }
    expect((await call(api, northKey, 'GET', '/jobs?limit=100')).body.data.map((j: any) => j.site_id)).not.toContain(south)
    expect((await call(api, southKey, 'GET', `/jobs/${job.id}`)).body).toMatchObject({ id: job.id, status: 'confirmed', updated_at: job.updated_at })
  })

  test('an external_ref held at another site is 409 conflict without its id; nothing is written; a search by it finds nothing', async () => {
    const held = await makeJob(api, southKey, { external_ref: 'AAA-1' })
    const jobsBefore = (await call(api, allKey, 'GET', '/jobs?limit=100')).body.data.length
    for (const key of [northKey]) {
      const err = expectCallError(await call(api, key, 'POST', '/jobs', { customer: { name: 'Al' }, pickup: { location: 'x' }, external_ref: 'AAA-1' }), 409, 'conflict')
      expect(err.details).toEqual({ external_ref: 'AAA-1', database_message: err.message })
      expect(err.message).not.toContain(held.id)
    }
    expect((await call(api, northKey, 'GET', '/jobs?external_ref=AAA-1')).body.data).toEqual([])
    // A key that sees the site is told which job holds it.
    for (const key of [southKey, bothKey, allKey]) {
      const err = expectCallError(await call(api, key, 'POST', '/jobs', { customer: { name: 'Al' }, pickup: { location: 'x' }, external_ref: 'AAA-1', site_id: south }), 409, 'conflict')
      expect(err.details.existing_job_id).toBe(held.id)
    }
    expect((await call(api, allKey, 'GET', '/jobs?limit=100')).body.data.length).toBe(jobsBefore)
  })
})

describe('units and sites', () => {
  test('GET /units lists the units serving the key\'s sites and those serving every site', async () => {
    expect(names(await call(api, northKey, 'GET', '/units'))).toEqual(['a-north', 'c-both', 'd-every'])
    expect(names(await call(api, southKey, 'GET', '/units'))).toEqual(['b-south', 'c-both', 'd-every'])
    expect(names(await call(api, bothKey, 'GET', '/units'))).toEqual(['a-north', 'b-south', 'c-both', 'd-every'])
    expect((await call(api, allKey, 'GET', '/units')).body.data.map((u: any) => [u.name, u.site_ids])).toEqual([
      ['a-north', [north]], ['b-south', [south]], ['c-both', [north, south]], ['d-every', null],
    ])
  })

  test('pages of GET /units hold only visible units, and has_more is false on the last', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res: any = await call(api, northKey, 'GET', `/units?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.status).toBe(200)
      seen.push(...names(res))
      expect(res.body.has_more).toBe(res.body.next_cursor !== null)
      cursor = res.body.next_cursor
    } while (cursor)
    expect(seen).toEqual(['a-north', 'c-both', 'd-every'])
  })

  test('another account\'s units are never seen, even one serving every site', async () => {
    const other = api.account('Elsewhere Towing')
    const theirs = addUnit(api.db, api.clock, { accountId: other, name: 'e-theirs', siteIds: null })
    expect(names(await call(api, allKey, 'GET', '/units'))).not.toContain('e-theirs')
    const job = await makeJob(api, allKey)
    const err = expectCallError(await call(api, allKey, 'POST', `/jobs/${job.id}/assign`, { unit_id: theirs.id }), 422, 'validation_failed')
    expect(err.details.fields[0].path).toBe('unit_id')
  })

  test('assign takes a unit the key sees that serves the job\'s site; any other is 422 on unit_id and writes nothing', async () => {
    const job = await makeJob(api, northKey)
    const refuse = async (key: string, unitId: string, message: RegExp) => {
      const err = expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unitId }), 422, 'validation_failed')
      expect(err.details.fields).toEqual([{ path: 'unit_id', message: expect.stringMatching(message) }])
    }
    await refuse(northKey, unit['b-south']!.id, /names no unit of this account at your sites/)
    await refuse(allKey, unit['b-south']!.id, /does not serve this job's site/)
    await refuse(bothKey, unit['b-south']!.id, /does not serve this job's site/)
    expect((await call(api, northKey, 'GET', `/jobs/${job.id}`)).body).toMatchObject({ status: 'confirmed', unit: null, updated_at: job.updated_at })
    expect((await call(api, northKey, 'GET', `/jobs/${job.id}/events`)).body.data).toHaveLength(1)
    for (const name of ['a-north', 'c-both', 'd-every']) {
      const res = await call(api, northKey, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit[name]!.id })
      expect({ name, status: res.status, unit: res.body.unit?.name }).toEqual({ name, status: 200, unit: name })
    }
  })
})

describe('webhook endpoints and sites', () => {
  const hook = async (key: string) => {
    const res = await call(api, key, 'POST', '/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['*'] })
    expect(res.status).toBe(201)
    return res.body
  }
  const deliveriesTo = (endpointId: string) => api.db.$client.query<{ job_id: string }, [string]>(
    `SELECT json_extract(p.data, '$.job.id') AS job_id FROM webhook_deliveries d JOIN webhook_events p ON p.event_id = d.event_id WHERE d.endpoint_id = ? GROUP BY job_id ORDER BY min(d.id)`,
  ).all(endpointId).map((r) => r.job_id)

  test('an endpoint gets the sites of the key that made it, and only their jobs\' events', async () => {
    const n = await hook(northKey)
    const b = await hook(bothKey)
    const a = await hook(allKey)
    expect([n.site_ids, [...b.site_ids].sort(), a.site_ids]).toEqual([[north], [north, south].sort(), null])
    const jn = await makeJob(api, allKey, { site_id: north })
    const js = await makeJob(api, allKey, { site_id: south })
    const jm = await makeJob(api, allKey)
    // The scheduler takes each endpoint's events up (a closed loopback port: the attempts fail, the deliveries are made).
    const s = new DeliveryScheduler({ db: api.db, clock: api.clock, logger: createLogger('silent'), schedule: [60_000], send: { timeoutMs: 2000, allowPrivate: true }, links: api.links, owner: 'test:1' })
    s.start()
    try {
      for (const end = Date.now() + 8000; (api.db.$client.query('SELECT count(*) AS n FROM webhook_attempts').get() as { n: number }).n < 6;) {
        if (Date.now() > end) throw new Error('the deliveries were not made')
        await Bun.sleep(10)
      }
    } finally {
      await s.stop(0)
    }
    expect(deliveriesTo(n.id)).toEqual([jn.id])
    expect(deliveriesTo(b.id)).toEqual([jn.id, js.id])
    expect(deliveriesTo(a.id)).toEqual([jn.id, js.id, jm.id])
  })

  test('a key manages only the endpoints of sites it sees all of; others answer 404 and are not listed', async () => {
    const n = await hook(northKey)
    const b = await hook(bothKey)
    const a = await hook(allKey)
    const manages = async (key: string, id: string) => {
      const statuses = []
      for (const [method, path, body] of [['GET', `/webhooks/${id}`], ['GET', `/webhooks/${id}/deliveries`], ['PATCH', `/webhooks/${id}`, { description: 'x' }]] as [string, string, unknown?][]) {
        statuses.push((await call(api, key, method, path, body)).status)
      }
      const listed = (await call(api, key, 'GET', '/webhooks?limit=100')).body.data.some((e: any) => e.id === id)
      return { statuses, listed }
    }
    expect(await manages(northKey, n.id)).toEqual({ statuses: [200, 200, 200], listed: true })
    expect(await manages(southKey, n.id)).toEqual({ statuses: [404, 404, 404], listed: false })
    // Managing an endpoint that also receives South's jobs would reveal them: refused to the North key.
    expect(await manages(northKey, b.id)).toEqual({ statuses: [404, 404, 404], listed: false })
    expect(await manages(bothKey, n.id)).toEqual({ statuses: [200, 200, 200], listed: true })
    expect(await manages(bothKey, a.id)).toEqual({ statuses: [404, 404, 404], listed: false })
    expect(await manages(allKey, b.id)).toEqual({ statuses: [200, 200, 200], listed: true })
    expectCallError(await call(api, southKey, 'DELETE', `/webhooks/${n.id}`), 404, 'not_found')
    expect((await call(api, northKey, 'GET', `/webhooks/${n.id}`)).status).toBe(200)
  })
})

describe('the operations behind the CLI', () => {
  test('a site name is unique in its account whatever its case; other accounts may reuse it', () => {
    expect(() => addSite(api.db, api.clock, { accountId: api.accountId, name: '  north ' })).toThrow(new SiteInputError('the account already has a site named "north"'))
    expect(() => addSite(api.db, api.clock, { accountId: api.accountId, name: '  ' })).toThrow(SiteInputError)
    expect(() => addSite(api.db, api.clock, { accountId: 'acct_nope', name: 'X' })).toThrow('no account acct_nope')
    const other = api.account('Third Towing')
    expect(addSite(api.db, api.clock, { accountId: other, name: 'North' }).accountId).toBe(other)
  })

  test('sites are named by id or by name in any case; an unknown one is refused, naming the sites there are', () => {
    expect(resolveSites(api.db, api.accountId, ['SOUTH', north]).map((s) => s.id)).toEqual([south, north])
    expect(() => resolveSites(api.db, api.accountId, ['West'])).toThrow(/no site "West".*North.*South/)
  })

  test('a key cannot be limited to another account\'s site', () => {
    const other = api.account('Fourth Towing')
    const theirSite = addSite(api.db, api.clock, { accountId: other, name: 'Far' })
    expect(() => createKey(api.contexts.forOperator(api.accountId), { name: 'k', scopes: ['jobs:read'], sites: [theirSite.id] })).toThrow(KeyInputError)
    expect(() => createKey(api.contexts.forOperator(api.accountId), { name: 'k', scopes: ['jobs:read'], sites: ['Far'] })).toThrow(KeyInputError)
  })

  test('an account update stores phones in E.164, clears with "", and refuses a bad one changing nothing', () => {
    const id = api.account('Phone Towing')
    expect(updateAccount(api.contexts.forOperator(id), { name: ' Phone Towing LLC ', phone: '(503) 555-0100', smsFrom: '503 555 0199' })).toMatchObject({ name: 'Phone Towing LLC', phone: '+15035550100', smsFrom: '+15035550199' })
    expect(() => updateAccount(api.contexts.forOperator(id), { name: 'Renamed', phone: 'call us' })).toThrow(AccountInputError)
    expect(() => updateAccount(api.contexts.forOperator(id), { country: 'XX' })).toThrow(AccountInputError)
    expect(() => updateAccount(api.contexts.forOperator(id), { name: ' ' })).toThrow(AccountInputError)
    expect(findAccountById(api.db, id)).toMatchObject({ name: 'Phone Towing LLC', phone: '+15035550100', smsFrom: '+15035550199' })
    expect(updateAccount(api.contexts.forOperator(id), { phone: '', smsFrom: '' })).toMatchObject({ phone: null, smsFrom: null })
    // Numbers without +country are read in the account's country, the new one when it changes too.
    expect(updateAccount(api.contexts.forOperator(id), { country: 'GB', phone: '020 7946 0018' }).phone).toBe('+442079460018')
  })
})

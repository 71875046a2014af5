/**
 * New tracking link: a dispatcher (or the operator) replaces a job's tracking link. The job gets
 * a new token, the old one is recorded as retired (its page answers 410), and the change is a
 * job.updated naming tracking_url, seen by webhooks like any other; refusals write nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { startTestApi, until, type TestApi } from '../../test/kit'
import type { BusEvent } from './job-event-bus'
import { archive, bringTo, call, expectNothingWritten, makeJob, NO_LIMITS, snapshot, textsOf } from '../../test/jobs-helpers'
import { AppError } from '../platform/errors'
import { newId } from '../platform/ids'
import { replaceTrackingLink } from './replace-tracking-link'
import { openLinksIn } from './job-links'

let api: TestApi
let key: string
beforeAll(async () => {
  // Private targets allowed only so an endpoint can be registered: nothing is sent in process.
  api = startTestApi({ ...NO_LIMITS, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
  key = api.key('all')
  expect((await call(api, key, 'POST', '/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['job.updated'] })).status).toBe(201)
})
afterAll(() => api.close())

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')
const tokenOf = (url: string) => /\/t\/([0-9A-Za-z]{24})$/.exec(url)![1]!
const dispatcher = (accountId = api.accountId, siteIds: string[] | null = null) =>
  api.contexts.forDispatcher({ userId: 'usr_disp', role: 'dispatcher', accountId, siteIds })
const retired = () => api.db.$client.query('SELECT * FROM retired_links ORDER BY retired_at, token_hash').all() as any[]
const refusal = (fn: () => unknown): AppError => {
  try { fn() } catch (err) { if (err instanceof AppError) return err; throw err }
  throw new Error('expected a refusal')
}

describe('replaceTrackingLink', () => {
  test('gives the job a new token, retires the old one as replaced and writes job.updated naming tracking_url, with its webhook event', async () => {
    const job = await makeJob(api, key)
    const old = tokenOf(job.tracking_url)
    const before = await snapshot(api, key, job.id)
    const heard: BusEvent[] = []
    const stop = api.bus.subscribe(api.bus.position, (e) => heard.push(e))
    api.clock.advance(60_000)
    const after = replaceTrackingLink(dispatcher(), job.id)
    // Live listeners (boards) hear it after the commit, like any job.updated.
    await until(() => heard.length === 1, 5000, 'the bus to tell the job.updated')
    stop()
    expect(heard.map((e) => [e.event.jobId, e.event.type])).toEqual([[job.id, 'job.updated']])

    const read = (await call(api, key, 'GET', `/jobs/${job.id}`)).body
    const fresh = tokenOf(read.tracking_url)
    expect(fresh).not.toBe(old)
    expect(read.tracking_url).toBe(`http://towline.test/t/${fresh}`)
    expect(after.trackingTokenHash).toBe(sha256(fresh))
    expect(read.updated_at).toBe(new Date(api.clock.now()).toISOString())
    expect(read.status).toBe(job.status)

    expect(retired().filter((r) => r.job_id === job.id)).toEqual([
      { token_hash: sha256(old), kind: 'tracking', account_id: api.accountId, job_id: job.id, reason: 'replaced', retired_at: api.clock.now() },
    ])
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events?limit=100`)).body.data
    const added = events.slice(before.events.length)
    expect(added).toEqual([expect.objectContaining({ type: 'job.updated', actor: 'dispatcher', from: null, to: null, detail: { fields: ['tracking_url'], user_id: 'usr_disp' } })])

    // Webhooks see it like any job.updated: one event log row, the job carrying the new link (sealed at rest).
    const row = api.db.$client.query('SELECT type, data FROM webhook_events WHERE event_id = ?').get(added[0].id) as { type: string; data: string }
    expect(row.type).toBe('job.updated')
    expect(row.data).not.toContain(fresh)
    const data = JSON.parse(openLinksIn(api.links, row.data))
    expect(data.job.tracking_url).toBe(read.tracking_url)
    expect(data.event).toMatchObject({ type: 'job.updated', detail: { fields: ['tracking_url'] } })
    // No one is texted: the customer asks the company for the new link.
    expect(textsOf(api, job.id).length).toBe(textsOf(api, job.id).filter((t) => t.template === 'request_received').length)
  })

  test('the operator at the console replaces it the same way (actor system), and a second replacement retires the second link', async () => {
    const job = await makeJob(api, key)
    const first = tokenOf(job.tracking_url)
    replaceTrackingLink(api.contexts.forOperator(api.accountId), job.id)
    const second = tokenOf((await call(api, key, 'GET', `/jobs/${job.id}`)).body.tracking_url)
    replaceTrackingLink(api.contexts.forOperator(api.accountId), job.id)
    const third = tokenOf((await call(api, key, 'GET', `/jobs/${job.id}`)).body.tracking_url)
    expect(new Set([first, second, third]).size).toBe(3)
    expect(retired().filter((r) => r.job_id === job.id).map((r) => r.token_hash).sort()).toEqual([sha256(first), sha256(second)].sort())
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(events.filter((e: any) => e.type === 'job.updated').map((e: any) => [e.actor, e.detail])).toEqual([['system', { fields: ['tracking_url'] }], ['system', { fields: ['tracking_url'] }]])
  })

  test('works on a finished job too (the customer may still need the page), and keeps its status', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const after = replaceTrackingLink(dispatcher(), job.id, { expectedStatus: 'completed' })
    expect(after.status).toBe('completed')
    expect(after.trackingTokenHash).not.toBe(sha256(tokenOf(job.tracking_url)))
  })

  test('an expected status the job is no longer in is 409 job_stale, like PATCH, and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    const retiredBefore = retired().length
    const err = refusal(() => replaceTrackingLink(dispatcher(), job.id, { expectedStatus: 'confirmed' }))
    expect(err.errorCode).toBe('job_stale')
    expect(err.status).toBe(409)
    expect(err.details).toEqual({ expected_status: 'confirmed', current_status: 'dispatched' })
    await expectNothingWritten(api, key, before)
    expect(retired().length).toBe(retiredBefore)
  })

  test('an archived job is 409 invalid_state and keeps its link', async () => {
    const job = await makeJob(api, key)
    archive(api, job.id)
    const before = await snapshot(api, key, job.id)
    const retiredBefore = retired().length
    expect(refusal(() => replaceTrackingLink(dispatcher(), job.id)).errorCode).toBe('invalid_state')
    await expectNothingWritten(api, key, before)
    expect(retired().length).toBe(retiredBefore)
  })

  test("another account's job, a site the dispatcher cannot see and an unknown id are 404 not_found, and nothing changes", async () => {
    const rival = api.account('Rival Towing')
    const rivalKey = api.key(['jobs:read', 'jobs:write'], { accountId: rival })
    const theirs = await makeJob(api, rivalKey)
    const otherSite = newId('site', api.clock.now())
    api.db.$client.query('INSERT INTO sites (id, account_id, name, created_at) VALUES (?, ?, ?, ?)').run(otherSite, api.accountId, 'North yard', api.clock.now())
    const ours = await makeJob(api, key)
    const before = await snapshot(api, rivalKey, theirs.id)
    const oursBefore = await snapshot(api, key, ours.id)
    const retiredBefore = retired().length
    for (const [ctx, id] of [[dispatcher(), theirs.id], [dispatcher(api.accountId, [otherSite]), ours.id], [dispatcher(), 'job_unknown']] as const) {
      const err = refusal(() => replaceTrackingLink(ctx, id))
      expect({ id, code: err.errorCode, status: err.status }).toEqual({ id, code: 'not_found', status: 404 })
    }
    await expectNothingWritten(api, rivalKey, before)
    await expectNothingWritten(api, key, oursBefore)
    expect(retired().length).toBe(retiredBefore)
  })

  test('needs jobs:write: a key without it is 403 insufficient_scope, a driver or customer link 403 forbidden', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    expect(refusal(() => replaceTrackingLink(api.contextOfKey(api.key(['jobs:read'])), job.id)).errorCode).toBe('insufficient_scope')
    expect(refusal(() => replaceTrackingLink(api.contexts.forCustomer({ accountId: api.accountId, jobId: job.id }), job.id)).errorCode).toBe('forbidden')
    expect(refusal(() => replaceTrackingLink(api.contexts.forDriver({ accountId: api.accountId, jobId: job.id, unitId: 'unit_x' }), job.id)).errorCode).toBe('forbidden')
    await expectNothingWritten(api, key, before)
  })
})

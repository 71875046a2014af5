/** Idempotency-Key on POST /jobs and POST /jobs/{id}/reopen, through HTTP. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, countRows, expectCallError, expectNothingWritten, NEW_JOB, NO_LIMITS, snapshot } from '../../test/jobs-helpers'

let api: TestApi
let key: string
beforeEach(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key(['jobs:read', 'jobs:write'])
})
afterEach(() => api.close())

const create = (body: unknown, idem: string, k = key) => call(api, k, 'POST', '/jobs', body, { 'idempotency-key': idem })
const written = () => ({ jobs: countRows(api, 'jobs'), events: countRows(api, 'job_events'), texts: countRows(api, 'texts') })

describe('Idempotency-Key on POST /jobs', () => {
  test('a retry with the same key and body returns the first status and body, marked Idempotent-Replayed, and creates nothing more', async () => {
    const first = await create(NEW_JOB, 'intake-42')
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const after = written()
    expect(after).toEqual({ jobs: 1, events: 1, texts: 1 })
    api.clock.advance(60_000)
    const retry = await create(NEW_JOB, 'intake-42')
    expect(retry.status).toBe(201)
    expect(retry.body).toEqual(first.body)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(written()).toEqual(after)
  })

  test('the same body with its keys in another order is the same request', async () => {
    const first = await create({ pickup: NEW_JOB.pickup, customer: { sms_consent: true, phone: NEW_JOB.customer.phone, name: NEW_JOB.customer.name } }, 'reordered')
    const retry = await create({ customer: { name: NEW_JOB.customer.name, phone: NEW_JOB.customer.phone, sms_consent: true }, pickup: NEW_JOB.pickup }, 'reordered')
    expect(retry.body.id).toBe(first.body.id)
    expect(countRows(api, 'jobs')).toBe(1)
  })

  test('the same key with a different body is 422 idempotency_key_reused and creates nothing', async () => {
    await create(NEW_JOB, 'intake-43')
    const after = written()
    expectCallError(await create({ ...NEW_JOB, destination: 'Somewhere else' }, 'intake-43'), 422, 'idempotency_key_reused')
    expect(written()).toEqual(after)
  })

  test('five concurrent identical requests create one job and all answer with it', async () => {
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => create(NEW_JOB, 'burst-1')))
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201])
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true').length).toBe(4)
    expect(written()).toEqual({ jobs: 1, events: 1, texts: 1 })
  })

  test('keys are per API key: another key sending the same Idempotency-Key creates its own job', async () => {
    const other = api.key(['jobs:write'])
    const a = await create(NEW_JOB, 'shared-key')
    const b = await create(NEW_JOB, 'shared-key', other)
    expect([a.status, b.status]).toEqual([201, 201])
    expect(b.body.id).not.toBe(a.body.id)
    expect(b.headers.get('idempotent-replayed')).toBeNull()
    expect(countRows(api, 'jobs')).toBe(2)
  })

  test('keys are kept at least 24 hours: a retry 23 hours later is still replayed', async () => {
    const first = await create(NEW_JOB, 'next-day')
    api.clock.advance(23 * 3_600_000)
    const retry = await create(NEW_JOB, 'next-day')
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.body).toEqual(first.body)
    expect(countRows(api, 'jobs')).toBe(1)
  })

  test('keys are forgotten after 48 hours: the same key and body then create a new job', async () => {
    const first = await create(NEW_JOB, 'two-days')
    api.clock.advance(49 * 3_600_000)
    const later = await create(NEW_JOB, 'two-days')
    expect(later.status).toBe(201)
    expect(later.headers.get('idempotent-replayed')).toBeNull()
    expect(later.body.id).not.toBe(first.body.id)
  })

  test('a failed first attempt is not remembered: after a 409 conflict, the same key and body are refused again the same way', async () => {
    const existing = (await call(api, key, 'POST', '/jobs', { ...NEW_JOB, external_ref: 'REF-9' })).body
    const body = { ...NEW_JOB, external_ref: 'REF-9' }
    for (let i = 0; i < 2; i++) {
      const err = expectCallError(await create(body, 'after-conflict'), 409, 'conflict')
      expect(err.details.existing_job_id).toBe(existing.id)
    }
    expect(countRows(api, 'jobs')).toBe(1)
  })

  test('without a key, two identical requests create two jobs', async () => {
    await call(api, key, 'POST', '/jobs', NEW_JOB)
    await call(api, key, 'POST', '/jobs', NEW_JOB)
    expect(countRows(api, 'jobs')).toBe(2)
  })
})

describe('Idempotency-Key on POST /jobs/{id}/reopen', () => {
  test('a retry with the same key and body returns the first response and does not reopen twice', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const reopen = () => call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Car died again' }, { 'idempotency-key': 'reopen-1' })
    const first = await reopen()
    expect(first.status).toBe(200)
    expect(first.body.reopen_count).toBe(1)
    const before = await snapshot(api, key, job.id)
    api.clock.advance(60_000)
    const retry = await reopen()
    expect(retry.status).toBe(200)
    expect(retry.body).toEqual(first.body)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    await expectNothingWritten(api, key, before)
  })

  test('the same key with another reason is 422 idempotency_key_reused and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'cancelled')
    await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Car died again' }, { 'idempotency-key': 'reopen-2' })
    const before = await snapshot(api, key, job.id)
    expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Another reason' }, { 'idempotency-key': 'reopen-2' }), 422, 'idempotency_key_reused')
    await expectNothingWritten(api, key, before)
  })

  test('a key used for one job is refused for another job (the path is part of the request)', async () => {
    const a = await bringTo(api, key, 'completed')
    const b = await bringTo(api, key, 'completed')
    await call(api, key, 'POST', `/jobs/${a.job.id}/reopen`, { reason: 'Car died again' }, { 'idempotency-key': 'reopen-3' })
    const before = await snapshot(api, key, b.job.id)
    expectCallError(await call(api, key, 'POST', `/jobs/${b.job.id}/reopen`, { reason: 'Car died again' }, { 'idempotency-key': 'reopen-3' }), 422, 'idempotency_key_reused')
    await expectNothingWritten(api, key, before)
  })
})

describe('Idempotency-Key on PATCH', () => {
  test('is ignored: the same key on two different PATCHes applies both', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const h = { 'idempotency-key': 'patch-1' }
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' }, h)).body.status).toBe('en_route')
    const second = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' }, h)
    expect(second.body.status).toBe('on_scene')
    expect(second.headers.get('idempotent-replayed')).toBeNull()
  })
})

/** POST /jobs/{id}/reopen, as the spec's table says, through HTTP. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, expectCallError, expectNothingWritten, newEvents, NO_LIMITS, nowIso, REASON, snapshot, textsSince } from '../../test/jobs-helpers'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key(['jobs:read', 'jobs:write'])
})
afterAll(() => api.close())

const reopen = (id: string, body: unknown = { reason: 'Car died again at the garage' }) => call(api, key, 'POST', `/jobs/${id}/reopen`, body)

describe('POST /jobs/{id}/reopen', () => {
  test('brings a cancelled job back to confirmed: reopen_count + 1, cancel_reason cleared, reopened_at set, other milestones kept', async () => {
    const { job } = await bringTo(api, key, 'cancelled', { withUnit: true })
    expect(job.cancel_reason).toBe(REASON)
    api.clock.advance(3_600_000)
    const res = await reopen(job.id)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ object: 'job', id: job.id, status: 'confirmed', reopen_count: 1, cancel_reason: null, rating: null, rating_comment: null, rated_at: null, updated_at: nowIso(api) })
    expect(res.body.timestamps).toEqual({ ...job.timestamps, reopened_at: nowIso(api) })
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body).toEqual(res.body)
  })

  test('writes job.reopened (what the move erased) then job.status_changed from the finished status to confirmed, in that order, and texts the customer', async () => {
    const withReason = await bringTo(api, key, 'dispatched')
    expect((await call(api, key, 'PATCH', `/jobs/${withReason.job.id}`, { status: 'goa', cancel_reason: 'Nobody at the pickup' })).status).toBe(200)
    const before = await snapshot(api, key, withReason.job.id)
    api.clock.advance(60_000)
    const res = await reopen(withReason.job.id, { reason: '  Customer is back at the car  ' })
    expect(res.status).toBe(200)
    const events = await newEvents(api, key, withReason.job.id, before.events)
    expect(events.map((e) => ({ type: e.type, from: e.from, to: e.to, actor: e.actor }))).toEqual([
      { type: 'job.reopened', from: 'goa', to: 'confirmed', actor: 'system' },
      { type: 'job.status_changed', from: 'goa', to: 'confirmed', actor: 'system' },
    ])
    expect(events[0].detail).toMatchObject({ reason: 'Customer is back at the car', reopen_count: 1, cancel_reason: 'Nobody at the pickup', rating: null, rating_comment: null, rated_at: null })
    expect(events[1].sequence).toBe(events[0].sequence + 1)
    expect(events[0].sequence).toBe(before.events.at(-1).sequence + 1)
    expect(textsSince(api, before.texts).map((t) => ({ job: t.job_id, template: t.template }))).toEqual([{ job: withReason.job.id, template: 'status_confirmed' }])
  })

  test('complete -> reopen -> complete again keeps completed_at and closed_at of the first run and counts both reopens', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const first = job.timestamps
    expect(first.closed_at).toBe(first.completed_at)
    api.clock.advance(3_600_000)
    expect((await reopen(job.id)).body.reopen_count).toBe(1)
    const firstReopen = nowIso(api)
    api.clock.advance(3_600_000)
    const again = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'completed' })
    expect(again.status).toBe(200)
    expect(again.body.timestamps).toEqual({ ...first, reopened_at: firstReopen })
    api.clock.advance(3_600_000)
    const second = await reopen(job.id)
    expect(second.body).toMatchObject({ status: 'confirmed', reopen_count: 2 })
    expect(second.body.timestamps).toEqual({ ...first, reopened_at: nowIso(api) })
  })

  test('clears the rating, and job.reopened carries the rating, rating_comment and rated_at it erased', async () => {
    const { job } = await bringTo(api, key, 'completed')
    // No rating route exists yet (the tracking page will add one), so the customer's rating is set as that page would store it.
    const ratedAt = api.clock.now()
    api.db.$client.query('UPDATE jobs SET rating = 2, rating_comment = ?, rated_at = ? WHERE id = ?').run('Driver was late', ratedAt, job.id)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body).toMatchObject({ rating: 2, rating_comment: 'Driver was late' })
    api.clock.advance(60_000)
    const res = await reopen(job.id)
    expect(res.body).toMatchObject({ status: 'confirmed', rating: null, rating_comment: null, rated_at: null })
    const reopened = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data.find((e: any) => e.type === 'job.reopened')
    expect(reopened.detail).toMatchObject({ reason: 'Car died again at the garage', reopen_count: 1, cancel_reason: null, rating: 2, rating_comment: 'Driver was late', rated_at: new Date(ratedAt).toISOString() })
  })

  const unusable: [string, unknown][] = [
    ['a missing reason', {}],
    ['an empty body', undefined],
    ['"  ab  " (2 characters after trimming)', { reason: '  ab  ' }],
    ['a reason of 501 characters', { reason: 'x'.repeat(501) }],
    ['a null reason', { reason: null }],
    ['a reason of 3,000 characters', { reason: 'x'.repeat(3000) }],
    ['"🚗a" (2 characters: an emoji is one)', { reason: '🚗a' }],
    ['501 emoji', { reason: '🚗'.repeat(501) }],
  ]
  for (const [what, body] of unusable) {
    test(`${what} is 422 job_reason_required and writes nothing`, async () => {
      const { job } = await bringTo(api, key, 'completed')
      const before = await snapshot(api, key, job.id)
      expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/reopen`, body), 422, 'job_reason_required')
      await expectNothingWritten(api, key, before)
    })
  }

  test('a reason of 500 characters (3 after trimming at the short end) is accepted', async () => {
    const long = await bringTo(api, key, 'completed')
    const res = await reopen(long.job.id, { reason: 'y'.repeat(500) })
    expect(res.status).toBe(200)
    const short = await bringTo(api, key, 'cancelled')
    expect((await reopen(short.job.id, { reason: '  abc  ' })).status).toBe(200)
    const events = (await call(api, key, 'GET', `/jobs/${short.job.id}/events`)).body.data
    expect(events.find((e: any) => e.type === 'job.reopened').detail.reason).toBe('abc')
    // Characters, not UTF-16 units: 500 emoji (1,000 units) are 500 characters.
    const emoji = await bringTo(api, key, 'goa')
    expect((await reopen(emoji.job.id, { reason: '🚗'.repeat(500) })).status).toBe(200)
  })

  test('an unfinished job refuses a reopen with 409 job_transition_refused before looking at the reason', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const before = await snapshot(api, key, job.id)
    const err = expectCallError(await reopen(job.id, {}), 409, 'job_transition_refused')
    expect({ from: err.details.from, to: err.details.to }).toEqual({ from: 'en_route', to: 'confirmed' })
    await expectNothingWritten(api, key, before)
  })

  test('an unknown field in the body is 422 validation_failed and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const before = await snapshot(api, key, job.id)
    const err = expectCallError(await reopen(job.id, { reason: 'Customer called back', status: 'dispatched' }), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['status'])
    await expectNothingWritten(api, key, before)
  })
})

/**
 * The commit seam: statuses change only through a move, and what a change sets off (texts,
 * webhook events) is written by registered writers inside the same transaction.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, expectNothingWritten, makeJob, NO_LIMITS, snapshot, textsOf } from '../../test/jobs-helpers'
import { inTransaction } from '../db/client'
import { AppError } from '../platform/errors'
import { JOB_WRITERS } from '../operations/context-factory'
import { commitJobChange, type JobChange, type JobFields } from './commit-job-change'
import { findJobOrThrow } from './job.queries'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterAll(() => api.close())

const refusal = (fn: () => unknown): AppError => {
  try { fn() } catch (err) { return err as AppError }
  throw new Error('expected a refusal')
}

describe('commitJobChange', () => {
  test('refuses a status written as a plain field, and writes nothing', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const ctx = api.contextOfKey(key)
    for (const set of [{ status: 'completed' }, { milestones: {} }, { eventSeq: 9 }] as unknown as JobFields[]) {
      const err = refusal(() => inTransaction(api.db, (tx) => commitJobChange(tx, ctx, findJobOrThrow(tx, ctx.scope, job.id), { set, events: [{ type: 'job.updated', detail: { fields: ['x'] } }] })))
      expect(err).toBeInstanceOf(AppError)
      expect(err.errorCode).toBe('internal_error')
    }
    await expectNothingWritten(api, key, before)
  })

  test('refuses job.status_changed among an operation\'s own events: the move writes it', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const ctx = api.contextOfKey(key)
    const err = refusal(() => inTransaction(api.db, (tx) => commitJobChange(tx, ctx, findJobOrThrow(tx, ctx.scope, job.id), { events: [{ type: 'job.status_changed', from: 'confirmed', to: 'completed' }] })))
    expect(err.errorCode).toBe('internal_error')
    await expectNothingWritten(api, key, before)
  })

  test('a move goes through the transition table, stamps its milestone and writes job.status_changed after the operation\'s events', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const ctx = api.contextOfKey(key)
    api.clock.advance(1000)
    const refused = refusal(() => inTransaction(api.db, (tx) => commitJobChange(tx, ctx, findJobOrThrow(tx, ctx.scope, job.id), { move: { to: 'pending', via: 'patch' } })))
    expect(refused.errorCode).toBe('job_transition_refused')
    const { after, events } = inTransaction(api.db, (tx) => commitJobChange(tx, ctx, findJobOrThrow(tx, ctx.scope, job.id), {
      events: [{ type: 'job.note_added', detail: { text: 'x' } }], move: { to: 'en_route', via: 'patch' },
    }))
    expect(after.status).toBe('en_route')
    expect(events.map((e) => e.type)).toEqual(['job.note_added', 'job.status_changed'])
    const read = (await call(api, key, 'GET', `/jobs/${job.id}`)).body
    expect(read.timestamps.en_route_at).toBe(new Date(api.clock.now()).toISOString())
  })

  test('every context carries the writers; a writer that fails rolls the whole change back', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Ann', phone: '+15035550199', sms_consent: true } })
    const ctx = api.contextOfKey(key)
    expect(ctx.jobWriters).toEqual(JOB_WRITERS)
    expect(api.contexts.forDispatcher({ userId: 'usr_1', role: 'dispatcher', accountId: api.accountId }).jobWriters).toEqual(JOB_WRITERS)
    const before = await snapshot(api, key, job.id)
    const failing = { ...ctx, jobWriters: [...JOB_WRITERS, () => { throw new AppError('internal_error', 'writer failed') }] }
    refusal(() => inTransaction(api.db, (tx) => commitJobChange(tx, failing, findJobOrThrow(tx, ctx.scope, job.id), { move: { to: 'cancelled', via: 'patch' }, set: { cancelReason: 'Customer found a ride' } })))
    await expectNothingWritten(api, key, before)
    // The same change through the real writers texts the customer, in the change's transaction.
    inTransaction(api.db, (tx) => commitJobChange(tx, ctx, findJobOrThrow(tx, ctx.scope, job.id), { move: { to: 'cancelled', via: 'patch' }, set: { cancelReason: 'Customer found a ride' } }))
    expect(textsOf(api, job.id).map((t) => t.template)).toEqual(['request_received', 'status_cancelled'])
  })

  test('a live link changes only with a reason: replaced or cleared without one, or a reason for a link that stays, is refused and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    const retired = () => (api.db.$client.query('SELECT count(*) AS n FROM retired_links').get() as { n: number }).n
    const retiredBefore = retired()
    const ctx = api.contextOfKey(key)
    const changes: JobChange[] = [
      { set: { trackingTokenHash: 'a'.repeat(64), trackingTokenSealed: 'x' }, events: [{ type: 'job.updated', detail: { fields: ['tracking_url'] } }] },
      { set: { driverTokenHash: null, driverTokenSealed: null }, events: [{ type: 'job.updated', detail: { fields: ['x'] } }] },
      { events: [{ type: 'job.updated', detail: { fields: ['x'] } }], retireLinks: { tracking: 'replaced' } },
    ]
    for (const change of changes) {
      const err = refusal(() => inTransaction(api.db, (tx) => commitJobChange(tx, ctx, findJobOrThrow(tx, ctx.scope, job.id), change)))
      expect({ change: JSON.stringify(change), code: err.errorCode }).toEqual({ change: JSON.stringify(change), code: 'internal_error' })
    }
    await expectNothingWritten(api, key, before)
    expect(retired()).toBe(retiredBefore)
  })
})

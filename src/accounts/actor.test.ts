/**
 * One context, one actor: every operation checks what its actor may do, so a page can never do
 * more than the API, and a driver's or customer's link never more than its holder may.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, expectNothingWritten, makeJob, makeUnit, NO_LIMITS, snapshot } from '../../test/jobs-helpers'
import { AppError } from '../platform/errors'
import { addCustomerMessage } from '../jobs/add-customer-message'
import { addNote } from '../jobs/add-note'
import { archiveJob } from '../jobs/archive-job'
import { assignJob } from '../jobs/assign-job'
import { changeStatus } from '../jobs/change-status'
import { createJob } from '../jobs/create-job'
import { getJob, listJobEvents, listJobs } from '../jobs/list-jobs'
import { reopenJob } from '../jobs/reopen-job'
import { unassignJob } from '../jobs/unassign-job'
import { updateJob } from '../jobs/update-job'
import { listUnitsPage } from '../units/list-units'
import { listServicesPage } from '../services/list-services'
import { createEndpoint, listEndpoints } from '../webhooks/manage-endpoints'
import { listJobTexts } from '../texts/list-texts'
import type { OperationContext } from '../operations/operation-context'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterAll(() => api.close())

/** Runs an operation and returns its refusal (or fails the test if it went through). */
async function refused(fn: () => unknown): Promise<AppError> {
  try { await fn() } catch (err) { if (err instanceof AppError) return err; throw err }
  throw new Error('the operation went through')
}

const manage = () => ({ db: api.db, clock: api.clock, allowPrivate: true })

describe('a driver\'s link', () => {
  test('may move its own job one step forward, as the driver, and nothing else', async () => {
    const { job, unit } = await bringTo(api, key, 'dispatched')
    const other = await makeJob(api, key)
    const driver = api.contexts.forDriver({ accountId: api.accountId, jobId: job.id, unitId: unit!.id })
    const before = await snapshot(api, key, job.id)
    const attempts: [string, () => unknown][] = [
      ['PATCH', () => updateJob(driver, job.id, { destination: 'My place' })],
      ['skip a step', () => changeStatus(driver, job.id, { to: 'on_scene' })],
      ['cancel', () => changeStatus(driver, job.id, { to: 'cancelled', reason: 'Not my problem' })],
      ['assign', () => assignJob(driver, job.id, unit!.id)],
      ['unassign', () => unassignJob(driver, job.id)],
      ['note', () => addNote(driver, job.id, { text: 'hi' })],
      ['reopen', () => reopenJob(driver, job.id, 'because')],
      ['archive', () => archiveJob(driver, job.id)],
      ['create', () => createJob(driver, { customer: { name: 'X' }, pickup: { location: 'Y' } })],
      ['list jobs', () => listJobs(driver, {})],
      ['read', () => getJob(driver, job.id)],
      ['timeline', () => listJobEvents(driver, job.id, {})],
      ['texts', () => listJobTexts(driver, job.id, {})],
      ['units', () => listUnitsPage(driver, {})],
      ['services', () => listServicesPage(driver, {})],
      ['webhooks', () => listEndpoints(driver, {})],
      ['add webhook', () => createEndpoint(manage(), driver, { url: 'https://127.0.0.1/x', events: ['*'] })],
      ['customer message', () => addCustomerMessage(driver, job.id, { text: 'hi', via: 'tracking_page' })],
    ]
    for (const [what, fn] of attempts) {
      const err = await refused(fn)
      expect({ what, code: err.errorCode }).toEqual({ what, code: what === 'skip a step' || what === 'cancel' ? 'job_transition_refused' : 'forbidden' })
    }
    // Another job is as unknown to the link as another account's.
    expect((await refused(() => changeStatus(driver, other.id, { to: 'en_route' }))).errorCode).toBe('not_found')
    await expectNothingWritten(api, key, before)

    changeStatus(driver, job.id, { to: 'en_route', expectedStatus: 'dispatched' })
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(events.at(-1)).toMatchObject({ type: 'job.status_changed', from: 'dispatched', to: 'en_route', actor: 'driver', detail: { unit_id: unit!.id } })
    // A stale button is refused, not forced.
    expect((await refused(() => changeStatus(driver, job.id, { to: 'on_scene', expectedStatus: 'dispatched' }))).errorCode).toBe('job_stale')
  })

  test('stops working for a job handed to another unit', async () => {
    const { job, unit } = await bringTo(api, key, 'dispatched')
    const driver = api.contexts.forDriver({ accountId: api.accountId, jobId: job.id, unitId: unit!.id })
    await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: makeUnit(api).id })
    const err = await refused(() => changeStatus(driver, job.id, { to: 'en_route' }))
    expect(err.errorCode).toBe('forbidden')
  })
})

describe('a customer\'s link', () => {
  test('may write a message on its own job, as the customer, and nothing else', async () => {
    const job = await makeJob(api, key)
    const other = await makeJob(api, key)
    const customer = api.contexts.forCustomer({ accountId: api.accountId, jobId: job.id })
    const before = await snapshot(api, key, job.id)
    for (const fn of [
      () => updateJob(customer, job.id, { destination: 'x' }),
      () => changeStatus(customer, job.id, { to: 'cancelled', reason: 'changed my mind' }),
      () => addNote(customer, job.id, { text: 'hello' }),
      () => getJob(customer, job.id),
      () => listJobs(customer, {}),
      () => archiveJob(customer, job.id),
    ]) expect((await refused(fn)).errorCode).toBe('forbidden')
    expect((await refused(() => addCustomerMessage(customer, other.id, { text: 'hi', via: 'tracking_page' }))).errorCode).toBe('not_found')
    await expectNothingWritten(api, key, before)
    addCustomerMessage(customer, job.id, { text: 'I am behind the blue van', via: 'tracking_page' })
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(events.at(-1)).toMatchObject({ type: 'job.customer_message', actor: 'customer', detail: { text: 'I am behind the blue van', via: 'tracking_page' } })
  })
})

describe('a dashboard user', () => {
  const dispatcher = (role: 'owner' | 'dispatcher'): OperationContext => api.contexts.forDispatcher({ userId: `usr_${role}`, role, accountId: api.accountId })

  test('acts as dispatcher with detail.user_id, through the same operations as the API', async () => {
    const ctx = dispatcher('dispatcher')
    const job = createJob(ctx, { customer: { name: 'Board entry', phone: '+15035550177', sms_consent: true }, pickup: { location: 'Depot' } })
    const unit = makeUnit(api)
    assignJob(ctx, job.id, unit.id)
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(events.map((e: any) => [e.type, e.actor, e.detail.user_id])).toEqual([
      ['job.created', 'dispatcher', 'usr_dispatcher'], ['job.assigned', 'dispatcher', 'usr_dispatcher'], ['job.status_changed', 'dispatcher', 'usr_dispatcher'],
    ])
    const texts = (await call(api, key, 'GET', `/jobs/${job.id}/texts`)).body.data
    expect(texts.map((t: any) => t.template ?? t.body.slice(0, 10)).length).toBe(3)
  })

  test('a dispatcher may not manage webhooks; an owner may', async () => {
    const err = await refused(() => createEndpoint(manage(), dispatcher('dispatcher'), { url: 'https://127.0.0.1/hook', events: ['*'] }))
    expect(err.errorCode).toBe('forbidden')
    expect((await refused(() => listEndpoints(dispatcher('dispatcher'), {}))).errorCode).toBe('forbidden')
    const made = await createEndpoint(manage(), dispatcher('owner'), { url: 'https://127.0.0.1/hook', events: ['*'] })
    expect(made.id).toStartWith('whk_')
  })

  test('sees only its own account\'s jobs', async () => {
    const otherAccount = api.account('Other Towing')
    const theirs = await makeJob(api, api.key('all', { accountId: otherAccount }))
    expect((await refused(() => getJob(dispatcher('owner'), theirs.id))).errorCode).toBe('not_found')
  })
})

describe('an API key', () => {
  test('without the scope is refused by the operation itself, as insufficient_scope', async () => {
    const job = await makeJob(api, key)
    const reader = api.contextOfKey(api.key(['jobs:read']))
    const err = await refused(() => updateJob(reader, job.id, { destination: 'x' }))
    expect(err.errorCode).toBe('insufficient_scope')
    expect(err.details.required_scope).toBe('jobs:write')
  })
})

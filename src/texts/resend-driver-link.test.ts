/**
 * Resend driver link: the assigned unit's driver gets their job-link text again, through the
 * same outbox and template as on assign, tied to the assignment that minted the link. The link
 * itself is kept (the driver may have it open); refusals write nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { archive, bringTo, call, expectNothingWritten, makeJob, makeUnit, NO_LIMITS, snapshot, textsOf } from '../../test/jobs-helpers'
import { AppError } from '../platform/errors'
import { driverUrlOf, openLinksIn } from '../jobs/job-links'
import { resendDriverLink } from './resend-driver-link'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterAll(() => api.close())

const dispatcher = (accountId = api.accountId) => api.contexts.forDispatcher({ userId: 'usr_disp', role: 'dispatcher', accountId })
const refusal = (fn: () => unknown): AppError => {
  try { fn() } catch (err) { if (err instanceof AppError) return err; throw err }
  throw new Error('expected a refusal')
}
const driverColumns = (jobId: string) => api.db.$client.query('SELECT driver_token_hash, driver_token_sealed FROM jobs WHERE id = ?').get(jobId) as { driver_token_hash: string; driver_token_sealed: string }
const eventsOf = async (jobId: string) => (await call(api, key, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data as any[]

describe('resendDriverLink', () => {
  test('queues exactly one driver_job_link text to the unit\'s driver, tied to the assign event, with the live link', async () => {
    const { job, unit } = await bringTo(api, key, 'en_route')
    const assigned = (await eventsOf(job.id)).find((e) => e.type === 'job.assigned')
    const link = driverColumns(job.id)
    const textsBefore = textsOf(api, job.id)
    const eventsBefore = await eventsOf(job.id)
    api.clock.advance(5_000)
    const sent = resendDriverLink(dispatcher(), job.id)

    const added = textsOf(api, job.id).slice(textsBefore.length)
    expect(added).toHaveLength(1)
    expect(added[0]).toMatchObject({ id: sent.textId, recipient: 'driver', template: 'driver_job_link', unit_id: unit!.id, to_phone: unit!.driverPhone, event_id: assigned.id, status: 'queued', skip_reason: null, created_at: api.clock.now() })
    expect(sent.skipReason).toBeNull()
    // The same wording as on assign, with the link the driver already has: resending never kills it.
    const onAssign = textsBefore.find((t) => t.template === 'driver_job_link')!
    expect(openLinksIn(api.links, added[0].body)).toBe(openLinksIn(api.links, onAssign.body))
    expect(openLinksIn(api.links, added[0].body)).toContain(driverUrlOf(api.links, { driverTokenSealed: link.driver_token_sealed })!)
    expect(added[0].body).not.toMatch(/\/d\/[0-9A-Za-z]{24}/)
    expect(driverColumns(job.id)).toEqual(link)
    // Not a job change: no event, the job untouched.
    expect(await eventsOf(job.id)).toEqual(eventsBefore)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.updated_at).toBe(job.updated_at)
  })

  test('after a reassign it goes to the new unit\'s driver, tied to job.reassigned; the account\'s own wording is used', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const other = makeUnit(api)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: other.id })).status).toBe(200)
    const reassigned = (await eventsOf(job.id)).find((e) => e.type === 'job.reassigned')
    api.db.$client.query("INSERT INTO text_templates (account_id, name, body, updated_at) VALUES (?, 'driver_job_link', 'Job {job_ref}: {driver_url}', ?)").run(api.accountId, api.clock.now())
    try {
      const before = textsOf(api, job.id).length
      resendDriverLink(api.contexts.forOperator(api.accountId), job.id, { expectedStatus: 'dispatched' })
      const added = textsOf(api, job.id).slice(before)
      expect(added.map((t) => ({ to: t.to_phone, unit: t.unit_id, event: t.event_id, template: t.template }))).toEqual([{ to: other.driverPhone, unit: other.id, event: reassigned.id, template: 'driver_job_link' }])
      expect(openLinksIn(api.links, added[0].body)).toBe(`Job ${job.id.slice(-6)}: ${driverUrlOf(api.links, { driverTokenSealed: driverColumns(job.id).driver_token_sealed })}`)
    } finally {
      api.db.$client.query("DELETE FROM text_templates WHERE account_id = ? AND name = 'driver_job_link'").run(api.accountId)
    }
  })

  test('a job with no unit, a finished job and an archived job are 409 invalid_state, and nothing is written', async () => {
    const waiting = await makeJob(api, key)
    const { job: done } = await bringTo(api, key, 'completed')
    const { job: shelved } = await bringTo(api, key, 'dispatched')
    archive(api, shelved.id)
    for (const job of [waiting, done, shelved]) {
      const before = await snapshot(api, key, job.id)
      const err = refusal(() => resendDriverLink(dispatcher(), job.id))
      expect({ job: job.id, code: err.errorCode, status: err.status }).toEqual({ job: job.id, code: 'invalid_state', status: 409 })
      await expectNothingWritten(api, key, before)
    }
  })

  test('a stale expected status is 409 job_stale; another account\'s job 404; without jobs:write 403; nothing is written', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const before = await snapshot(api, key, job.id)
    const stale = refusal(() => resendDriverLink(dispatcher(), job.id, { expectedStatus: 'dispatched' }))
    expect({ code: stale.errorCode, details: stale.details }).toEqual({ code: 'job_stale', details: { expected_status: 'dispatched', current_status: 'en_route' } })
    const rival = api.account('Rival Towing')
    expect(refusal(() => resendDriverLink(dispatcher(rival), job.id)).errorCode).toBe('not_found')
    expect(refusal(() => resendDriverLink(api.contextOfKey(api.key(['jobs:read'])), job.id)).errorCode).toBe('insufficient_scope')
    expect(refusal(() => resendDriverLink(api.contexts.forDriver({ accountId: api.accountId, jobId: job.id, unitId: job.unit.id }), job.id)).errorCode).toBe('forbidden')
    await expectNothingWritten(api, key, before)
  })
})

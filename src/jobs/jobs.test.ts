/**
 * POST/GET/PATCH /jobs, assign, notes, texts, isolation and archived jobs, through HTTP.
 * Every error answer is checked for its shape and for having written nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import {
  archive, bringTo, call, countRows, expectCallError, expectNothingWritten, makeJob, makeUnit, newEvents, NEW_JOB, NO_LIMITS, nowIso, REASON, snapshot, textsOf, textsSince,
} from '../../test/jobs-helpers'
import { newId } from '../platform/ids'
import { AppError } from '../platform/errors'
import { updateJob } from './update-job'
import { addService } from '../services/add-service'
import { openLinksIn } from './job-links'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key(['jobs:read', 'jobs:write', 'roster:read', 'services:read'])
})
afterAll(() => api.close())

describe('POST /jobs', () => {
  test('creates a confirmed job with its milestones, tracking link and job.created on the timeline', async () => {
    const now = nowIso(api)
    const res = await call(api, key, 'POST', '/jobs', { ...NEW_JOB, external_ref: 'AAA-1' })
    expect(res.status).toBe(201)
    const job = res.body
    expect(job).toMatchObject({
      object: 'job', status: 'confirmed', external_ref: 'AAA-1', source: 'motor_club', payer_type: 'motor_club', service_type: 'flatbed', urgency: 'urgent',
      customer: { name: 'Ann Lee', phone: '+15035550142', sms_consent: true },
      vehicle: { year: '2019', make: 'Honda', model: 'Civic', drive_type: 'fwd' },
      pickup: { location: 'I-5 N at exit 299B, right shoulder' }, destination: "Joe's Garage, 1200 SE Grand Ave",
      cancel_reason: null, rating: null, reopen_count: 0, unit: null, position: null, created_at: now, updated_at: now,
    })
    expect(job.id).toStartWith('job_')
    expect(job.timestamps).toMatchObject({ created_at: now, confirmed_at: now, pending_at: null, dispatched_at: null, completed_at: null, closed_at: null, reopened_at: null })
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body
    expect(events).toMatchObject({ object: 'list', has_more: false, next_cursor: null })
    expect(events.data).toEqual([expect.objectContaining({ object: 'job_event', job_id: job.id, type: 'job.created', from: null, to: 'confirmed', actor: 'system', sequence: 1, created_at: now })])
    expect(events.data[0].id).toStartWith('evt_')
  })

  test('status pending creates a job that awaits a dispatcher, with pending_at stamped', async () => {
    const job = await makeJob(api, key, { status: 'pending' })
    expect(job.status).toBe('pending')
    expect(job.timestamps.pending_at).toBe(nowIso(api))
    expect(job.timestamps.confirmed_at).toBeNull()
  })

  test('a body without pickup.location or customer.name is 422 validation_failed naming the field, and creates nothing', async () => {
    const jobs = countRows(api, 'jobs')
    const noPickup = expectCallError(await call(api, key, 'POST', '/jobs', { customer: { name: 'Ann' } }), 422, 'validation_failed')
    expect(noPickup.details.fields.map((f: any) => f.path)).toContain('pickup')
    const blankName = expectCallError(await call(api, key, 'POST', '/jobs', { ...NEW_JOB, customer: { name: '   ' } }), 422, 'validation_failed')
    expect(blankName.details.fields.map((f: any) => f.path)).toEqual(['customer.name'])
    expect(countRows(api, 'jobs')).toBe(jobs)
  })

  test('a customer.phone that cannot be texted is 422 validation_failed naming customer.phone, and creates nothing', async () => {
    const before = { jobs: countRows(api, 'jobs'), texts: countRows(api, 'texts') }
    const err = expectCallError(await call(api, key, 'POST', '/jobs', { ...NEW_JOB, customer: { name: 'Ann', phone: 'call me' } }), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['customer.phone'])
    expect({ jobs: countRows(api, 'jobs'), texts: countRows(api, 'texts') }).toEqual(before)
  })

  test('unknown body fields are refused with 422 validation_failed naming their path, top-level and nested', async () => {
    const jobs = countRows(api, 'jobs')
    const top = expectCallError(await call(api, key, 'POST', '/jobs', { ...NEW_JOB, colour: 'red' }), 422, 'validation_failed')
    expect(top.details.fields.map((f: any) => f.path)).toEqual(['colour'])
    const nested = expectCallError(await call(api, key, 'POST', '/jobs', { ...NEW_JOB, customer: { ...NEW_JOB.customer, email: 'a@b.c' } }), 422, 'validation_failed')
    expect(nested.details.fields.map((f: any) => f.path)).toEqual(['customer.email'])
    expect(countRows(api, 'jobs')).toBe(jobs)
  })
})

describe('external_ref', () => {
  test('a duplicate on the account is 409 conflict naming the existing job, and writes nothing', async () => {
    const first = await makeJob(api, key, { external_ref: 'DUP-1' })
    const existing = await snapshot(api, key, first.id)
    const before = { jobs: countRows(api, 'jobs'), texts: countRows(api, 'texts'), events: countRows(api, 'job_events') }
    const err = expectCallError(await call(api, key, 'POST', '/jobs', { ...NEW_JOB, external_ref: 'DUP-1' }), 409, 'conflict')
    expect(err.details.existing_job_id).toBe(first.id)
    expect({ jobs: countRows(api, 'jobs'), texts: countRows(api, 'texts'), events: countRows(api, 'job_events') }).toEqual(before)
    await expectNothingWritten(api, key, existing)
  })

  test('is unique per account: another account may use the same reference', async () => {
    await makeJob(api, key, { external_ref: 'SHARED-1' })
    const other = api.key(['jobs:write'], { accountId: api.account('Other Towing') })
    expect((await call(api, other, 'POST', '/jobs', { ...NEW_JOB, external_ref: 'SHARED-1' })).status).toBe(201)
  })
})

describe('the texts outbox', () => {
  test('create queues a request_received text when the customer consented and has a phone', async () => {
    const job = await makeJob(api, key)
    expect(textsOf(api, job.id).map((t) => ({ recipient: t.recipient, template: t.template, to: t.to_phone, status: t.status, skip: t.skip_reason })))
      .toEqual([{ recipient: 'customer', template: 'request_received', to: '+15035550142', status: 'queued', skip: null }])
    // The outbox keeps the link's token sealed; opened, it is the job's tracking link.
    expect(textsOf(api, job.id)[0].body).not.toContain(job.tracking_url)
    expect(openLinksIn(api.links, textsOf(api, job.id)[0].body)).toContain(job.tracking_url)
  })

  test('without consent the request_received row is recorded as skipped with the reason no_consent', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Bo', phone: '+15035550143', sms_consent: false } })
    expect(textsOf(api, job.id).map((t) => ({ template: t.template, status: t.status, skip: t.skip_reason }))).toEqual([{ template: 'request_received', status: 'skipped', skip: 'no_consent' }])
  })

  test('sms_consent defaults to false', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Bo', phone: '+15035550143' } })
    expect(job.customer.sms_consent).toBe(false)
    expect(textsOf(api, job.id).map((t) => t.skip_reason)).toEqual(['no_consent'])
  })

  test('without a phone the row is skipped with no_phone', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Bo', sms_consent: true } })
    expect(textsOf(api, job.id).map((t) => ({ status: t.status, skip: t.skip_reason }))).toEqual([{ status: 'skipped', skip: 'no_phone' }])
  })

  test('a status change writes the customer row for the new status', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const count = countRows(api, 'texts')
    await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' })
    expect(textsSince(api, count).map((t) => ({ job: t.job_id, recipient: t.recipient, template: t.template, status: t.status })))
      .toEqual([{ job: job.id, recipient: 'customer', template: 'status_en_route', status: 'queued' }])
  })

  test('assign texts the driver their job link on the unit driver phone, and the customer that a truck is assigned', async () => {
    const job = await makeJob(api, key)
    const unit = makeUnit(api, { driverPhone: '(503) 555-0177' })
    const count = countRows(api, 'texts')
    const res = await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
    expect(res.status).toBe(200)
    const rows = textsSince(api, count)
    expect(rows.map((t) => ({ recipient: t.recipient, template: t.template, to: t.to_phone, status: t.status, unit: t.unit_id })))
      .toEqual([
        { recipient: 'driver', template: 'driver_job_link', to: '+15035550177', status: 'queued', unit: unit.id },
        { recipient: 'customer', template: 'status_dispatched', to: '+15035550142', status: 'queued', unit: null },
      ])
    expect(openLinksIn(api.links, rows[0].body)).toMatch(/http:\/\/towline\.test\/d\/[0-9A-Za-z]{24}$/)
  })

  test('reassigning sends the new driver a link and tells the old one the job was taken off them; job.reassigned names both units', async () => {
    const { job, unit: oldUnit } = await bringTo(api, key, 'en_route')
    const newUnit = makeUnit(api, { driverPhone: '+15035550188' })
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: newUnit.id })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'en_route', unit: { id: newUnit.id, name: newUnit.name } })
    expect(textsSince(api, before.texts).map((t) => ({ template: t.template, to: t.to_phone })).sort((a, b) => a.template.localeCompare(b.template)))
      .toEqual([{ template: 'driver_job_link', to: '+15035550188' }, { template: 'driver_job_removed', to: oldUnit!.driverPhone }])
    const events = await newEvents(api, key, job.id, before.events)
    expect(events.map((e) => ({ type: e.type, detail: { unit: e.detail.unit, previous_unit: e.detail.previous_unit } })))
      .toEqual([{ type: 'job.reassigned', detail: { unit: { id: newUnit.id, name: newUnit.name }, previous_unit: { id: oldUnit!.id, name: oldUnit!.name } } }])
  })

  test('assigning the unit that already holds the job changes nothing', async () => {
    const { job, unit } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit!.id })
    expect(res.status).toBe(200)
    await expectNothingWritten(api, key, before)
  })

  test('assigning a unit of another account (or none) is 422 naming unit_id, and writes nothing', async () => {
    const job = await makeJob(api, key)
    const foreign = makeUnit(api, { accountId: api.account('Far Towing') })
    const before = await snapshot(api, key, job.id)
    for (const unitId of [foreign.id, 'unit_01ZZZZZZZZZZZZZZZZZZZZZZZZ']) {
      const err = expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unitId }), 422, 'validation_failed')
      expect(err.details.fields[0].path).toBe('unit_id')
    }
    await expectNothingWritten(api, key, before)
  })
})

describe('GET /jobs/{id}', () => {
  test('includes the unit ({id, name}) once assigned, and null before', async () => {
    const job = await makeJob(api, key)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.unit).toBeNull()
    const unit = makeUnit(api, { name: 'Flatbed 12' })
    await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.unit).toEqual({ id: unit.id, name: 'Flatbed 12' })
  })

  test('position is null until the unit reports one, then carries it with the speed converted from knots to kph', async () => {
    const { job, unit } = await bringTo(api, key, 'dispatched')
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.position).toBeNull()
    const at = Math.floor(api.clock.now() / 1000) - 30
    const ping = await api.request('GET', `/osmand?id=${unit!.deviceId}&lat=45.5152&lon=-122.6784&timestamp=${at}&speed=10&bearing=270&accuracy=8`)
    expect(ping.status).toBe(200)
    const got = (await call(api, key, 'GET', `/jobs/${job.id}`)).body
    expect(got.position).toEqual({ lat: 45.5152, lng: -122.6784, accuracy_m: 8, heading: 270, speed_kph: 18.5, recorded_at: new Date(at * 1000).toISOString() })
  })

  test('tracking_url is absolute, carries an unguessable token and is stable across reads', async () => {
    const a = await makeJob(api, key)
    const b = await makeJob(api, key)
    expect(a.tracking_url).toMatch(/^http:\/\/towline\.test\/t\/[0-9A-Za-z]{24}$/)
    expect(a.tracking_url).not.toContain(a.id.slice(4))
    expect(b.tracking_url).not.toBe(a.tracking_url)
    const reads = await Promise.all([1, 2].map(() => call(api, key, 'GET', `/jobs/${a.id}`)))
    expect(reads.map((r) => r.body.tracking_url)).toEqual([a.tracking_url, a.tracking_url])
    await call(api, key, 'PATCH', `/jobs/${a.id}`, { urgency: 'low' })
    expect((await call(api, key, 'GET', `/jobs/${a.id}`)).body.tracking_url).toBe(a.tracking_url)
  })

  test('the timeline is oldest first and cursor-paged, each event with a growing sequence', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const all = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(all.map((e: any) => e.type)).toEqual(['job.created', 'job.assigned', 'job.status_changed', 'job.status_changed'])
    expect(all.map((e: any) => e.sequence)).toEqual([1, 2, 3, 4])
    const seen: any[] = []
    let cursor: string | null = null
    do {
      const page: any = (await call(api, key, 'GET', `/jobs/${job.id}/events?limit=3${cursor ? `&cursor=${cursor}` : ''}`)).body
      seen.push(...page.data)
      cursor = page.next_cursor
    } while (cursor)
    expect(seen).toEqual(all)
  })

  test('an unknown id is 404 not_found', async () => {
    const err = expectCallError(await call(api, key, 'GET', '/jobs/job_01ZZZZZZZZZZZZZZZZZZZZZZZZ'), 404, 'not_found')
    expect(err.details.id).toBe('job_01ZZZZZZZZZZZZZZZZZZZZZZZZ')
  })
})

describe('PATCH /jobs/{id}: conditions and reasons', () => {
  test('expected_status that differs from the job status is 409 job_stale with expected_status and current_status, and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const before = await snapshot(api, key, job.id)
    const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene', expected_status: 'dispatched', destination: 'Elsewhere' }), 409, 'job_stale')
    expect(err.details).toMatchObject({ expected_status: 'dispatched', current_status: 'en_route' })
    await expectNothingWritten(api, key, before)
  })

  test('expected_status alone also guards a change of other fields', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { expected_status: 'confirmed', urgency: 'low' }), 409, 'job_stale')
    await expectNothingWritten(api, key, before)
  })

  test('expected_status equal to the job status lets the change through', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', expected_status: 'dispatched' })
    expect({ status: res.status, job: res.body.status }).toEqual({ status: 200, job: 'en_route' })
  })

  const unusable = [['missing', undefined], ['null', null], ['"  ab  " (2 characters after trimming)', '  ab  '], ['501 characters', 'x'.repeat(501)], ['of 3,000 characters', 'x'.repeat(3000)]] as const
  for (const [what, reason] of unusable) {
    test(`cancelling with cancel_reason ${what} is 422 job_reason_required and writes nothing`, async () => {
      const { job } = await bringTo(api, key, 'dispatched')
      const before = await snapshot(api, key, job.id)
      const body = reason === undefined ? { status: 'cancelled' } : { status: 'cancelled', cancel_reason: reason }
      expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, body), 422, 'job_reason_required')
      await expectNothingWritten(api, key, before)
    })
  }

  test('cancelling with a cancel_reason of 500 characters stores it, trimmed, and stamps cancelled_at and closed_at', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    api.clock.advance(60_000)
    const reason = 'r'.repeat(500)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: `  ${reason} ` })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'cancelled', cancel_reason: reason })
    expect(res.body.timestamps).toMatchObject({ cancelled_at: nowIso(api), closed_at: nowIso(api) })
  })

  for (const body of [{ status: 'goa' }, { status: 'goa', cancel_reason: null }]) {
    test(`goa needs no reason: ${JSON.stringify(body)}`, async () => {
      const { job } = await bringTo(api, key, 'on_scene')
      const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, body)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ status: 'goa', cancel_reason: null })
    })
  }

  test('goa with a reason stores it in cancel_reason', async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'goa', cancel_reason: 'Nobody at the pickup after 20 min' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'goa', cancel_reason: 'Nobody at the pickup after 20 min' })
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(events.at(-1)).toMatchObject({ type: 'job.status_changed', from: 'on_scene', to: 'goa', detail: { cancel_reason: 'Nobody at the pickup after 20 min' } })
  })

  test('cancel_reason without status cancelled or goa is 422 validation_failed and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', cancel_reason: REASON }), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['cancel_reason'])
    await expectNothingWritten(api, key, before)
  })

  for (const from of ['completed', 'cancelled', 'goa']) {
    test(`a ${from} job refuses a status change with 409 job_transition_refused (from, to), even without a cancel_reason, and writes nothing`, async () => {
      const { job } = await bringTo(api, key, from)
      const before = await snapshot(api, key, job.id)
      for (const to of ['en_route', 'cancelled', 'confirmed']) {
        if (to === from) continue
        const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: to }), 409, 'job_transition_refused')
        expect({ from: err.details.from, to: err.details.to }).toEqual({ from, to })
      }
      await expectNothingWritten(api, key, before)
    })
  }

  test('an unknown status is 422 validation_failed', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'parked' }), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['status'])
    await expectNothingWritten(api, key, before)
  })
})

describe('PATCH /jobs/{id}: fields', () => {
  test('unknown fields are refused with 422 validation_failed naming the path (top-level and nested), and nothing is written', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const top = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: REASON, priority: 1 }), 422, 'validation_failed')
    expect(top.details.fields.map((f: any) => f.path)).toEqual(['priority'])
    const nested = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { customer: { foo: 'bar' } }), 422, 'validation_failed')
    expect(nested.details.fields.map((f: any) => f.path)).toEqual(['customer.foo'])
    const deeper = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { pickup: { location: 'Here', zone: 4 } }), 422, 'validation_failed')
    expect(deeper.details.fields.map((f: any) => f.path)).toEqual(['pickup.zone'])
    await expectNothingWritten(api, key, before)
  })

  test('status plus a bad field is refused whole before the first write: the status stays, no event, no text', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    api.clock.advance(60_000)
    const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', customer: { phone: 'call me' }, destination: 'Elsewhere' }), 422, 'validation_failed')
    expect(err.details.transition_applied).toBeUndefined()
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['customer.phone'])
    await expectNothingWritten(api, key, before)
  })

  test('status plus other fields is two writes: when the second fails (a race), the error carries transition_applied and the status change is committed', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    api.clock.advance(60_000)
    // Another writer slips in between the two writes: a writer that refuses the field change stands for it.
    const ctx = api.contextOfKey(key)
    const racing = { ...ctx, jobWriters: [...ctx.jobWriters, (_tx: unknown, c: { events: { type: string }[] }) => {
      if (c.events.some((e) => e.type === 'job.updated')) throw new AppError('job_stale', 'The job changed while this request was being handled.')
    }] }
    let err: AppError | undefined
    try { updateJob(racing, job.id, { status: 'en_route', destination: 'Elsewhere' }) } catch (e) { err = e as AppError }
    expect(err?.errorCode).toBe('job_stale')
    expect(err?.details.transition_applied).toEqual({ from: 'dispatched', to: 'en_route' })
    const after = (await call(api, key, 'GET', `/jobs/${job.id}`)).body
    expect(after).toMatchObject({ status: 'en_route', destination: before.job.destination })
    expect(after.timestamps.en_route_at).toBe(nowIso(api))
    const events = await newEvents(api, key, job.id, before.events)
    expect(events.map((e) => [e.type, e.from, e.to])).toEqual([['job.status_changed', 'dispatched', 'en_route']])
    expect(textsSince(api, before.texts).map((t) => t.template)).toEqual(['status_en_route'])
  })

  test('status plus other fields that all succeed answers 200 with both applied, the status change first on the timeline', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', destination: 'Elsewhere' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'en_route', destination: 'Elsewhere' })
    const events = await newEvents(api, key, job.id, before.events)
    expect(events.map((e) => e.type)).toEqual(['job.status_changed', 'job.updated'])
    expect(events[1].sequence).toBeGreaterThan(events[0].sequence)
  })

  test('a status change with a new ETA texts the new ETA: the ETA rides with the move, told after it', async () => {
    const { job } = await bringTo(api, key, 'dispatched', { job: { customer: { name: 'Ann', phone: '+15035550142', sms_consent: true } } })
    const before = await snapshot(api, key, job.id)
    const eta = new Date(api.clock.now() + 25 * 60_000).toISOString()
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', eta_at: eta, destination: 'Elsewhere' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'en_route', eta_at: eta, destination: 'Elsewhere' })
    const events = await newEvents(api, key, job.id, before.events)
    expect(events.map((e) => e.type)).toEqual(['job.status_changed', 'job.eta_updated', 'job.updated'])
    const texts = textsSince(api, before.texts)
    expect(texts.map((t) => t.template)).toEqual(['status_en_route'])
    expect(texts[0].body).toContain('arriving in about 25 min')
  })

  test('the texted ETA reads in hours from an hour on, and is left out when it is a day or more away (a wrong year is not a wait)', async () => {
    const texted = async (aheadMs: number) => {
      const { job } = await bringTo(api, key, 'dispatched', { job: { customer: { name: 'Ann', phone: '+15035550142', sms_consent: true } } })
      const before = await snapshot(api, key, job.id)
      expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', eta_at: new Date(api.clock.now() + aheadMs).toISOString() })).status).toBe(200)
      const texts = textsSince(api, before.texts)
      expect(texts.map((t) => t.template)).toEqual(['status_en_route'])
      return texts[0].body as string
    }
    expect(await texted(125 * 60_000)).toContain(', arriving in about 2 h 5 min')
    expect(await texted(180 * 60_000)).toContain(', arriving in about 3 h.')
    const farOff = await texted(4 * 365 * 86_400_000)
    expect(farOff).not.toContain('arriving')
    expect(farOff).toContain("on the way. Track: http")
  })

  test('eta_at emits job.eta_updated with the new and previous time', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { eta_at: '2026-11-21T09:45:00Z' })
    expect(res.status).toBe(200)
    expect(res.body.eta_at).toBe('2026-11-21T09:45:00.000Z')
    const events = await newEvents(api, key, job.id, before.events)
    expect(events).toEqual([expect.objectContaining({ type: 'job.eta_updated', detail: expect.objectContaining({ eta_at: '2026-11-21T09:45:00.000Z', previous_eta_at: null }) })])
  })

  test('a malformed eta_at is 422 validation_failed naming eta_at, and writes nothing', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { eta_at: 'soon' }), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['eta_at'])
    await expectNothingWritten(api, key, before)
  })

  test('quote_cents emits job.quote_updated', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { quote_cents: 12500 })
    expect(res.body.quote_cents).toBe(12500)
    const events = await newEvents(api, key, job.id, before.events)
    expect(events).toEqual([expect.objectContaining({ type: 'job.quote_updated', detail: expect.objectContaining({ quote_cents: 12500 }) })])
  })

  test('final_price_cents and payment_method emit one job.payment_updated carrying both, without invoice_id', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { final_price_cents: 18900, payment_method: 'card' })
    expect(res.body).toMatchObject({ final_price_cents: 18900, payment_method: 'card' })
    const events = await newEvents(api, key, job.id, before.events)
    expect(events.map((e) => e.type)).toEqual(['job.payment_updated'])
    expect(events[0].detail).toMatchObject({ final_price_cents: 18900, payment_method: 'card' })
    expect(events[0].detail).not.toHaveProperty('invoice_id')
    const more = await call(api, key, 'PATCH', `/jobs/${job.id}`, { payment_method: 'cash' })
    expect(more.status).toBe(200)
    const last = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data.at(-1)
    expect(last).toMatchObject({ type: 'job.payment_updated', detail: { final_price_cents: 18900, payment_method: 'cash' } })
  })

  test('clearing the final price or the payment method: job.payment_updated carries the job as it now is (null), not what it was', async () => {
    const job = await makeJob(api, key)
    await call(api, key, 'PATCH', `/jobs/${job.id}`, { final_price_cents: 5000, payment_method: 'cash' })
    const lastDetail = async () => (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data.at(-1).detail
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { final_price_cents: null })).body).toMatchObject({ final_price_cents: null, payment_method: 'cash' })
    expect(await lastDetail()).toMatchObject({ final_price_cents: null, payment_method: 'cash' })
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { payment_method: null })).body).toMatchObject({ final_price_cents: null, payment_method: null })
    expect(await lastDetail()).toMatchObject({ final_price_cents: null, payment_method: null })
  })

  test('other fields emit job.updated whose detail.fields names them', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, {
      urgency: 'low', destination: 'Home', customer: { phone: '503.555.0150' }, vehicle: { color: 'blue' }, pickup: { location: 'Exit 300' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ urgency: 'low', destination: 'Home', customer: { name: 'Ann Lee', phone: '+15035550150' }, vehicle: { make: 'Honda', color: 'blue' }, pickup: { location: 'Exit 300' } })
    const events = await newEvents(api, key, job.id, before.events)
    expect(events.map((e) => e.type)).toEqual(['job.updated'])
    expect([...events[0].detail.fields].sort()).toEqual(['customer', 'destination', 'pickup', 'urgency', 'vehicle'])
    expect(textsSince(api, before.texts)).toEqual([])
  })

  test('a PATCH that changes nothing writes nothing', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    api.clock.advance(60_000)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { urgency: 'urgent', status: 'confirmed' })
    expect(res.status).toBe(200)
    await expectNothingWritten(api, key, before)
  })
})

describe('notes', () => {
  test('POST /jobs/{id}/notes answers 201 with the note and writes job.note_added', async () => {
    const job = await makeJob(api, key)
    const before = await snapshot(api, key, job.id)
    const res = await call(api, key, 'POST', `/jobs/${job.id}/notes`, { text: '  Gate code 4411  ', customer_visible: true })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ object: 'note', text: 'Gate code 4411', customer_visible: true, created_at: nowIso(api) })
    expect(res.body.id).toStartWith('note_')
    const events = await newEvents(api, key, job.id, before.events)
    expect(events).toEqual([expect.objectContaining({ type: 'job.note_added', detail: expect.objectContaining({ note_id: res.body.id, text: 'Gate code 4411', customer_visible: true }) })])
  })

  test('customer_visible defaults to false', async () => {
    const job = await makeJob(api, key)
    const res = await call(api, key, 'POST', `/jobs/${job.id}/notes`, { text: 'Internal only' })
    expect(res.body.customer_visible).toBe(false)
  })

  for (const [what, text] of [['empty', ''], ['blank', '   ']]) {
    test(`an ${what} note is 422 validation_failed naming text, and writes nothing`, async () => {
      const job = await makeJob(api, key)
      const before = await snapshot(api, key, job.id)
      const err = expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/notes`, { text }), 422, 'validation_failed')
      expect(err.details.fields.map((f: any) => f.path)).toEqual(['text'])
      await expectNothingWritten(api, key, before)
    })
  }
})

describe('isolation', () => {
  test("another account's job answers 404 not_found to GET, PATCH, assign, unassign, notes, reopen and events, and is not changed", async () => {
    const otherAccount = api.account('Rival Towing')
    const otherKey = api.key(['jobs:read', 'jobs:write'], { accountId: otherAccount })
    const { job } = await bringTo(api, otherKey, 'completed', { accountId: otherAccount })
    const before = await snapshot(api, otherKey, job.id)
    const unit = makeUnit(api)
    const attempts: [string, string, unknown?][] = [
      ['GET', `/jobs/${job.id}`], ['PATCH', `/jobs/${job.id}`, { urgency: 'low' }], ['POST', `/jobs/${job.id}/assign`, { unit_id: unit.id }],
      ['DELETE', `/jobs/${job.id}/assign`], ['POST', `/jobs/${job.id}/notes`, { text: 'hello' }], ['POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' }],
      ['GET', `/jobs/${job.id}/events`],
    ]
    for (const [method, path, body] of attempts) {
      const res = await call(api, key, method, path, body)
      expect({ op: `${method} ${path}`, status: res.status, code: res.body.error?.code }).toEqual({ op: `${method} ${path}`, status: 404, code: 'not_found' })
      expect(res.body.error.details.database_message).toBe(res.body.error.message)
    }
    // It is the newest job of the installation, so it would head the first page if it leaked.
    const list = (await call(api, key, 'GET', '/jobs?limit=100')).body
    expect(list.data.length).toBeGreaterThan(0)
    expect(list.data.map((j: any) => j.id)).not.toContain(job.id)
    await expectNothingWritten(api, otherKey, before)
  })

  test('a site-limited key sees only its sites: other sites\' jobs are missing from GET /jobs and answer 404', async () => {
    const yard = api.account('Two Yards Towing')
    const mainSite = (api.db.$client.query('SELECT id FROM sites WHERE account_id = ?').get(yard) as { id: string }).id
    const northSite = newId('site', api.clock.now())
    api.db.$client.query('INSERT INTO sites (id, account_id, name, created_at) VALUES (?, ?, ?, ?)').run(northSite, yard, 'North yard', api.clock.now())
    const ownerKey = api.key(['jobs:read', 'jobs:write'], { accountId: yard })
    const northKey = api.key(['jobs:read', 'jobs:write'], { accountId: yard, sites: [northSite] })
    const atMain = await makeJob(api, ownerKey)
    const atNorth = await makeJob(api, ownerKey, { site_id: northSite })
    expect({ main: atMain.site_id, north: atNorth.site_id }).toEqual({ main: mainSite, north: northSite })
    const byNorthKey = await makeJob(api, northKey)
    expect(byNorthKey.site_id).toBe(northSite)

    expect((await call(api, ownerKey, 'GET', '/jobs')).body.data.map((j: any) => j.id).sort()).toEqual([atMain.id, atNorth.id, byNorthKey.id].sort())
    expect((await call(api, northKey, 'GET', '/jobs')).body.data.map((j: any) => j.id).sort()).toEqual([atNorth.id, byNorthKey.id].sort())
    expect((await call(api, northKey, 'GET', `/jobs/${atNorth.id}`)).status).toBe(200)
    const before = await snapshot(api, ownerKey, atMain.id)
    for (const [method, path, body] of [['GET', `/jobs/${atMain.id}`], ['PATCH', `/jobs/${atMain.id}`, { urgency: 'low' }], ['POST', `/jobs/${atMain.id}/notes`, { text: 'hi' }], ['GET', `/jobs/${atMain.id}/events`]] as [string, string, unknown?][]) {
      const res = await call(api, northKey, method, path, body)
      expect({ op: `${method} ${path}`, status: res.status, code: res.body.error?.code }).toEqual({ op: `${method} ${path}`, status: 404, code: 'not_found' })
    }
    await expectNothingWritten(api, ownerKey, before)
    const err = expectCallError(await call(api, northKey, 'POST', '/jobs', { ...NEW_JOB, site_id: mainSite }), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['site_id'])
  })
})

describe('archived jobs', () => {
  test('refuse PATCH, assign, unassign, notes and reopen with 409 invalid_state and write nothing', async () => {
    const running = await bringTo(api, key, 'en_route')
    const done = await bringTo(api, key, 'completed')
    for (const { job } of [running, done]) archive(api, job.id)
    const unit = makeUnit(api)
    for (const { job } of [running, done]) {
      const before = await snapshot(api, key, job.id)
      expect(before.job.archived).toBe(true)
      const writes: [string, string, unknown?][] = [
        ['PATCH', `/jobs/${job.id}`, { status: 'on_scene' }], ['PATCH', `/jobs/${job.id}`, { urgency: 'low' }],
        ['POST', `/jobs/${job.id}/assign`, { unit_id: unit.id }], ['DELETE', `/jobs/${job.id}/assign`],
        ['POST', `/jobs/${job.id}/notes`, { text: 'hello' }], ['POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' }],
      ]
      for (const [method, path, body] of writes) {
        const res = await call(api, key, method, path, body)
        expect({ job: job.status, op: `${method} ${path}`, status: res.status, code: res.body.error?.code }).toEqual({ job: job.status, op: `${method} ${path}`, status: 409, code: 'invalid_state' })
        expect(res.body.error.details.database_message).toBe(res.body.error.message)
      }
      await expectNothingWritten(api, key, before)
    }
  })

  test('can still be read: GET /jobs/{id}, its timeline (ending with job.archived) and GET /jobs', async () => {
    const { job } = await bringTo(api, key, 'dispatched', { job: { external_ref: 'ARCH-READ' } })
    archive(api, job.id)
    const got = await call(api, key, 'GET', `/jobs/${job.id}`)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({ id: job.id, status: 'dispatched', archived: true })
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(events.at(-1).type).toBe('job.archived')
    expect((await call(api, key, 'GET', '/jobs?external_ref=ARCH-READ')).body.data.map((j: any) => j.id)).toEqual([job.id])
  })
})

describe('rate limits', () => {
  test('a write over the per-key limit is 429 rate_limited with Retry-After, and writes nothing', async () => {
    const limited = startTestApi({ TOWLINE_RATE_LIMIT_WRITES: '2' })
    try {
      const k = limited.key(['jobs:read', 'jobs:write'])
      const job = await makeJob(limited, k)
      expect((await call(limited, k, 'PATCH', `/jobs/${job.id}`, { urgency: 'low' })).status).toBe(200)
      const before = await snapshot(limited, k, job.id)
      const res = await call(limited, k, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: REASON })
      const err = expectCallError(res, 429, 'rate_limited')
      expect(res.headers.get('retry-after')).toBe('30')
      expect(err.details.retry_after_seconds).toBe(30)
      expectCallError(await call(limited, k, 'POST', '/jobs', NEW_JOB), 429, 'rate_limited')
      await expectNothingWritten(limited, k, before)
      limited.clock.advance(30_000)
      expect((await call(limited, k, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: REASON })).status).toBe(200)
    } finally {
      limited.close()
    }
  })
})

describe('GET /units and GET /services', () => {
  test('GET /units lists the roster with driver, status and last position', async () => {
    const roster = startTestApi()
    try {
      const k = roster.key(['jobs:read', 'jobs:write', 'roster:read'])
      const idle = makeUnit(roster, { name: 'A idle', driverPhone: '+15035550101' })
      const busy = makeUnit(roster, { name: 'B busy', driverPhone: '+15035550102' })
      const job = await makeJob(roster, k)
      await call(roster, k, 'POST', `/jobs/${job.id}/assign`, { unit_id: busy.id })
      await roster.request('GET', `/osmand?id=${idle.deviceId}&lat=45.5&lon=-122.6&timestamp=${Math.floor(roster.clock.now() / 1000)}&speed=0&bearing=90&accuracy=5`)
      const res = await call(roster, k, 'GET', '/units')
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        object: 'list', has_more: false, next_cursor: null,
        data: [
          { object: 'unit', id: idle.id, name: 'A idle', driver: { name: idle.driverName, phone: '+15035550101' }, status: 'available', site_ids: null, position: { lat: 45.5, lng: -122.6, accuracy_m: 5, heading: 90, speed_kph: 0, recorded_at: nowIso(roster) } },
          { object: 'unit', id: busy.id, name: 'B busy', driver: { name: busy.driverName, phone: '+15035550102' }, status: 'busy', site_ids: null, position: null },
        ],
      })
      const page = (await call(roster, k, 'GET', '/units?limit=1')).body
      expect({ ids: page.data.map((u: any) => u.id), has_more: page.has_more }).toEqual({ ids: [idle.id], has_more: true })
      expect((await call(roster, k, 'GET', `/units?limit=1&cursor=${page.next_cursor}`)).body.data.map((u: any) => u.id)).toEqual([busy.id])
    } finally {
      roster.close()
    }
  })

  test('GET /services lists active services with their rate cards', async () => {
    const flatbed = addService(api.db, api.clock, { accountId: api.accountId, name: 'Flatbed tow', serviceType: 'flatbed', rates: [{ kind: 'hook', amount_cents: 9500 }, { kind: 'per_mile', amount_cents: 450 }] })
    const res = await call(api, key, 'GET', '/services')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      object: 'list', has_more: false, next_cursor: null,
      data: [{ object: 'service', id: flatbed.id, name: 'Flatbed tow', service_type: 'flatbed', rates: [{ kind: 'hook', amount_cents: 9500, unit: 'job' }, { kind: 'per_mile', amount_cents: 450, unit: 'mile' }] }],
    })
  })
})

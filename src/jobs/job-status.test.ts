/**
 * The whole transition table, walked through HTTP: every legal move of MOVES (by the route that
 * asks for it) and every (from, to) pair that PATCH must refuse. Each job is brought to its
 * starting status through the API only.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, expectCallError, expectNothingWritten, makeUnit, newEvents, NO_LIMITS, nowIso, REASON, snapshot, textsSince } from '../../test/jobs-helpers'
import { FINISHED, MOVES, STATUSES, type JobStatus, type Move } from './job-status'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key(['jobs:read', 'jobs:write'])
})
afterAll(() => api.close())

const BOARD_ORDER: JobStatus[] = ['pending', 'confirmed', 'dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed']
const finished = (s: JobStatus) => FINISHED.includes(s)
/** The contract's rule for the board and the API, written independently of job-status.ts. */
function contractAllowsPatch(from: JobStatus, to: JobStatus): boolean {
  if (from === to || finished(from) || to === 'pending') return false
  if (to === 'cancelled' || to === 'goa') return true
  return BOARD_ORDER.indexOf(to) > BOARD_ORDER.indexOf(from)
}
const NEEDS_A_UNIT: JobStatus[] = ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed']

const patchMoves = MOVES.filter((m) => m.via === 'patch')
const pairs = STATUSES.flatMap((from) => STATUSES.filter((to) => to !== from).map((to) => ({ from, to })))
const legalPatch = pairs.map((p) => ({ ...p, move: patchMoves.find((m) => m.from === p.from && m.to === p.to) })).filter((p): p is { from: JobStatus; to: JobStatus; move: Move } => !!p.move)
const illegalPatch = pairs.filter((p) => !patchMoves.some((m) => m.from === p.from && m.to === p.to))

describe('the transition table (job-status.ts) is the contract\'s', () => {
  test('PATCH moves are exactly: forward along the board order, cancelled or goa from any unfinished status, nothing out of a finished one', () => {
    const fromTable = patchMoves.map((m) => `${m.from}>${m.to}`).sort()
    const fromContract = pairs.filter((p) => contractAllowsPatch(p.from, p.to)).map((p) => `${p.from}>${p.to}`).sort()
    expect(fromTable).toEqual(fromContract)
    expect(legalPatch.length + illegalPatch.length).toBe(STATUSES.length * (STATUSES.length - 1))
  })

  test('dispatched and every later status need a unit; cancelled and goa do not', () => {
    for (const m of patchMoves) expect({ to: m.to, needsUnit: m.needsUnit }).toEqual({ to: m.to, needsUnit: NEEDS_A_UNIT.includes(m.to) })
  })

  test('the driver page moves one step at a time along the road, plus goa from on_scene, always with a unit', () => {
    const driver = MOVES.filter((m) => m.via === 'driver').map((m) => `${m.from}>${m.to}:${m.needsUnit}`).sort()
    expect(driver).toEqual([
      'at_destination>completed:true', 'dispatched>en_route:true', 'en_route>on_scene:true', 'on_scene>goa:true', 'on_scene>towing:true', 'towing>at_destination:true',
    ])
  })

  test('assign dispatches pending and confirmed jobs; unassign takes every unit-holding unfinished status back to confirmed; reopen is the only way out of a finished one', () => {
    const of = (via: string) => MOVES.filter((m) => m.via === via).map((m) => `${m.from}>${m.to}`).sort()
    expect(of('assign')).toEqual(['confirmed>dispatched', 'pending>dispatched'])
    expect(of('unassign')).toEqual(['at_destination>confirmed', 'dispatched>confirmed', 'en_route>confirmed', 'on_scene>confirmed', 'towing>confirmed'])
    expect(of('reopen')).toEqual(['cancelled>confirmed', 'completed>confirmed', 'goa>confirmed'])
    expect(MOVES.filter((m) => finished(m.from)).every((m) => m.via === 'reopen')).toBe(true)
  })
})

/** Checks what a legal move wrote: milestones (write-once), updated_at, the status change on the timeline, a customer text. */
async function expectMoved(before: Awaited<ReturnType<typeof snapshot>>, res: { status: number; body: any }, move: { from: JobStatus; to: JobStatus }, now: string) {
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 200, error: undefined })
  const job = res.body
  expect(job.status).toBe(move.to)
  expect(job.updated_at).toBe(now)
  const expected = { ...before.job.timestamps }
  expected[`${move.to}_at`] = before.job.timestamps[`${move.to}_at`] ?? now
  if (finished(move.to)) expected.closed_at = before.job.timestamps.closed_at ?? now
  if (move.to === 'confirmed' && finished(move.from)) expected.reopened_at = now
  expect(job.timestamps).toEqual(expected)
  expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body).toEqual(job)

  const events = await newEvents(api, key, job.id, before.events)
  const changes = events.filter((e) => e.type === 'job.status_changed')
  expect(changes.map((e) => ({ from: e.from, to: e.to, actor: e.actor }))).toEqual([{ from: move.from, to: move.to, actor: 'system' }])
  expect(events.every((e) => e.created_at === now)).toBe(true)
  const seqs = [...before.events, ...events].map((e) => e.sequence)
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b))

  const texts = textsSince(api, before.texts)
  expect(texts.every((t) => t.job_id === job.id)).toBe(true)
  const customer = texts.filter((t) => t.recipient === 'customer')
  expect(customer.map((t) => ({ template: t.template, to: t.to_phone, status: t.status }))).toEqual([{ template: `status_${move.to}`, to: '+15035550142', status: 'queued' }])
  return { job, events, texts }
}

describe('every legal PATCH move answers 200, stamps its milestone once, writes the status change and texts the customer', () => {
  for (const { from, to, move } of legalPatch) {
    if (from === 'pending' && move.needsUnit) {
      // A pending job cannot hold a unit through the API (assigning dispatches it), so the
      // table's pending -> `to` move is always refused for want of a unit.
      test(`${from} -> ${to} by PATCH is refused with unit_required, since a pending job never holds a unit`, async () => {
        const { job } = await bringTo(api, key, from)
        const before = await snapshot(api, key, job.id)
        api.clock.advance(60_000)
        const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: to }), 409, 'job_transition_refused')
        expect(err.details).toMatchObject({ from, to, reason: 'unit_required' })
        await expectNothingWritten(api, key, before)
      })
      continue
    }
    test(`${from} -> ${to} by PATCH${move.needsUnit ? ' (with a unit)' : ''} answers 200 ${to}`, async () => {
      const { job } = await bringTo(api, key, from, { withUnit: move.needsUnit })
      const before = await snapshot(api, key, job.id)
      api.clock.advance(60_000)
      const body = to === 'cancelled' ? { status: to, cancel_reason: REASON } : { status: to }
      const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, body)
      await expectMoved(before, res, { from, to }, nowIso(api))
      if (to === 'cancelled') expect(res.body.cancel_reason).toBe(REASON)
    })
  }

  test('confirmed -> en_route without a unit is refused with unit_required and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'confirmed')
    const before = await snapshot(api, key, job.id)
    const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' }), 409, 'job_transition_refused')
    expect(err.details).toMatchObject({ from: 'confirmed', to: 'en_route', reason: 'unit_required' })
    await expectNothingWritten(api, key, before)
  })

  test('a milestone reached again after a reopen keeps its first value (dispatched_at is written once)', async () => {
    const { job } = await bringTo(api, key, 'confirmed', { withUnit: true })
    const first = job.timestamps.dispatched_at
    expect(first).toBeTruthy()
    api.clock.advance(3_600_000)
    const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'dispatched' })
    expect(res.status).toBe(200)
    expect(res.body.timestamps.dispatched_at).toBe(first)
  })
})

describe('every (from, to) pair not in the table is refused by PATCH with 409 job_transition_refused and nothing written', () => {
  for (const { from, to } of illegalPatch) {
    test(`${from} -> ${to} by PATCH is refused`, async () => {
      // A unit is held wherever the API allows it, so the refusal is the table's, not unit_required.
      const { job } = await bringTo(api, key, from, { withUnit: from === 'confirmed' || NEEDS_A_UNIT.includes(from) })
      const before = await snapshot(api, key, job.id)
      api.clock.advance(60_000)
      const body = to === 'cancelled' ? { status: to, cancel_reason: REASON } : { status: to }
      const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, body), 409, 'job_transition_refused')
      expect({ from: err.details.from, to: err.details.to }).toEqual({ from, to })
      expect(err.details.reason).toBe(finished(from) ? 'job_finished' : 'backward')
      await expectNothingWritten(api, key, before)
    })
  }
})

describe('assign, unassign and reopen moves', () => {
  for (const from of ['pending', 'confirmed'] as JobStatus[]) {
    test(`${from} -> dispatched by POST /assign answers 200, writes job.assigned and the status change, texts the driver and the customer`, async () => {
      const { job } = await bringTo(api, key, from)
      const before = await snapshot(api, key, job.id)
      api.clock.advance(60_000)
      const unit = makeUnit(api, { driverPhone: '+15035550199' })
      const res = await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
      const { events, texts } = await expectMoved(before, res, { from, to: 'dispatched' }, nowIso(api))
      expect(res.body.unit).toEqual({ id: unit.id, name: unit.name })
      expect(events.map((e) => e.type)).toEqual(['job.assigned', 'job.status_changed'])
      expect(texts.filter((t) => t.recipient === 'driver').map((t) => ({ template: t.template, to: t.to_phone }))).toEqual([{ template: 'driver_job_link', to: '+15035550199' }])
    })
  }

  test('confirmed, still holding its unit after a reopen -> dispatched by POST /assign of that same unit answers 200 and sends the driver a fresh link', async () => {
    const { job, unit } = await bringTo(api, key, 'confirmed', { withUnit: true })
    expect(job.unit).toEqual({ id: unit!.id, name: unit!.name })
    const before = await snapshot(api, key, job.id)
    api.clock.advance(60_000)
    const res = await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit!.id })
    const { events, texts } = await expectMoved(before, res, { from: 'confirmed', to: 'dispatched' }, nowIso(api))
    expect(events.map((e) => e.type)).toEqual(['job.assigned', 'job.status_changed'])
    expect(texts.filter((t) => t.recipient === 'driver').map((t) => ({ template: t.template, to: t.to_phone }))).toEqual([{ template: 'driver_job_link', to: unit!.driverPhone }])
  })

  test('confirmed, still holding its unit after a reopen -> dispatched by POST /assign of another unit reassigns it', async () => {
    const { job, unit } = await bringTo(api, key, 'confirmed', { withUnit: true })
    const other = makeUnit(api)
    const before = await snapshot(api, key, job.id)
    api.clock.advance(60_000)
    const res = await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: other.id })
    const { events, texts } = await expectMoved(before, res, { from: 'confirmed', to: 'dispatched' }, nowIso(api))
    expect(events.map((e) => e.type)).toEqual(['job.reassigned', 'job.status_changed'])
    expect(texts.filter((t) => t.recipient === 'driver').map((t) => `${t.template} ${t.to_phone}`).sort()).toEqual([`driver_job_link ${other.driverPhone}`, `driver_job_removed ${unit!.driverPhone}`])
  })

  for (const from of ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination'] as JobStatus[]) {
    test(`${from} -> confirmed by DELETE /assign answers 200, writes job.unassigned and the status change, keeps confirmed_at`, async () => {
      const { job, unit } = await bringTo(api, key, from)
      const before = await snapshot(api, key, job.id)
      api.clock.advance(60_000)
      const res = await call(api, key, 'DELETE', `/jobs/${job.id}/assign`)
      const { events, texts } = await expectMoved(before, res, { from, to: 'confirmed' }, nowIso(api))
      expect(res.body.unit).toBeNull()
      expect(res.body.timestamps.confirmed_at).toBe(before.job.timestamps.confirmed_at)
      expect(events.map((e) => e.type)).toEqual(['job.unassigned', 'job.status_changed'])
      expect(texts.filter((t) => t.recipient === 'driver').map((t) => ({ template: t.template, to: t.to_phone }))).toEqual([{ template: 'driver_job_removed', to: unit!.driverPhone }])
    })
  }

  for (const from of FINISHED) {
    test(`${from} -> confirmed by POST /reopen answers 200, stamps reopened_at and keeps the other milestones`, async () => {
      const { job } = await bringTo(api, key, from)
      const before = await snapshot(api, key, job.id)
      api.clock.advance(60_000)
      const res = await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' })
      const { events } = await expectMoved(before, res, { from, to: 'confirmed' }, nowIso(api))
      expect(events.map((e) => e.type)).toEqual(['job.reopened', 'job.status_changed'])
    })
  }

  for (const from of STATUSES.filter((s) => !finished(s))) {
    test(`${from}: POST /reopen is refused with 409 job_transition_refused (${from} to confirmed) and writes nothing`, async () => {
      const { job } = await bringTo(api, key, from)
      const before = await snapshot(api, key, job.id)
      const err = expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' }), 409, 'job_transition_refused')
      expect({ from: err.details.from, to: err.details.to }).toEqual({ from, to: 'confirmed' })
      await expectNothingWritten(api, key, before)
    })
  }

  for (const from of FINISHED) {
    test(`${from}: POST /assign is refused with 409 job_transition_refused (${from} to dispatched) and writes nothing`, async () => {
      const { job } = await bringTo(api, key, from)
      const before = await snapshot(api, key, job.id)
      const err = expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: makeUnit(api).id }), 409, 'job_transition_refused')
      expect({ from: err.details.from, to: err.details.to }).toEqual({ from, to: 'dispatched' })
      await expectNothingWritten(api, key, before)
    })
  }

  for (const from of ['completed', 'goa'] as JobStatus[]) {
    test(`${from} while holding a unit: POST /assign of that same unit is refused with 409 too (not a no-op) and writes nothing`, async () => {
      const { job } = await bringTo(api, key, from, { withUnit: true })
      expect(job.unit).not.toBeNull()
      const before = await snapshot(api, key, job.id)
      const err = expectCallError(await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: job.unit.id }), 409, 'job_transition_refused')
      expect({ from: err.details.from, to: err.details.to, reason: err.details.reason }).toEqual({ from, to: 'dispatched', reason: 'job_finished' })
      await expectNothingWritten(api, key, before)
    })
  }

  for (const from of ['completed', 'cancelled'] as JobStatus[]) {
    test(`${from} while holding a unit: DELETE /assign is refused with 409 job_transition_refused (${from} to confirmed) and writes nothing`, async () => {
      const { job } = await bringTo(api, key, from, { withUnit: true })
      expect(job.unit).not.toBeNull()
      const before = await snapshot(api, key, job.id)
      const err = expectCallError(await call(api, key, 'DELETE', `/jobs/${job.id}/assign`), 409, 'job_transition_refused')
      expect({ from: err.details.from, to: err.details.to }).toEqual({ from, to: 'confirmed' })
      await expectNothingWritten(api, key, before)
    })
  }
})

describe('correcting the reason of a job that ended with one', () => {
  for (const from of ['cancelled', 'goa'] as JobStatus[]) {
    test(`${from}: PATCH with cancel_reason alone corrects it (job.updated, fields [cancel_reason]), as with the status repeated`, async () => {
      const { job } = await bringTo(api, key, from)
      const before = (await call(api, key, 'GET', `/jobs/${job.id}/events?limit=100`)).body.data
      const res = await call(api, key, 'PATCH', `/jobs/${job.id}`, { cancel_reason: '  Customer found another tow  ' })
      expect(res.status).toBe(200)
      expect(res.body.status).toBe(from)
      expect(res.body.cancel_reason).toBe('Customer found another tow')
      const events = await newEvents(api, key, job.id, before)
      expect(events.map((e) => [e.type, e.detail.fields])).toEqual([['job.updated', ['cancel_reason']]])
      const again = await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: from, cancel_reason: 'Wrong address given' })
      expect([again.status, again.body.cancel_reason]).toEqual([200, 'Wrong address given'])
    })
  }

  for (const from of ['confirmed', 'completed'] as JobStatus[]) {
    test(`${from}: PATCH with cancel_reason alone is 422 on cancel_reason, saying when it can be sent, and writes nothing`, async () => {
      const { job } = await bringTo(api, key, from)
      const before = await snapshot(api, key, job.id)
      const err = expectCallError(await call(api, key, 'PATCH', `/jobs/${job.id}`, { cancel_reason: 'Customer found another tow' }), 422, 'validation_failed')
      expect(err.details.errors ?? err.details).toEqual(expect.anything())
      expect(JSON.stringify(err)).toContain('alone to correct the reason of a job that is already cancelled or goa')
      await expectNothingWritten(api, key, before)
    })
  }
})

/**
 * The post-commit bus: every committed job event, once, in commit order, from any earlier
 * position (a restart, a dropped stream), including other processes' writes once it is told.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, makeJob, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { openDatabase, closeDatabase } from '../db/client'
import { createContextFactory } from '../operations/context-factory'
import { startBackgroundWork } from '../background'
import { readConfig } from '../config'
import { createLogger } from '../platform/log'
import { createJob } from './create-job'
import { JobEventBus, type BusEvent } from './job-event-bus'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterAll(() => api.close())

/** Every event on the timelines, in position order, as the database holds them. */
const allEvents = () => api.db.$client.query('SELECT id, position FROM job_events ORDER BY position').all() as { id: string; position: number }[]
/** Waits (without sleeping through time) until `seen` holds `n` events. */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 500 && !cond(); i++) await Bun.sleep(5)
  if (!cond()) throw new Error(`timed out waiting for ${what}`)
}

describe('the post-commit bus', () => {
  test('a listener sees every committed event once, in commit order; refused writes tell it nothing', async () => {
    const seen: BusEvent[] = []
    const stop = api.bus.subscribe(api.bus.position, (e) => seen.push(e))
    const job = await makeJob(api, key)
    const unit = makeUnit(api)
    await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
    await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route', destination: 'Elsewhere' })
    // Refused: nothing committed, nothing told.
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'pending' })).status).toBe(409)
    await call(api, key, 'POST', `/jobs/${job.id}/notes`, { text: 'gate code 1234' })
    await until(() => seen.length === 6, 'six events')
    stop()
    const timeline = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data
    expect(seen.map((e) => e.event.id)).toEqual(timeline.map((e: any) => e.id))
    expect(seen.map((e) => e.event.type)).toEqual(['job.created', 'job.assigned', 'job.status_changed', 'job.status_changed', 'job.updated', 'job.note_added'])
    const positions = seen.map((e) => e.position)
    expect(positions).toEqual([...positions].sort((a, b) => a - b))
    expect(new Set(positions).size).toBe(positions.length)
    expect(seen.every((e) => e.siteId === job.site_id && e.event.accountId === api.accountId)).toBe(true)
  })

  test('a listener that starts from an earlier position gets what it missed first, then what comes, each once', async () => {
    const from = api.bus.position
    await makeJob(api, key)
    await bringTo(api, key, 'en_route')
    const missed = allEvents().filter((e) => e.position > from)
    const seen: BusEvent[] = []
    const stop = api.bus.subscribe(from, (e) => seen.push(e))
    expect(seen.map((e) => e.event.id)).toEqual(missed.map((e) => e.id))
    const later = await makeJob(api, key)
    await until(() => seen.length === missed.length + 1, 'the later event')
    stop()
    expect(seen.at(-1)!.event.jobId).toBe(later.id)
    expect(new Set(seen.map((e) => e.position)).size).toBe(seen.length)
  })

  test('across a restart a listener resumes from the last position it saw, missing nothing and repeating nothing', async () => {
    const first: BusEvent[] = []
    const stop = api.bus.subscribe(0, (e) => first.push(e))
    expect(first.map((e) => e.event.id)).toEqual(allEvents().map((e) => e.id))
    stop()
    const last = first.at(-1)!.position
    // While "down": more writes.
    await bringTo(api, key, 'dispatched')
    // A new bus on the same database stands for the restarted process.
    const restarted = new JobEventBus(api.db)
    const resumed: BusEvent[] = []
    restarted.subscribe(last, (e) => resumed.push(e))
    const expected = allEvents().filter((e) => e.position > last)
    expect(expected.length).toBeGreaterThan(0)
    expect(resumed.map((e) => e.event.id)).toEqual(expected.map((e) => e.id))
    expect(first.map((e) => e.event.id).filter((id) => resumed.some((r) => r.event.id === id))).toEqual([])
  })

  test('another process\'s commit reaches listeners through the database watch, without a write of our own', async () => {
    const seen: BusEvent[] = []
    const stop = api.bus.subscribe(api.bus.position, (e) => seen.push(e))
    const config = readConfig({ TOWLINE_DB: api.db.location, TOWLINE_PUBLIC_URL: 'http://towline.test', TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const background = startBackgroundWork({
      db: api.db, clock: api.clock, config, logger: createLogger('silent'), links: api.links, bus: api.bus, watchMs: 10,
      webhookSend: { timeoutMs: 1000, allowPrivate: true },
    })
    // A second connection, as the CLI or a second instance would have.
    const other = openDatabase(api.db.location)
    try {
      const ctx = createContextFactory({ db: other, clock: api.clock, links: api.links }).forOperator(api.accountId)
      const job = createJob(ctx, { customer: { name: 'From the console' }, pickup: { location: 'Yard' } })
      await until(() => seen.some((e) => e.event.jobId === job.id), 'the other process\'s event')
      expect(seen.map((e) => e.event.type)).toEqual(['job.created'])
      expect(seen[0]!.event.actor).toBe('system')
    } finally {
      closeDatabase(other)
      stop()
      await background.stop(0)
    }
  })
})

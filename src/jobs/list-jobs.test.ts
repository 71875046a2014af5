/** GET /jobs: the list envelope, limits, order, filters and cursor paging, through HTTP. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, expectCallError, makeJob, NO_LIMITS, REASON } from '../../test/jobs-helpers'

let api: TestApi
let key: string
beforeEach(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key(['jobs:read', 'jobs:write'])
})
afterEach(() => api.close())

const list = async (query = '') => {
  const res = await call(api, key, 'GET', `/jobs${query}`)
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined })
  return res.body
}
const ids = (page: any) => page.data.map((j: any) => j.id)

/** Makes `n` jobs one minute apart; returns their ids oldest first. */
async function makeJobs(n: number, overrides: Record<string, unknown> = {}) {
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    out.push((await makeJob(api, key, overrides)).id)
    api.clock.advance(60_000)
  }
  return out
}

describe('GET /jobs', () => {
  test('answers the list envelope, newest first, with 25 jobs by default', async () => {
    const made = await makeJobs(27)
    const page = await list()
    expect(Object.keys(page).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object'])
    expect(page.object).toBe('list')
    expect(page.has_more).toBe(true)
    expect(typeof page.next_cursor).toBe('string')
    expect(ids(page)).toEqual(made.slice().reverse().slice(0, 25))
    expect(page.data[0]).toMatchObject({ object: 'job', status: 'confirmed' })
  })

  test('jobs created in the same millisecond are still ordered newest first (id breaks the tie)', async () => {
    const a = (await makeJob(api, key)).id
    const b = (await makeJob(api, key)).id
    const c = (await makeJob(api, key)).id
    expect(ids(await list())).toEqual([c, b, a])
    expect(ids(await list('?limit=2'))).toEqual([c, b])
  })

  test('the last page has has_more false and next_cursor null', async () => {
    await makeJobs(3)
    const page = await list('?limit=3')
    expect({ n: page.data.length, has_more: page.has_more, next_cursor: page.next_cursor }).toEqual({ n: 3, has_more: false, next_cursor: null })
  })

  test('limit accepts 1 to 100', async () => {
    await makeJobs(2)
    expect((await list('?limit=1')).data.length).toBe(1)
    expect((await list('?limit=100')).data.length).toBe(2)
  })

  for (const bad of ['0', '101', '-1', 'ten', '2.5']) {
    test(`limit=${bad} is 422 validation_failed naming limit`, async () => {
      const err = expectCallError(await call(api, key, 'GET', `/jobs?limit=${bad}`), 422, 'validation_failed')
      expect(err.details.fields.map((f: any) => f.path)).toEqual(['limit'])
    })
  }

  test('paging through 30+ jobs with limit 7 while some are PATCHed between pages never skips or repeats a job', async () => {
    const made = await makeJobs(33)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: any = await list(`?limit=7${cursor ? `&cursor=${cursor}` : ''}`)
      seen.push(...ids(page))
      cursor = page.next_cursor
      pages++
      // Touch jobs on both sides of the cursor: updated_at and status change, the order must not.
      for (const id of [...ids(page).slice(0, 2), made[pages * 3]!]) {
        api.clock.advance(1_000)
        const res = await call(api, key, 'PATCH', `/jobs/${id}`, pages % 2 ? { urgency: `u${pages}` } : { status: 'cancelled', cancel_reason: REASON })
        expect(res.status).toBe(200)
      }
    } while (cursor)
    expect(pages).toBe(5)
    expect(seen).toEqual(made.slice().reverse())
  })

  test('a cursor this list did not return is 422 validation_failed naming cursor', async () => {
    for (const bad of ['nonsense', Buffer.from('[1,2,3]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')]) {
      const err = expectCallError(await call(api, key, 'GET', `/jobs?cursor=${bad}`), 422, 'validation_failed')
      expect(err.details.fields.map((f: any) => f.path)).toEqual(['cursor'])
    }
  })

  test("one list's cursor is refused by every other list, even one whose cursors have the same shape", async () => {
    await makeJob(api, key)
    await makeJob(api, key)
    const jobsCursor = (await list('?limit=1')).next_cursor
    expect(typeof jobsCursor).toBe('string')
    const job = await makeJob(api, key)
    const all = api.key('all')
    for (const path of ['/webhooks', '/accounts', '/services', '/units', `/jobs/${job.id}/texts`, `/jobs/${job.id}/events`]) {
      const err = expectCallError(await call(api, all, 'GET', `${path}?cursor=${jobsCursor}`), 422, 'validation_failed')
      expect({ path, fields: err.details.fields }).toEqual({ path, fields: [{ path: 'cursor', message: 'is not a cursor this list returned' }] })
    }
    // And a list takes its own.
    expect((await call(api, key, 'GET', `/jobs?cursor=${jobsCursor}`)).status).toBe(200)
    // One job's timeline cursor is not another job's (it would skip that job's first events).
    const other = await makeJob(api, key)
    await call(api, key, 'POST', `/jobs/${job.id}/notes`, { text: 'one' })
    const eventsCursor = (await call(api, key, 'GET', `/jobs/${job.id}/events?limit=1`)).body.next_cursor
    expect(typeof eventsCursor).toBe('string')
    expect(expectCallError(await call(api, key, 'GET', `/jobs/${other.id}/events?cursor=${eventsCursor}`), 422, 'validation_failed').details.fields).toEqual([{ path: 'cursor', message: 'is not a cursor this list returned' }])
    const next = await call(api, key, 'GET', `/jobs/${job.id}/events?limit=1&cursor=${eventsCursor}`)
    expect({ status: next.status, type: next.body.data[0]?.type }).toEqual({ status: 200, type: 'job.note_added' })
  })

  test('an unknown query parameter is 422 validation_failed', async () => {
    const err = expectCallError(await call(api, key, 'GET', '/jobs?sort=asc'), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['sort'])
  })

  test('a query parameter given twice is 422 naming it, not read as its last value (a comma list is how status takes several)', async () => {
    for (const path of ['/jobs?status=pending&status=confirmed', '/jobs?limit=5&limit=6', '/jobs/job_x/events?cursor=a&cursor=b']) {
      const err = expectCallError(await call(api, key, 'GET', path), 422, 'validation_failed')
      expect({ path, fields: err.details.fields }).toEqual({ path, fields: [{ path: new URLSearchParams(path.split('?')[1]).keys().next().value, message: 'must be given once' }] })
    }
    expect((await call(api, key, 'GET', '/jobs?status=pending,confirmed')).status).toBe(200)
  })
})

describe('GET /jobs filters', () => {
  test('status filters by one status or by a comma list', async () => {
    const confirmed = (await makeJob(api, key)).id
    const pending = (await makeJob(api, key, { status: 'pending' })).id
    const enRoute = (await bringTo(api, key, 'en_route')).job.id
    const cancelled = (await bringTo(api, key, 'cancelled')).job.id
    expect(ids(await list('?status=en_route'))).toEqual([enRoute])
    expect(ids(await list('?status=pending,cancelled'))).toEqual([cancelled, pending])
    expect(ids(await list('?status=confirmed,%20en_route'))).toEqual([enRoute, confirmed])
    expect(ids(await list('?status=completed'))).toEqual([])
  })

  test('an unknown status is 422 validation_failed naming status and the statuses there are, never the value sent', async () => {
    const err = expectCallError(await call(api, key, 'GET', '/jobs?status=confirmed,parked'), 422, 'validation_failed')
    expect(err.details.fields.map((f: any) => f.path)).toEqual(['status'])
    expect(err.message).toContain('must be one of pending, confirmed')
    expect(JSON.stringify(err)).not.toContain('parked')
  })

  test('since lists the jobs created at or after the time', async () => {
    const [, second, third] = await makeJobs(3)
    const secondAt = (await call(api, key, 'GET', `/jobs/${second}`)).body.created_at
    expect(ids(await list(`?since=${secondAt}`))).toEqual([third, second])
    expect(ids(await list('?since=2030-01-01T00:00:00Z'))).toEqual([])
  })

  test('updated_since lists the jobs updated at or after the time', async () => {
    const [first, second] = await makeJobs(3)
    api.clock.advance(3_600_000)
    const mark = new Date(api.clock.now()).toISOString()
    await call(api, key, 'PATCH', `/jobs/${first}`, { urgency: 'low' })
    await call(api, key, 'POST', `/jobs/${second}/notes`, { text: 'Called the customer' })
    expect(ids(await list(`?updated_since=${mark}`))).toEqual([second, first])
  })

  for (const [param, bad] of [['since', 'yesterday'], ['updated_since', '2026-13-45T99:00:00Z'], ['updated_since', '1700000000']]) {
    test(`${param}=${bad} is 422 validation_failed naming ${param}`, async () => {
      const err = expectCallError(await call(api, key, 'GET', `/jobs?${param}=${bad}`), 422, 'validation_failed')
      expect(err.details.fields.map((f: any) => f.path)).toEqual([param])
    })
  }

  test('external_ref finds the job with exactly that reference', async () => {
    const mine = (await makeJob(api, key, { external_ref: 'AAA-778812' })).id
    await makeJob(api, key, { external_ref: 'AAA-7788' })
    await makeJob(api, key)
    expect(ids(await list('?external_ref=AAA-778812'))).toEqual([mine])
    expect(ids(await list('?external_ref=AAA'))).toEqual([])
  })

  test('filters combine', async () => {
    const [old] = await makeJobs(1, { urgency: 'urgent' })
    const mark = new Date(api.clock.now()).toISOString()
    const fresh = (await makeJob(api, key)).id
    const freshDone = (await bringTo(api, key, 'cancelled')).job.id
    await call(api, key, 'PATCH', `/jobs/${old}`, { status: 'cancelled', cancel_reason: REASON })
    expect(ids(await list(`?status=cancelled&since=${mark}`))).toEqual([freshDone])
    expect(ids(await list(`?status=confirmed&since=${mark}`))).toEqual([fresh])
    expect(ids(await list(`?status=cancelled`))).toEqual([freshDone, old])
  })
})

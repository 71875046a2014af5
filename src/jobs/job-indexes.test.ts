import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { listJobsQuery, type JobFilter } from './job.queries'

let api: TestApi
beforeAll(() => { api = startTestApi() })
afterAll(() => api.close())

/** Every GET /jobs filter is served by an index: the plan never scans the jobs table. */
test.each<[string, JobFilter]>([
  ['no filter', {}],
  ['status', { statuses: ['dispatched'] }],
  ['a status list', { statuses: ['dispatched', 'en_route'] }],
  ['since', { since: 0 }],
  ['updated_since', { updatedSince: 0 }],
  ['external_ref', { externalRef: 'MC-1' }],
  ['a cursor', { after: [0, 'job_0'] }],
])('GET /jobs filtered by %s uses an index', (_, filter) => {
  const { sql, params } = listJobsQuery(api.db, { accountId: api.accountId, siteIds: null }, filter, 26).toSQL()
  const plan = (api.db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as any[])) as { detail: string }[]).map((r) => r.detail)
  expect(plan.some((d) => /USING (COVERING )?INDEX jobs_/.test(d))).toBe(true)
  expect(plan.filter((d) => /^SCAN jobs\b/.test(d) && !/USING/.test(d))).toEqual([])
})

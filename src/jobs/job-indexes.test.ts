import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, TEST_ENGINE, type TestApi } from '../../test/kit'
import { listJobsQuery, toJobRow, type JobFilter } from './job.queries'
import { jobs } from './job.table'
import { createJob } from './create-job'
import { MISSING_SEARCH_TEXT } from './fill-search-text'

let api: TestApi
beforeAll(() => { api = startTestApi() })
afterAll(() => api.close())

const scope = () => ({ accountId: api.accountId, siteIds: null })
function planOf(filter: JobFilter): string[] {
  const { sql, params } = listJobsQuery(api.db, scope(), filter, 26)
  return (api.db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as any[])) as { detail: string }[]).map((r) => r.detail)
}
const scansTable = (plan: string[]) => plan.filter((d) => /^SCAN jobs\b/.test(d) && !/USING/.test(d))
/** SQLite's query plans (PostgreSQL plans by its statistics: the same indexes exist, lockstep.test.ts). */
const onSqlite = TEST_ENGINE === 'postgres' ? test.skip : test

onSqlite("serve's start looks for jobs without search text in the index of such rows, not through every job", () => {
  const plan = (api.db.$client.query(`EXPLAIN QUERY PLAN ${MISSING_SEARCH_TEXT}`).all() as { detail: string }[]).map((r) => r.detail)
  expect(plan.some((d) => /USING (COVERING )?INDEX jobs_search_text_missing_idx/.test(d))).toBe(true)
  expect(scansTable(plan)).toEqual([])
})

describe('GET /jobs queries', () => {
  /** Every filter is served by an index: the plan never scans the jobs table. */
  onSqlite.each<[string, JobFilter]>([
    ['no filter', {}],
    ['status', { statuses: ['dispatched'] }],
    ['a status list', { statuses: ['dispatched', 'en_route'] }],
    ['since', { since: 0 }],
    ['updated_since (few matches)', { updatedSince: Date.now() }],
    ['external_ref', { externalRef: 'MC-1' }],
    ['a cursor', { after: [0, 'job_0'] }],
  ])('filtered by %s uses an index', (_, filter) => {
    const plan = planOf(filter)
    expect(plan.some((d) => /USING (COVERING )?INDEX jobs_/.test(d))).toBe(true)
    expect(scansTable(plan)).toEqual([])
  })

  onSqlite('updated_since with many matches walks the created_at index instead of sorting them all', () => {
    api.db.$client.query(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
      INSERT INTO jobs (id, account_id, site_id, customer, vehicle, pickup, status, tracking_token_hash, milestones, created_at, updated_at)
      SELECT 'job_bulk' || i, '${api.accountId}', (SELECT id FROM sites LIMIT 1), '{"name":"x","phone":null,"sms_consent":false}', '{}', '{"location":"x"}',
             'confirmed', 'tok' || i, '{}', i, i FROM n`).run()
    const plan = planOf({ updatedSince: 0 })
    expect(plan.some((d) => /INDEX jobs_account_created_idx/.test(d))).toBe(true)
    expect(plan.some((d) => /TEMP B-TREE/.test(d))).toBe(false)
  })

  test('the raw row mapper reads every column exactly as drizzle does (but the search text, which is written from the row)', () => {
    const made = createJob(api.contexts.forOperator(api.accountId),
      { customer: { name: 'A', phone: '+15035550100', sms_consent: true }, pickup: { location: 'here', lat: 1, lng: 2 }, vehicle: { year: '2019' }, external_ref: 'MAP-1' })
    const { searchText, ...viaDrizzle } = api.db.select().from(jobs).all().find((j) => j.id === made.id)!
    expect(searchText).toBe('a\nmap-1')
    const raw = api.db.$client.query('SELECT * FROM jobs WHERE id = ?').get(made.id) as Record<string, unknown>
    expect(toJobRow(raw)).toEqual(viaDrizzle!)
    expect(Object.keys(toJobRow(raw)).sort()).toEqual(Object.keys(viaDrizzle).sort())
  })
})

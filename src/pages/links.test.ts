/**
 * GET /t/{token} and GET /d/{token}: a link that was replaced, taken back or expired answers 410
 * with an HTML page saying so at once; a token that never was one answers the same 404 page as
 * any address with no page (so does a live driver link until the driver's page exists).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, makeJob, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { updateAccount } from '../accounts/update-account'
import { randomBase62 } from '../platform/ids'
import { driverUrlOf } from '../jobs/job-links'
import { replaceTrackingLink } from '../jobs/replace-tracking-link'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi({ ...NO_LIMITS, TOWLINE_TRACKING_LINK_DAYS: '2' })
  key = api.key('all')
  updateAccount(api.contexts.forOperator(api.accountId), { name: 'Joe & Sons <Towing>' })
})
afterAll(() => api.close())

const DAY = 86_400_000
const pathOf = (url: string) => new URL(url).pathname
const dispatcher = () => api.contexts.forDispatcher({ userId: 'usr_disp', role: 'dispatcher', accountId: api.accountId })
/** The driver's link the job holds now. */
const driverLink = (jobId: string) => {
  const row = api.db.$client.query('SELECT driver_token_sealed FROM jobs WHERE id = ?').get(jobId) as { driver_token_sealed: string }
  return driverUrlOf(api.links, { driverTokenSealed: row.driver_token_sealed })!
}
async function get(path: string) {
  const res = await api.request('GET', path)
  return { status: res.status, type: res.headers.get('content-type'), requestId: res.headers.get('request-id'), cache: res.headers.get('cache-control'), referrer: res.headers.get('referrer-policy'), html: await res.text() }
}
/** The one sentence of the error page. */
const sentenceOf = (html: string) => /<p role="alert">([^<]*)<\/p>/.exec(html)?.[1]

describe('GET /t/{token}', () => {
  test('a replaced tracking link answers 410 with a page naming the company (escaped) and what to do', async () => {
    const job = await makeJob(api, key)
    replaceTrackingLink(dispatcher(), job.id)
    const res = await get(pathOf(job.tracking_url))
    expect(res.status).toBe(410)
    expect(res.type).toStartWith('text/html')
    expect(res.html).toContain('<title>410 This link no longer works')
    expect(res.html).toContain('<h1>410 This link no longer works</h1>')
    expect(sentenceOf(res.html)).toBe('This tracking link was replaced. Ask Joe &amp; Sons &lt;Towing&gt; for the new one.')
    expect(res.html).toContain(res.requestId!)
    expect(res.cache).toBe('no-store')
  })

  test('an unknown token and a malformed one answer the same 404 page as an address with no page; the live link is the tracking page', async () => {
    const job = await makeJob(api, key)
    const nowhere = await get('/nowhere-at-all')
    expect(nowhere.status).toBe(404)
    expect((await get(pathOf(job.tracking_url))).status).toBe(200)
    for (const path of [`/t/${randomBase62(24)}`, '/t/short', `/t/${'a'.repeat(23)}%2F`]) {
      const res = await get(path)
      expect({ path, status: res.status, sentence: sentenceOf(res.html) }).toEqual({ path, status: 404, sentence: sentenceOf(nowhere.html) })
      expect(res.type).toStartWith('text/html')
    }
  })

  test('expires the setting\'s days after the job finished (410), live until then', async () => {
    const { job } = await bringTo(api, key, 'completed')
    api.clock.advance(2 * DAY)
    expect((await get(pathOf(job.tracking_url))).status).toBe(200)
    api.clock.advance(1)
    const res = await get(pathOf(job.tracking_url))
    expect(res.status).toBe(410)
    expect(sentenceOf(res.html)).toBe('This tracking link has expired: the job finished some time ago. Contact Joe &amp; Sons &lt;Towing&gt; if you need anything more.')
  })
})

describe('GET /d/{token}', () => {
  test('a driver link taken back by a reassign or an unassign answers 410: the job was handed to another driver', async () => {
    const { job: reassigned } = await bringTo(api, key, 'en_route')
    const first = driverLink(reassigned.id)
    expect((await call(api, key, 'POST', `/jobs/${reassigned.id}/assign`, { unit_id: makeUnit(api).id })).status).toBe(200)
    const { job: unassigned } = await bringTo(api, key, 'dispatched')
    const taken = driverLink(unassigned.id)
    expect((await call(api, key, 'DELETE', `/jobs/${unassigned.id}/assign`)).status).toBe(200)
    for (const link of [first, taken]) {
      const res = await get(pathOf(link))
      expect({ link, status: res.status }).toEqual({ link, status: 410 })
      expect(res.type).toStartWith('text/html')
      expect(sentenceOf(res.html)).toBe('This job was handed to another driver.')
    }
    // The new driver's link is live: the driver's page (src/driver/).
    expect((await get(pathOf(driverLink(reassigned.id)))).status).toBe(200)
  })

  test('a driver link replaced for the same unit, and one 24 hours after the job finished, answer 410 saying so', async () => {
    const { job } = await bringTo(api, key, 'confirmed', { withUnit: true })
    const kept = driverLink(job.id)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: job.unit.id })).status).toBe(200)
    expect(sentenceOf((await get(pathOf(kept))).html)).toBe('This job link was replaced by a newer one: open the link in the latest text.')

    const { job: done } = await bringTo(api, key, 'completed')
    api.clock.advance(DAY + 1)
    const res = await get(pathOf(driverLink(done.id)))
    expect(res.status).toBe(410)
    expect(sentenceOf(res.html)).toBe('This job link has expired: the job finished more than 24 hours ago.')
  })

  test('a tracking token on /d/ and a driver token on /t/ lead nowhere (404)', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    expect((await get(`/d/${pathOf(job.tracking_url).slice(3)}`)).status).toBe(404)
    expect((await get(`/t/${pathOf(driverLink(job.id)).slice(3)}`)).status).toBe(404)
  })
})

/**
 * GET /jobs/{id}/texts (what a job texted, or recorded with the log provider, and what was
 * skipped and why) and the reply window for customers who text after their job finished.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, expectCallError, makeJob, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { twilioSignature, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../../test/twilio-standin'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi({ ...NO_LIMITS, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TOWLINE_SMS_REPLY_WINDOW_HOURS: '72' })
  key = api.key(['jobs:read', 'jobs:write'])
})
afterAll(() => api.close())

const HOUR = 3_600_000

describe('GET /jobs/{id}/texts', () => {
  test('lists the texts a job caused, oldest first, each linked to the timeline event that caused it', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Ann', phone: '503-555-0142', sms_consent: true } })
    const unit = makeUnit(api, { driverPhone: '+15035550199' })
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data as any[]
    const res = await call(api, key, 'GET', `/jobs/${job.id}/texts`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null })
    const texts = res.body.data as any[]
    expect(texts.map((t) => [t.recipient, t.template, t.to, t.status])).toEqual([
      ['customer', 'request_received', '+15035550142', 'queued'],
      ['driver', 'driver_job_link', null, 'queued'],
      ['customer', 'status_dispatched', '+15035550142', 'queued'],
    ])
    expect(texts[0]).toMatchObject({ object: 'text', job_id: job.id, skip_reason: null, provider: null, provider_message_id: null, error: null, attempts: 0 })
    expect(texts[0].id).toStartWith('txt_')
    expect(texts[0].body).toContain(job.tracking_url)
    expect(texts[0].event_id).toBe(events.find((e) => e.type === 'job.created').id)
    expect(texts[1].event_id).toBe(events.find((e) => e.type === 'job.assigned').id)
    // The driver's link acts as the driver: never shown to a key; the number is roster data.
    expect(texts[1].body).toContain('[driver link]')
    expect(texts[1].body).not.toContain('/d/')
    expect(texts[1].to).toBeNull()
    const rosterKey = api.key(['jobs:read', 'roster:read'])
    const seenByRoster = (await call(api, rosterKey, 'GET', `/jobs/${job.id}/texts`)).body.data
    expect(seenByRoster[1]).toMatchObject({ to: '+15035550199', body: texts[1].body })
  })

  test('shows a text that was not sent with the reason', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Bo', phone: '503-555-0143', sms_consent: false } })
    const texts = (await call(api, key, 'GET', `/jobs/${job.id}/texts`)).body.data
    expect(texts).toEqual([expect.objectContaining({ template: 'request_received', status: 'skipped', skip_reason: 'no_consent' })])
  })

  test('pages with limit and cursor without repeating or skipping a text', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const all = (await call(api, key, 'GET', `/jobs/${job.id}/texts?limit=100`)).body.data.map((t: any) => t.id)
    expect(all.length).toBeGreaterThan(3)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res: any = await call(api, key, 'GET', `/jobs/${job.id}/texts?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.status).toBe(200)
      seen.push(...res.body.data.map((t: any) => t.id))
      cursor = res.body.next_cursor
    } while (cursor)
    expect(seen).toEqual(all)
  })

  test('another account\'s job is 404 not_found; a bad cursor or limit is 422', async () => {
    const other = api.account('Other Towing')
    const otherJob = await makeJob(api, api.key('all', { accountId: other }))
    expectCallError(await call(api, key, 'GET', `/jobs/${otherJob.id}/texts`), 404, 'not_found')
    expectCallError(await call(api, key, 'GET', '/jobs/job_nope/texts'), 404, 'not_found')
    const job = await makeJob(api, key)
    expectCallError(await call(api, key, 'GET', `/jobs/${job.id}/texts?cursor=zzz`), 422, 'validation_failed')
    expectCallError(await call(api, key, 'GET', `/jobs/${job.id}/texts?limit=0`), 422, 'validation_failed')
  })
})

/** Sends a correctly signed Twilio inbound text to the in-process app. */
async function inbound(from: string, body: string, media: string[] = []) {
  const params: Record<string, string> = { AccountSid: TWILIO_SID, MessageSid: `SM${crypto.randomUUID().replaceAll('-', '')}`, From: from, To: TWILIO_FROM, Body: body, NumMedia: String(media.length) }
  media.forEach((url, i) => { params[`MediaUrl${i}`] = url; params[`MediaContentType${i}`] = 'image/jpeg' })
  const res = await api.request('POST', '/sms/twilio/inbound', {
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature('http://towline.test/sms/twilio/inbound', params) },
  })
  expect(res.status).toBe(200)
}
const messages = async (jobId: string) => ((await call(api, key, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data as any[])
  .filter((e) => e.type === 'job.customer_message').map((e) => e.detail.text)

describe('replies after the job finished', () => {
  test('thread onto the finished job within the window counted from when it finished, and not after', async () => {
    const { job } = await bringTo(api, key, 'completed', { job: { customer: { name: 'Cy', phone: '503-555-0160', sms_consent: true } } })
    api.clock.advance(71 * HOUR)
    await inbound('+15035550160', 'Thanks, the car is fine')
    // The reply above updated the job; the window still runs from the finish, not from it.
    api.clock.advance(2 * HOUR)
    await inbound('+15035550160', 'One more thing')
    expect(await messages(job.id)).toEqual(['Thanks, the car is fine'])
  })

  test('go to the open job when the customer has one, even with a finished job in the window', async () => {
    const { job: done } = await bringTo(api, key, 'completed', { job: { customer: { name: 'Di', phone: '503-555-0161', sms_consent: true } } })
    const open = await makeJob(api, key, { customer: { name: 'Di', phone: '503-555-0161', sms_consent: true } })
    await inbound('+15035550161', 'Stuck again, sorry')
    expect(await messages(open.id)).toEqual(['Stuck again, sorry'])
    expect(await messages(done.id)).toEqual([])
  })

  test('a photo the customer texts (MMS) is on the message with its URL', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Ed', phone: '503-555-0162', sms_consent: true } })
    const photo = `https://api.twilio.com/2010-04-01/Accounts/${TWILIO_SID}/Messages/MM1/Media/ME1`
    await inbound('+15035550162', 'This is where I am', [photo])
    const events = (await call(api, key, 'GET', `/jobs/${job.id}/events`)).body.data as any[]
    expect(events.at(-1)).toMatchObject({ type: 'job.customer_message', actor: 'customer', detail: { text: 'This is where I am', media_urls: [photo] } })
  })
})

/**
 * A customer's words reach the dispatcher wherever they were written: replies by text and
 * messages from the tracking page appear together on the job page (with the texts we sent
 * them) and, newest first, on the job's board card, live.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { makeJob, NO_LIMITS } from '../../test/jobs-helpers'
import { readSse } from '../../test/sse-reader'
import { twilioSignature, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../../test/twilio-standin'
import { createUser } from '../users/create-user'

const ORIGIN = 'http://towline.test'
let api: TestApi
let key: string
let cookie: string

beforeAll(async () => {
  api = startTestApi({ ...NO_LIMITS, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM })
  key = api.key('all')
  await createUser(api.contexts.forOperator(api.accountId), { email: 'dee@example.com', role: 'dispatcher', password: 'correct horse battery' })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=dee%40example.com&password=correct+horse+battery' }))
  cookie = res.headers.get('set-cookie')!.split(';')[0]!
})
afterAll(() => api.close())

const page = async (path: string) => (await api.raw(new Request(ORIGIN + path, { headers: { cookie } }))).text()
let sids = 0
async function textFromCustomer(from: string, body: string) {
  const params: Record<string, string> = { AccountSid: TWILIO_SID, MessageSid: `SMcm${String(++sids).padStart(30, '0')}`, From: from, To: TWILIO_FROM, Body: body, NumMedia: '0' }
  const res = await api.request('POST', '/sms/twilio/inbound', {
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(`${ORIGIN}/sms/twilio/inbound`, params) },
  })
  expect(res.status).toBe(200)
}
async function messageFromTrackingPage(trackingUrl: string, message: string) {
  const res = await api.raw(new Request(ORIGIN + new URL(trackingUrl).pathname + '/message', { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ message }).toString() }))
  expect(res.status).toBe(303)
}
/** The board's card of a job, as the board page draws it. */
function cardOf(html: string, jobId: string): string {
  const at = html.indexOf(`data-job-id="${jobId}"`)
  expect(at).toBeGreaterThan(-1)
  return html.slice(at, html.indexOf('</li>', at))
}

describe('customer messages', () => {
  test('a reply by text and a tracking-page message show together on the job page, beside the texts sent, and the newest on the board card', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Cy', phone: '+15035550191', sms_consent: true } })
    expect(cardOf(await page('/board'), job.id)).not.toContain('card-message')

    api.clock.advance(1000)
    await textFromCustomer('+15035550191', 'Blue sedan, hazards on')
    let card = cardOf(await page('/board'), job.id)
    expect(card).toContain('Customer wrote by text:')
    expect(card).toContain('Blue sedan, hazards on')

    api.clock.advance(60_000)
    await messageFromTrackingPage(job.tracking_url, 'I walked to the <gas station>')
    card = cardOf(await page('/board'), job.id)
    expect(card).toContain('Customer (2 messages), latest on the tracking page:')
    expect(card).toContain('I walked to the &lt;gas station&gt;')
    expect(card).not.toContain('Blue sedan')

    const jobPage = await page(`/jobs/${job.id}`)
    const section = jobPage.slice(jobPage.indexOf('id="h-messages"'), jobPage.indexOf('</section>', jobPage.indexOf('id="h-messages"')))
    const sms = section.indexOf('Blue sedan, hazards on')
    const tracking = section.indexOf('I walked to the &lt;gas station&gt;')
    expect(sms).toBeGreaterThan(-1)
    expect(tracking).toBeGreaterThan(sms)
    expect(section).toContain('Customer by text')
    expect(section).toContain('Customer on the tracking page')
    // The text we sent when the job was made is part of the same conversation, before the reply.
    const sent = section.indexOf('Text to the customer:')
    expect(sent).toBeGreaterThan(-1)
    expect(sent).toBeLessThan(sms)
  })

  test('the card a live board receives carries the new message', async () => {
    const job = await makeJob(api, key, { customer: { name: 'Di', phone: '+15035550192', sms_consent: true } })
    const stream = readSse(await api.raw(new Request(`${ORIGIN}/board/events`, { headers: { cookie } })))
    await stream.until((m) => m.some((x) => x.event === 'hello'))
    await messageFromTrackingPage(job.tracking_url, 'Running low on battery')
    await stream.until((m) => m.some((x) => x.data?.event?.type === 'job.customer_message' && x.data?.job?.id === job.id))
    const message = stream.messages.find((x) => x.data?.event?.type === 'job.customer_message' && x.data?.job?.id === job.id)!
    expect(message.data.card).toContain('Customer wrote on the tracking page:')
    expect(message.data.card).toContain('Running low on battery')
    await stream.cancel()
  })
})

/**
 * Inbound texts are routed by the number they were sent to: an account with its own sending
 * number gets the replies to it; the installation's number (TWILIO_FROM) serves the accounts
 * without one. A reply is threaded only in an account that texted that customer; HELP names
 * the company that did; STOP opts out where it was sent; Twilio's retries (same MessageSid)
 * change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { call, makeJob, NO_LIMITS } from '../../test/jobs-helpers'
import { twilioSignature, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../../test/twilio-standin'
import { updateAccount } from '../accounts/update-account'

const BAY_NUMBER = '+15035550777'
let api: TestApi
let keyA: string
let keyB: string
let bay: string

beforeAll(() => {
  api = startTestApi({ ...NO_LIMITS, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM })
  updateAccount(api.contexts.forOperator(api.accountId), { name: 'Acme Towing', phone: '+15035550100' })
  keyA = api.key('all')
  bay = api.account('Bay Towing')
  updateAccount(api.contexts.forOperator(bay), { phone: '+15035550700', smsFrom: BAY_NUMBER })
  keyB = api.key('all', { accountId: bay })
})
afterAll(() => api.close())

let sids = 0
/** Sends a correctly signed Twilio inbound text; returns the TwiML answer. */
async function inbound(from: string, body: string, opts: { to?: string; sid?: string } = {}) {
  const params: Record<string, string> = { AccountSid: TWILIO_SID, MessageSid: opts.sid ?? `SMin${String(++sids).padStart(30, '0')}`, From: from, To: opts.to ?? TWILIO_FROM, Body: body, NumMedia: '0' }
  const res = await api.request('POST', '/sms/twilio/inbound', {
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature('http://towline.test/sms/twilio/inbound', params) },
  })
  expect(res.status).toBe(200)
  return res.text()
}
const messages = async (key: string, jobId: string) => ((await call(api, key, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data as any[])
  .filter((e) => e.type === 'job.customer_message').map((e) => e.detail.text)
const customer = (phone: string, consent = true) => ({ customer: { name: 'Cy', phone, sms_consent: consent } })
const EMPTY = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'

describe('replies', () => {
  test('a reply to an account\'s own number lands on its job only, even when another account has a newer one', async () => {
    const jobB = await makeJob(api, keyB, customer('+15035550180'))
    const jobA = await makeJob(api, keyA, customer('+15035550180'))
    expect(await inbound('+15035550180', 'At the Bay rest stop', { to: BAY_NUMBER })).toBe(EMPTY)
    expect(await messages(keyB, jobB.id)).toEqual(['At the Bay rest stop'])
    expect(await messages(keyA, jobA.id)).toEqual([])
  })

  test('a reply to the installation\'s number lands on the job of the account that texted from it, never on another account\'s newer job', async () => {
    const jobA = await makeJob(api, keyA, customer('+15035550181'))
    api.clock.advance(1000)
    const jobB = await makeJob(api, keyB, customer('+15035550181'))
    await inbound('+15035550181', 'Blue sedan, hazards on')
    expect(await messages(keyA, jobA.id)).toEqual(['Blue sedan, hazards on'])
    expect(await messages(keyB, jobB.id)).toEqual([])
  })

  test('a customer only another account texted, writing to the installation\'s number, is threaded nowhere', async () => {
    // Acme holds a job with that phone but never texted it (no consent): still not Acme's conversation.
    const jobA = await makeJob(api, keyA, customer('+15035550182', false))
    const jobB = await makeJob(api, keyB, customer('+15035550182'))
    expect(await inbound('+15035550182', 'Hello?')).toBe(EMPTY)
    expect(await messages(keyA, jobA.id)).toEqual([])
    expect(await messages(keyB, jobB.id)).toEqual([])
    // Written to the number of an account that never texted them: nowhere either.
    const other = await makeJob(api, keyA, customer('+15035550183'))
    await inbound('+15035550183', 'Hello?', { to: BAY_NUMBER })
    expect(await messages(keyA, other.id)).toEqual([])
  })

  test('Twilio\'s retry of a message (same MessageSid) is answered the same and threaded once', async () => {
    const job = await makeJob(api, keyB, customer('+15035550184'))
    const first = await inbound('+15035550184', 'Gate code 4411', { to: BAY_NUMBER, sid: 'SMretry0000000000000000000000001' })
    const again = await inbound('+15035550184', 'Gate code 4411', { to: BAY_NUMBER, sid: 'SMretry0000000000000000000000001' })
    expect(again).toBe(first)
    expect(await messages(keyB, job.id)).toEqual(['Gate code 4411'])
    const events = (await call(api, keyB, 'GET', `/jobs/${job.id}/events`)).body.data as any[]
    expect(events.at(-1).detail).toMatchObject({ message_sid: 'SMretry0000000000000000000000001', from: '+15035550184' })
  })
})

describe('HELP', () => {
  const reply = (xml: string) => /<Message>(.*)<\/Message>/.exec(xml)?.[1] ?? null

  test('names the company that texted the customer from that number, with its phone', async () => {
    await makeJob(api, keyA, customer('+15035550185'))
    await makeJob(api, keyB, customer('+15035550185'))
    expect(reply(await inbound('+15035550185', 'HELP'))).toStartWith('Acme Towing (+15035550100): texts about your tow request.')
    expect(reply(await inbound('+15035550185', 'help', { to: BAY_NUMBER }))).toStartWith('Bay Towing (+15035550700): texts about your tow request.')
  })

  test('names no company when none texted them from that number; a retry answers the same', async () => {
    await makeJob(api, keyB, customer('+15035550186'))
    const help = reply(await inbound('+15035550186', 'HELP', { sid: 'SMhelp00000000000000000000000001' }))
    expect(help).toStartWith('Texts about your tow request.')
    expect(help).not.toContain('Bay')
    expect(help).not.toContain('Acme')
    expect(reply(await inbound('+15035550186', 'HELP', { sid: 'SMhelp00000000000000000000000001' }))).toBe(help)
    const noPhone = api.account('Quiet Towing')
    updateAccount(api.contexts.forOperator(noPhone), { smsFrom: '+15035550888' })
    await makeJob(api, api.key('all', { accountId: noPhone }), customer('+15035550187'))
    expect(reply(await inbound('+15035550187', 'HELP', { to: '+15035550888' }))).toStartWith('Quiet Towing: texts about your tow request.')
  })
})

describe('STOP', () => {
  test('STOP to an account\'s own number opts the customer out of that account\'s texts only', async () => {
    const jobA = await makeJob(api, keyA, customer('+15035550188'))
    const jobB = await makeJob(api, keyB, customer('+15035550188'))
    expect(await inbound('+15035550188', 'STOP', { to: BAY_NUMBER })).toBe(EMPTY)
    await call(api, keyA, 'PATCH', `/jobs/${jobA.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    await call(api, keyB, 'PATCH', `/jobs/${jobB.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    const last = async (key: string, id: string) => ((await call(api, key, 'GET', `/jobs/${id}/texts`)).body.data as any[]).at(-1)
    expect(await last(keyB, jobB.id)).toMatchObject({ template: 'status_cancelled', status: 'skipped', skip_reason: 'opted_out' })
    expect(await last(keyA, jobA.id)).toMatchObject({ template: 'status_cancelled', status: 'queued', skip_reason: null })
    // START to that number lets the account text them again.
    await inbound('+15035550188', 'START', { to: BAY_NUMBER })
    await call(api, keyB, 'POST', `/jobs/${jobB.id}/reopen`, { reason: 'customer called back' })
    expect(await last(keyB, jobB.id)).toMatchObject({ status: 'queued' })
  })

  test('a keyword is the whole message in any case, with punctuation around it; it also lands on the job\'s timeline ("Cancel" may mean the tow)', async () => {
    const job = await makeJob(api, keyB, customer('+15035550176'))
    const textsOf = async () => ((await call(api, keyB, 'GET', `/jobs/${job.id}/texts`)).body.data as any[])
    const cancelNow = async () => {
      await call(api, keyB, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: 'checking the opt-out' })
      const last = (await textsOf()).at(-1)
      await call(api, keyB, 'POST', `/jobs/${job.id}/reopen`, { reason: 'checking again' })
      return last.skip_reason
    }
    // Not keywords: a reply that merely holds the word.
    for (const body of ['2 stop', 's t o p', 'please stop by at 5']) await inbound('+15035550176', body, { to: BAY_NUMBER })
    expect(await cancelNow()).toBeNull()
    await inbound('+15035550176', ' Cancel! ', { to: BAY_NUMBER })
    expect(await cancelNow()).toBe('opted_out')
    expect(await messages(keyB, job.id)).toEqual(['2 stop', 's t o p', 'please stop by at 5', ' Cancel! '])
  })

  test('STOP to the installation\'s number leaves an account with its own number alone', async () => {
    const jobB = await makeJob(api, keyB, customer('+15035550189'))
    await inbound('+15035550189', 'STOP')
    await call(api, keyB, 'PATCH', `/jobs/${jobB.id}`, { status: 'cancelled', cancel_reason: 'customer left' })
    expect(((await call(api, keyB, 'GET', `/jobs/${jobB.id}/texts`)).body.data as any[]).at(-1)).toMatchObject({ status: 'queued' })
  })
})

/**
 * The Twilio provider against the local stand-in: sending from a number or a Messaging
 * Service, and finding a text after a crash. Plus the settings Twilio needs.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { readConfig, ConfigError } from '../config'
import { startTwilioStandin, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../../test/twilio-standin'
import { twilioProvider } from './providers'

const twilio = startTwilioStandin()
afterAll(() => twilio.stop())
const SERVICE = 'MG' + 'a1'.repeat(16)
const provider = (from: string) => twilioProvider({ accountSid: TWILIO_SID, authToken: TWILIO_TOKEN, from, apiBase: twilio.apiBase, statusCallbackUrl: 'https://towline.example/sms/twilio/status' })

describe('twilio provider', () => {
  test('sends from the configured number, and finds the text again by recipient and body', async () => {
    const p = provider(TWILIO_FROM)
    const since = Date.now()
    const sent = await p.send({ textId: 'txt_1', to: '+15035550170', body: 'Hello from the number' })
    expect(twilio.messages.at(-1)).toMatchObject({ sid: sent.id, from: TWILIO_FROM, messagingServiceSid: null })
    expect(await p.findSent({ textId: 'txt_1', to: '+15035550170', body: 'Hello from the number' }, since, () => false)).toMatchObject({ id: sent.id })
    expect(await p.findSent({ textId: 'txt_2', to: '+15035550170', body: 'Never sent' }, since, () => false)).toBeNull()
  })

  test('two identical texts to one number never settle on the same message', async () => {
    const p = provider(TWILIO_FROM)
    const since = Date.now()
    const first = await p.send({ textId: 'txt_4', to: '+15035550172', body: 'Your driver is on the way' })
    // A second identical text was caught mid-send before Twilio took it: the first one's message is not it.
    expect(await p.findSent({ textId: 'txt_5', to: '+15035550172', body: 'Your driver is on the way' }, since, (sid) => sid === first.id)).toBeNull()
    const second = await p.send({ textId: 'txt_5', to: '+15035550172', body: 'Your driver is on the way' })
    expect(await p.findSent({ textId: 'txt_5', to: '+15035550172', body: 'Your driver is on the way' }, since, (sid) => sid === first.id)).toMatchObject({ id: second.id })
  })

  test('an account with its own number sends from it, and is found by it', async () => {
    const p = provider(SERVICE)
    const since = Date.now()
    const sent = await p.send({ textId: 'txt_6', to: '+15035550173', body: 'From our own number', from: '+15035550999' })
    expect(twilio.messages.at(-1)).toMatchObject({ sid: sent.id, from: '+15035550999', messagingServiceSid: null })
    expect(await p.findSent({ textId: 'txt_6', to: '+15035550173', body: 'From our own number', from: '+15035550999' }, since, () => false)).toMatchObject({ id: sent.id })
  })

  test('sends through a Messaging Service when TWILIO_FROM is an MG sid, and still finds the text', async () => {
    const p = provider(SERVICE)
    const since = Date.now()
    const sent = await p.send({ textId: 'txt_3', to: '+15035550171', body: 'Hello from the service' })
    expect(twilio.messages.at(-1)).toMatchObject({ sid: sent.id, messagingServiceSid: SERVICE })
    expect(await p.findSent({ textId: 'txt_3', to: '+15035550171', body: 'Hello from the service' }, since, () => false)).toMatchObject({ id: sent.id })
  })
})

describe('twilio settings', () => {
  const base = { TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: TWILIO_SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN }
  test('TWILIO_FROM must be an E.164 number or a Messaging Service SID', () => {
    expect(readConfig({ ...base, TWILIO_FROM: '+15035550000' }).twilio.from).toBe('+15035550000')
    expect(readConfig({ ...base, TWILIO_FROM: SERVICE }).twilio.from).toBe(SERVICE)
    expect(() => readConfig({ ...base, TWILIO_FROM: '503-555-0000' })).toThrow(ConfigError)
    expect(() => readConfig({ ...base, TWILIO_FROM: '503-555-0000' })).toThrow(/TWILIO_FROM/)
  })

  test('the twilio provider names every missing setting', () => {
    expect(() => readConfig({ TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_FROM: '+15035550000' })).toThrow(/TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN/)
  })
})

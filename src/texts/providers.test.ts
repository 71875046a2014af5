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
    expect(await p.findSent({ textId: 'txt_1', to: '+15035550170', body: 'Hello from the number' }, since)).toMatchObject({ id: sent.id })
    expect(await p.findSent({ textId: 'txt_2', to: '+15035550170', body: 'Never sent' }, since)).toBeNull()
  })

  test('sends through a Messaging Service when TWILIO_FROM is an MG sid, and still finds the text', async () => {
    const p = provider(SERVICE)
    const since = Date.now()
    const sent = await p.send({ textId: 'txt_3', to: '+15035550171', body: 'Hello from the service' })
    expect(twilio.messages.at(-1)).toMatchObject({ sid: sent.id, messagingServiceSid: SERVICE })
    expect(await p.findSent({ textId: 'txt_3', to: '+15035550171', body: 'Hello from the service' }, since)).toMatchObject({ id: sent.id })
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

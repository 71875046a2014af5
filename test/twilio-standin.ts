/**
 * A local stand-in for Twilio's Messages API, as Twilio documents it: basic auth with the
 * account SID and auth token, form-encoded create, JSON resources and error payloads
 * ({ code, message, more_info, status }), listing filtered by To/From/DateSent, and status
 * callbacks signed with X-Twilio-Signature.
 */
import { createHmac, randomBytes } from 'node:crypto'

export const TWILIO_SID = 'AC' + '0'.repeat(30) + '42'
export const TWILIO_TOKEN = 'test_auth_token_' + randomBytes(8).toString('hex')
export const TWILIO_FROM = '+15035550000'

export interface StandinMessage { sid: string; to: string; from: string; messagingServiceSid: string | null; body: string; status: string; date_created: string; statusCallback: string | null }
export type Answer = 'ok' | 'error500' | 'invalid' | 'unsubscribed' | 'hang' | 'delivered-first' | 'stall'

/** Signs a POST as Twilio does: base64 HMAC-SHA1 of the URL and the sorted parameters. */
export function twilioSignature(url: string, params: Record<string, string>, token = TWILIO_TOKEN): string {
  return createHmac('sha1', token).update(url + Object.keys(params).sort().map((k) => k + params[k]).join('')).digest('base64')
}

const twilioError = (status: number, code: number, message: string) =>
  Response.json({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }, { status })

/** Starts the stand-in. `answer(to)` decides how each create is answered. */
export function startTwilioStandin(opts: { answer?: (to: string, body: string) => Answer } = {}) {
  const messages: StandinMessage[] = []
  const creates: { to: string; body: string; answer: Answer }[] = []
  const base = `/2010-04-01/Accounts/${TWILIO_SID}/Messages.json`
  /** A message resource as Twilio renders it (snake_case). */
  const resource = ({ statusCallback: _s, messagingServiceSid, ...m }: StandinMessage) => ({
    ...m, account_sid: TWILIO_SID, messaging_service_sid: messagingServiceSid, direction: 'outbound-api', error_code: null, error_message: null, uri: `${base.replace('.json', '')}/${m.sid}.json`,
  })
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url)
      if (url.pathname !== base) return twilioError(404, 20404, 'The requested resource was not found')
      if (req.headers.get('authorization') !== 'Basic ' + Buffer.from(`${TWILIO_SID}:${TWILIO_TOKEN}`).toString('base64')) return twilioError(401, 20003, 'Authenticate')
      if (req.method === 'GET') {
        const to = url.searchParams.get('To')
        const from = url.searchParams.get('From')
        const since = url.searchParams.get('DateSent>')
        const list = messages.filter((m) => (!to || m.to === to) && (!from || m.from === from) && (!since || Date.parse(m.date_created) >= Date.parse(since)))
        return Response.json({ messages: list.reverse().map(resource), page: 0, page_size: 100, next_page_uri: null })
      }
      const form = Object.fromEntries(new URLSearchParams(await req.text()))
      if (!form.To || !form.Body) return twilioError(400, 21604, "A 'To' phone number is required.")
      if (!form.From && !form.MessagingServiceSid) return twilioError(400, 21603, "A 'From' or 'MessagingServiceSid' parameter is required to send a message.")
      const answer = opts.answer?.(form.To, form.Body) ?? 'ok'
      creates.push({ to: form.To, body: form.Body, answer })
      if (answer === 'error500') return twilioError(500, 20500, 'Internal Server Error')
      if (answer === 'invalid') return twilioError(400, 21211, `The 'To' number ${form.To} is not a valid phone number.`)
      if (answer === 'unsubscribed') return twilioError(400, 21610, 'Attempt to send to unsubscribed recipient')
      // Overloaded: the request is read but never answered, and no message is made.
      if (answer === 'stall') await new Promise(() => {})
      // A Messaging Service picks the sending number from its pool: here, TWILIO_FROM.
      const m: StandinMessage = { sid: 'SM' + randomBytes(16).toString('hex'), to: form.To, from: form.From ?? TWILIO_FROM, messagingServiceSid: form.MessagingServiceSid ?? null, body: form.Body, status: 'queued', date_created: new Date().toUTCString(), statusCallback: form.StatusCallback ?? null }
      messages.push(m)
      // Twilio took the message but the answer never comes back (the caller crashes meanwhile).
      if (answer === 'hang') await new Promise(() => {})
      // The carrier's report reaches the caller before Twilio's own answer to the create does.
      if (answer === 'delivered-first') { m.status = 'delivered'; await report(m.sid, 'delivered') }
      return Response.json(resource(m), { status: 201 })
    },
  })
  /** Posts a signed status callback for a message, as Twilio does when a carrier reports. */
  async function report(sid: string, status: 'sent' | 'delivered' | 'undelivered' | 'failed', errorCode?: string) {
    const m = messages.find((x) => x.sid === sid)!
    const params: Record<string, string> = { AccountSid: TWILIO_SID, MessageSid: sid, MessageStatus: status, To: m.to, From: m.from, ...(errorCode ? { ErrorCode: errorCode } : {}) }
    return fetch(m.statusCallback!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(m.statusCallback!, params) }, body: new URLSearchParams(params) })
  }
  return {
    apiBase: `http://127.0.0.1:${server.port}`,
    messages,
    creates,
    report,
    stop: () => server.stop(true),
  }
}

/**
 * Sends an inbound text to a towline server as Twilio would: to `to` (default TWILIO_FROM), with
 * a fresh MessageSid unless `sid` repeats one (Twilio's retry), signed unless `signature` is given.
 */
export function sendInbound(publicUrl: string, from: string, body: string, opts: { to?: string; sid?: string; signature?: string } = {}) {
  const url = `${publicUrl}/sms/twilio/inbound`
  const params: Record<string, string> = { AccountSid: TWILIO_SID, MessageSid: opts.sid ?? 'SM' + randomBytes(16).toString('hex'), From: from, To: opts.to ?? TWILIO_FROM, Body: body, NumMedia: '0' }
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': opts.signature ?? twilioSignature(url, params) }, body: new URLSearchParams(params) })
}

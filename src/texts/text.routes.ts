import { Elysia } from 'elysia'
import type { AppDeps } from '../app'
import { applyDeliveryReport, handleInboundText } from './inbound'
import { validTwilioSignature } from './providers'

const xml = (body: string) => new Response(`<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`, { headers: { 'content-type': 'text/xml; charset=utf-8' } })
const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)

/** Twilio's webhooks: inbound texts and delivery reports, each checked with X-Twilio-Signature. */
export function textRoutes(deps: AppDeps) {
  const token = deps.config.twilio.authToken
  /** Reads Twilio's form body and checks its signature against the URL Twilio called (our public URL). */
  async function signed(request: Request, path: string): Promise<Record<string, string> | null> {
    const params = Object.fromEntries(new URLSearchParams(await request.text()))
    return validTwilioSignature(token, `${deps.config.publicUrl}${path}`, params, request.headers.get('x-twilio-signature')) ? params : null
  }
  const refused = () => new Response('signature check failed\n', { status: 403, headers: { 'content-type': 'text/plain' } })
  return new Elysia()
    .post('/sms/twilio/inbound', async ({ request }) => {
      const p = await signed(request, '/sms/twilio/inbound')
      if (!p) return refused()
      const { reply } = handleInboundText(
        { db: deps.db, clock: deps.clock, publicUrl: deps.config.publicUrl, replyWindowMs: deps.config.smsReplyWindowMs },
        { from: p.From ?? '', body: p.Body ?? '', sid: p.MessageSid ?? p.SmsSid ?? null },
      )
      return xml(reply ? `<Message>${escapeXml(reply)}</Message>` : '')
    }, { detail: { hide: true } })
    .post('/sms/twilio/status', async ({ request }) => {
      const p = await signed(request, '/sms/twilio/status')
      if (!p) return refused()
      applyDeliveryReport(deps.db, deps.clock, { providerId: p.MessageSid ?? '', status: p.MessageStatus ?? p.SmsStatus ?? '', errorCode: p.ErrorCode ?? null })
      return new Response(null, { status: 204 })
    }, { detail: { hide: true } })
}

import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { JobIdParams, ListOf, PageQuery } from '../jobs/job.model'
import { listJobTexts } from './list-texts'
import { TextMessage } from './text.model'
import { applyDeliveryReport, handleInboundText } from './inbound'
import { maskPhone, validTwilioSignature } from './providers'
import { requestLogger } from '../platform/http'
import { routeProps, type BodySpec } from '../platform/route-props'

/** Twilio's form posts are a few KiB, media URLs included; anything larger is not Twilio. */
const TWILIO_BODY: BodySpec = { kind: 'form', maxBytes: 64 * 1024 }

const xml = (body: string) => new Response(`<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`, { headers: { 'content-type': 'text/xml; charset=utf-8' } })
const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)

/** The photos (MMS) a customer sent: Twilio passes NumMedia and MediaUrl0..N. */
const mediaUrls = (p: Record<string, string>) => Array.from({ length: Math.min(10, Number(p.NumMedia) || 0) }, (_, i) => p[`MediaUrl${i}`]).filter((u): u is string => !!u)

/** Twilio's webhooks: inbound texts and delivery reports, each checked with X-Twilio-Signature. */
export function textRoutes(deps: RouteDeps) {
  const token = deps.config.twilio.authToken
  /** Checks Twilio's form against its signature and the URL Twilio called (our public URL); a field Twilio never repeats is text. */
  function signed(body: unknown, request: Request, path: string): Record<string, string> | null {
    const params = Object.fromEntries(Object.entries(body as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'))
    return validTwilioSignature(token, `${deps.config.publicUrl}${path}`, params, request.headers.get('x-twilio-signature')) ? params : null
  }
  const refused = () => new Response('signature check failed\n', { status: 403, headers: { 'content-type': 'text/plain' } })
  // Twilio posts from no page of ours (its signature is the proof); errors are plain text.
  // A new object for each route (Elysia writes a route's macro results into the options it is given).
  const callback = () => ({ answers: 'text', sameOrigin: false, accepts: TWILIO_BODY, detail: { hide: true } } as const)
  return new Elysia().use(routeProps)
    .post('/sms/twilio/inbound', ({ request, body }) => {
      const p = signed(body, request, '/sms/twilio/inbound')
      if (!p) return refused()
      const { reply, unmatched } = handleInboundText(
        { db: deps.db, clock: deps.clock, contexts: deps.contexts, replyWindowMs: deps.config.smsReplyWindowMs },
        { from: p.From ?? '', to: p.To ?? '', body: p.Body ?? '', sid: p.MessageSid ?? p.SmsSid ?? null, media: mediaUrls(p) },
      )
      // Nobody would see it otherwise: say so in the log, where the operator looks (the number masked).
      if (unmatched) requestLogger(deps.logger, request).warn({ from: maskPhone(p.From ?? ''), to: p.To, message_sid: p.MessageSid ?? p.SmsSid, body: p.Body }, 'inbound text matched no open or recently finished job of an account that texted this number; not threaded')
      return xml(reply ? `<Message>${escapeXml(reply)}</Message>` : '')
    }, callback())
    .post('/sms/twilio/status', ({ request, body }) => {
      const p = signed(body, request, '/sms/twilio/status')
      if (!p) return refused()
      applyDeliveryReport(deps.db, deps.clock, { providerId: p.MessageSid ?? '', status: p.MessageStatus ?? p.SmsStatus ?? '', errorCode: p.ErrorCode ?? null })
      return new Response(null, { status: 204 })
    }, callback())
}

/** GET /jobs/{id}/texts: what was texted about a job (or recorded only, with the log provider), and what was skipped and why. */
export function jobTextRoutes(auth: AuthPlugin, deps: RouteDeps) {
  return new Elysia({ prefix: '/api/v1' })
    .use(auth)
    .get('/jobs/:id/texts', ({ ctx, params, query }) => listJobTexts(ctx, params.id, query), {
      scope: 'jobs:read',
      params: JobIdParams,
      query: PageQuery,
      response: { 200: ListOf(TextMessage) },
      detail: {
        operationId: 'listJobTexts',
        summary: "A job's texts",
        description: "The customer and driver texts the job caused, oldest first, cursor-paged, each with the timeline event that caused it (event_id) and where it got to: queued, sending, sent, delivered, failed (with error) or skipped (with skip_reason). With the log provider nothing leaves the machine and the texts are read here. A driver's text shows its job link as [driver link] (the link acts as the driver) and its number only to keys with roster:read. An addition to the spec: texts are not timeline events, so webhooks never carry them.",
        tags: ['Jobs'],
      },
    })
}

import { t, type Static } from 'elysia'
import { Cursor, Job } from '../jobs/job.model'
import { JOB_EVENT_TYPES, WEBHOOK_EVENT_TYPES, type JobEventType } from '../jobs/job-events'
import { named, oneOf, queryWholeNumber, wholeNumber } from '../platform/schema'
import { API_VERSION } from '../version'

const strict = { additionalProperties: false } as const
const Timestamp = t.String({ format: 'date-time' })
const EventList = t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: 50, description: `Event types, or ["*"] for all: ${WEBHOOK_EVENT_TYPES.join(', ')}.` })

const endpointFields = {
  object: t.Literal('webhook_endpoint'),
  id: t.String({ examples: ['whk_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }),
  url: t.String(),
  events: t.Array(t.String(), { description: 'The event types it receives, or ["*"] for all.' }),
  status: oneOf(['active', 'paused']),
  paused_reason: t.Nullable(oneOf(['manual', 'failures']), { description: 'Why it is paused (manual: by PATCH; failures: 25 failed attempts in a row), or null while active.' }),
  description: t.Nullable(t.String()),
  consecutive_failures: wholeNumber({ minimum: 0 }),
  site_ids: t.Nullable(t.Array(t.String()), { description: 'The sites whose jobs it receives (those of the key that made it), or null for every site.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}
const SECRET = 'whsec_...: the signing secret, returned only on creation and rotation. Keyed HMAC-SHA256 of "<t>.<raw body>".'

/** A webhook endpoint as the API returns it. */
export const WebhookEndpoint = named('WebhookEndpoint', t.Object({
  ...endpointFields,
  secret: t.Optional(t.String({ description: SECRET })),
}, { description: 'An https URL that receives signed job events.' }))

/** POST /webhooks: the endpoint made, with its secret (always here, never again but on rotation). */
export const CreatedWebhookEndpoint = named('CreatedWebhookEndpoint', t.Object({
  ...endpointFields,
  secret: t.String({ description: SECRET }),
}, { description: 'The endpoint just made, with the secret that signs its deliveries: keep it, it is not shown again.' }))

/** DELETE /webhooks/{id}. */
export const DeletedWebhookEndpoint = named('DeletedWebhookEndpoint', t.Object({
  object: t.Literal('webhook_endpoint'), id: t.String(), deleted: t.Literal(true),
}, { description: 'The endpoint is gone and its undelivered deliveries are cancelled.' }))

/** What an attempt made now (a test ping or a resend) got from the endpoint. */
export const DeliveryOutcome = named('DeliveryOutcome', t.Object({
  delivery_id: t.String({ description: 'dlv_...: the delivery (the same on every attempt of it).' }),
  delivered: t.Boolean({ description: 'True when the endpoint answered 2xx within the timeout.' }),
  response_status: t.Nullable(wholeNumber(), { description: 'The HTTP status, or null when no answer came.' }),
  response_body: t.Nullable(t.String({ description: 'The first 2 KiB.' })),
  duration_ms: wholeNumber({ minimum: 0 }),
  error: t.Nullable(t.String({ description: 'timeout, connect, dns, tls, http, redirect or blocked.' })),
  error_message: t.Nullable(t.String()),
}, { description: 'What the endpoint answered to an attempt made now (a test ping or a resend).' }))

/** One attempt of a delivery, as GET /webhooks/{id}/deliveries lists it. */
export const DeliveryAttempt = named('DeliveryAttempt', t.Object({
  object: t.Literal('delivery_attempt'), id: t.String(), delivery_id: t.String(), event_type: t.String(), attempt: wholeNumber({ minimum: 1 }),
  status: oneOf(['succeeded', 'failed']), request_headers: t.Record(t.String(), t.String()), request_body: t.String(),
  response_status: t.Nullable(wholeNumber()), response_headers: t.Nullable(t.Record(t.String(), t.String())), response_body: t.Nullable(t.String({ description: 'The first 2 KiB.' })),
  duration_ms: wholeNumber({ minimum: 0 }), error: t.Nullable(t.String({ description: 'timeout, connect, dns, tls, http, redirect or blocked.' })), error_message: t.Nullable(t.String()),
  created_at: Timestamp, next_attempt_at: t.Nullable(Timestamp, { description: 'When the delivery is tried again, or null when it will not be.' }),
}, { description: 'One attempt to deliver an event to an endpoint: the request as sent and what came back.' }))

/** POST /webhooks body. */
export const CreateWebhookEndpointBody = named('CreateWebhookEndpointRequest', t.Object({
  url: t.String({ maxLength: 2048, description: 'https only.' }),
  events: EventList,
  description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))),
}, strict))
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>

/** PATCH /webhooks/{id} body. */
export const UpdateWebhookEndpointBody = named('UpdateWebhookEndpointRequest', t.Object({
  url: t.Optional(t.String({ maxLength: 2048 })),
  events: t.Optional(EventList),
  description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))),
  status: t.Optional(oneOf(['active', 'paused'], { description: 'paused holds deliveries; active resumes and sends them oldest first.' })),
  rotate_secret: t.Optional(t.Boolean({ description: 'Mints a new secret (returned in this response). The old one keeps signing for 24 hours: both signatures are sent. A second rotation within them keeps each rotated-out secret signing for its own 24 hours.' })),
}, strict))
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>

/** The {id} of /webhooks/{id} routes. */
export const EndpointIdParams = t.Object({ id: t.String({ description: 'Endpoint id (whk_...).' }) })
/** The ids of a resend. */
export const DeliveryParams = t.Object({ id: t.String({ description: 'Endpoint id (whk_...).' }), delivery_id: t.String({ description: 'Delivery id (dlv_...).' }) })
/** GET /webhooks/{id}/deliveries query. */
export const DeliveriesQuery = t.Object({
  limit: t.Optional(queryWholeNumber({ minimum: 1, maximum: 100, default: 100, description: 'How many attempts a page holds (by default all of the last 100 in one page).' })),
  cursor: t.Optional(Cursor),
}, strict)

// ---- what arrives at an endpoint ------------------------------------------------------------

/** `data.event` of a job event's delivery: the timeline event without `object` and `job_id`. */
export const EventSummary = named('JobEventSummary', t.Object({
  id: t.String({ description: 'evt_...: the timeline event (GET /jobs/{id}/events).' }),
  type: t.String(),
  from: t.Nullable(t.String()),
  to: t.Nullable(t.String()),
  actor: oneOf(['system', 'dispatcher', 'driver', 'customer']),
  detail: t.Record(t.String(), t.Unknown()),
  sequence: wholeNumber({ minimum: 1, description: 'Grows with each event of the job: drop an update whose sequence is lower than one already applied.' }),
  created_at: Timestamp,
}, { description: 'The timeline event a delivery carries (the job is beside it, in data.job).' }))

const envelopeFields = {
  id: t.String({ description: 'dlv_...: the delivery id, the same on every attempt of it. De-duplicate on it.', examples: ['dlv_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }),
  object: t.Literal('event'),
  api_version: t.String({ description: 'The payload version.', examples: [API_VERSION] }),
  account_id: t.String(),
  attempt: wholeNumber({ minimum: 1, description: 'Which attempt of this delivery this is (also in X-SVC-Attempt).' }),
  created_at: t.String({ format: 'date-time', description: 'When the event happened.' }),
}

/** The body POSTed to an endpoint for a job event. */
export const JobWebhookEvent = named('JobWebhookEvent', t.Object({
  ...envelopeFields,
  type: oneOf([...JOB_EVENT_TYPES]),
  data: t.Object({
    job: Job,
    event: EventSummary,
  }, { description: 'data.job is the job as GET /jobs/{id} showed it when the event happened.' }),
}, { description: 'What Towline POSTs to an endpoint for a job event.' }))

/** The body POSTed by POST /webhooks/{id}/test. */
export const PingWebhookEvent = named('PingWebhookEvent', t.Object({
  ...envelopeFields,
  type: t.Literal('ping'),
  data: t.Object({
    job: t.Null(),
    event: t.Object({
      type: t.Literal('ping'),
      from: t.Null(),
      to: t.Null(),
      actor: t.Literal('system'),
      detail: t.Object({ endpoint_id: t.String() }),
      sequence: wholeNumber({ minimum: 0, maximum: 0, description: 'Always 0: a ping is on no timeline.' }),
      created_at: Timestamp,
    }),
  }),
}, { description: 'What POST /webhooks/{id}/test sends: no job, and an event that is on no timeline.' }))

/** What each job event type means; the OpenAPI document's webhooks section is made from it. */
export const JOB_EVENT_DOCS: Record<JobEventType, string> = {
  'job.created': 'A job was created (POST /jobs, or CSV import: detail.imported). detail: status, imported, external_ref.',
  'job.status_changed': 'The status changed, whatever caused it (from, to, actor). Sent beside the event that caused it (assign, unassign, reopen).',
  'job.assigned': 'A unit took the job (detail.unit); a job that was pending or confirmed is dispatched too.',
  'job.reassigned': 'Another unit took the job from the one that held it (detail.unit, detail.previous_unit).',
  'job.unassigned': 'The unit was taken off the job (detail.unit); the job went back to confirmed.',
  'job.quote_updated': 'quote_cents changed (detail.quote_cents, detail.previous_quote_cents).',
  'job.eta_updated': 'eta_at changed (detail.eta_at, detail.previous_eta_at).',
  'job.note_added': 'A note was added (detail.note_id, text, customer_visible).',
  'job.customer_located': 'The customer shared their location from the tracking page (actor customer; detail.lat, lng, accuracy_m).',
  'job.photo_added': 'The driver (driver page) or a dispatcher (job page) added a photo (detail.photo_id, content_type, bytes, by); the image itself stays in the dashboard.',
  'job.payment_updated': 'A payment on the job: final_price_cents or payment_method changed (detail.final_price_cents, detail.payment_method; no invoice_id). Or an invoice raised against the job (dashboard) was issued, paid on, voided or written off: detail.invoice_id, invoice_number (INV-0001), total_cents, amount_paid_cents (after the step; a payment adds amount_cents and method), `from` the invoice\'s status before (null when issued), `to` its status after: issued, paid, void or written_off.',
  'job.driver_acknowledged': 'The driver acknowledged the job on the driver page (actor driver, detail.unit_id); once per hand-over.',
  'job.customer_message': "The customer texted back (detail.via sms, text, from, message_sid, media_urls when they sent photos) or wrote from the tracking page (detail.via tracking_page, text).",
  'job.rating_received': 'The customer rated the completed job on the tracking page (detail.rating 1 to 5, comment, rated_at); one per run.',
  'job.payment_link_opened': 'The customer opened the tracking page\'s Pay link of an issued, unpaid invoice (actor customer; detail.invoice_id, invoice_number, total_cents, amount_due_cents).',
  'job.archived': 'A dispatcher archived the job (towline jobs archive).',
  'job.restored': 'An archived job was restored (towline jobs restore).',
  'job.signature_captured': "The driver captured a signature on the driver page (detail.signer_name, detail.signature_id, unit_id); the image itself stays in the dashboard.",
  'job.reopened': 'A finished job was reopened (detail.reason, reopen_count, previous_reopen_count and what the ended run had: cancel_reason, rating, rating_comment, rated_at).',
  'job.updated': 'Fields without an event of their own changed (detail.fields names them; ["tracking_url"] when a new tracking link replaced the old one, which then answers 410).',
}

import { Elysia, t } from 'elysia'
import type { RouteDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { ListOf, PageQuery } from '../jobs/job.model'
import { WEBHOOK_EVENT_TYPES } from '../jobs/job-events'
import { oneOf } from '../platform/schema'
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, updateEndpoint } from './manage-endpoints'
import { listAttempts, pingEndpoint, resendDelivery } from './send-now'
import { endpointView } from './webhook.queries'
import { pageLimit } from '../platform/paging'
import { IdempotencyHeaders, idempotencyOwner, reply, withIdempotencyAsync } from '../idempotency/idempotency'

const strict = { additionalProperties: false } as const
const EventList = t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: 50, description: `Event types, or ["*"] for all: ${WEBHOOK_EVENT_TYPES.join(', ')}.` })
const Endpoint = t.Object({
  object: t.Literal('webhook_endpoint'),
  id: t.String({ examples: ['whk_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }),
  url: t.String(),
  events: t.Array(t.String()),
  status: oneOf(['active', 'paused']),
  paused_reason: t.Nullable(oneOf(['manual', 'failures'])),
  description: t.Nullable(t.String()),
  consecutive_failures: t.Integer(),
  site_ids: t.Nullable(t.Array(t.String()), { description: 'The sites whose jobs it receives (those of the key that made it), or null for every site.' }),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
  secret: t.Optional(t.String({ description: 'whsec_...: returned only on creation and rotation. Keyed HMAC-SHA256 of "<t>.<raw body>".' })),
})
const AttemptOutcome = t.Object({
  delivery_id: t.String(), delivered: t.Boolean(), response_status: t.Nullable(t.Integer()), response_body: t.Nullable(t.String()),
  duration_ms: t.Integer(), error: t.Nullable(t.String()), error_message: t.Nullable(t.String()),
})
const Attempt = t.Object({
  object: t.Literal('delivery_attempt'), id: t.String(), delivery_id: t.String(), event_type: t.String(), attempt: t.Integer(),
  status: oneOf(['succeeded', 'failed']), request_headers: t.Record(t.String(), t.String()), request_body: t.String(),
  response_status: t.Nullable(t.Integer()), response_headers: t.Nullable(t.Record(t.String(), t.String())), response_body: t.Nullable(t.String()),
  duration_ms: t.Integer(), error: t.Nullable(t.String({ description: 'timeout, connect, dns, tls, http, redirect or blocked.' })), error_message: t.Nullable(t.String()),
  created_at: t.String({ format: 'date-time' }), next_attempt_at: t.Nullable(t.String({ format: 'date-time' })),
})
const IdParams = t.Object({ id: t.String({ description: 'Endpoint id (whk_...).' }) })

/** The /webhooks endpoints (scope webhooks:manage). */
export function webhookRoutes(auth: AuthPlugin, deps: RouteDeps) {
  const manage = { db: deps.db, clock: deps.clock, allowPrivate: deps.config.webhookAllowPrivate, resolve: deps.webhookSend.resolve, isAllowedAddress: deps.webhookSend.isAllowedAddress }
  const sendNow = { db: deps.db, clock: deps.clock, schedule: deps.config.webhookRetryScheduleMs, send: deps.webhookSend, links: deps.links }
  const tags = ['Webhooks']
  return new Elysia({ prefix: '/api/v1' }).use(auth)
    .get('/webhooks', ({ ctx, query }) => listEndpoints(ctx, query), {
      scope: 'webhooks:manage',
      query: PageQuery,
      response: { 200: ListOf(Endpoint) },
      detail: { summary: 'List webhook endpoints', description: 'Oldest first, cursor-paged like every list. A key limited to sites sees the endpoints made for its sites.', tags },
    })
    .post('/webhooks', async ({ ctx, body, headers, set }) => reply(set, await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: '/webhooks', body }, async () => {
      const e = await createEndpoint(manage, ctx, body)
      return { status: 201, body: { ...endpointView(e), secret: e.secret } }
    })), {
      scope: 'webhooks:manage',
      headers: IdempotencyHeaders,
      body: t.Object({ url: t.String({ maxLength: 2048, description: 'https only.' }), events: EventList, description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))) }, strict),
      response: { 201: Endpoint },
      detail: { summary: 'Add a webhook endpoint', description: 'https URLs only. Loopback, private, link-local and other non-public targets are refused (422 on url) however the host is written (IPv4-mapped, NAT64 or 6to4 IPv6; decimal, hex, octal or short IPv4; a trailing dot), and so is a name with any such address, unless the operator allows private targets. Every delivery attempt checks the host again and connects to the address it checked. The secret is returned once, here. An endpoint made by a key limited to sites receives the jobs of those sites only. An account has at most 100 endpoints.', tags, 'x-error-codes': ['limit_exceeded', 'idempotency_key_reused', 'idempotency_key_in_use'], 'x-success-description': 'The endpoint was added; store its secret now.' },
    })
    .get('/webhooks/:id', ({ ctx, params }) => getEndpoint(ctx, params.id), {
      scope: 'webhooks:manage', params: IdParams, response: { 200: Endpoint }, detail: { summary: 'Get a webhook endpoint', tags },
    })
    .patch('/webhooks/:id', async ({ ctx, params, body }) => {
      const { endpoint, secret } = await updateEndpoint(manage, ctx, params.id, body)
      return secret ? { ...endpointView(endpoint), secret } : endpointView(endpoint)
    }, {
      scope: 'webhooks:manage',
      params: IdParams,
      body: t.Object({
        url: t.Optional(t.String({ maxLength: 2048 })),
        events: t.Optional(EventList),
        description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))),
        status: t.Optional(oneOf(['active', 'paused'], { description: 'paused holds deliveries; active resumes and sends them oldest first.' })),
        rotate_secret: t.Optional(t.Boolean({ description: 'Mints a new secret (returned in this response). The old one keeps signing for 24 hours: both signatures are sent.' })),
      }, strict),
      response: { 200: Endpoint },
      detail: { summary: 'Change, pause, resume or rotate an endpoint', tags },
    })
    .delete('/webhooks/:id', ({ ctx, params }) => {
      const e = deleteEndpoint(manage, ctx, params.id)
      return { object: 'webhook_endpoint' as const, id: e.id, deleted: true as const }
    }, {
      scope: 'webhooks:manage', params: IdParams,
      response: { 200: t.Object({ object: t.Literal('webhook_endpoint'), id: t.String(), deleted: t.Literal(true) }) },
      detail: { summary: 'Delete an endpoint', description: 'Its undelivered deliveries are cancelled.', tags },
    })
    .post('/webhooks/:id/test', async ({ ctx, params, headers, set }) => reply(set, await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: `/webhooks/${params.id}/test`, body: null },
      async () => ({ status: 200, body: await pingEndpoint(sendNow, ctx, params.id) }))), {
      scope: 'webhooks:manage', params: IdParams, headers: IdempotencyHeaders, response: { 200: AttemptOutcome },
      detail: { summary: 'Send a ping now', description: 'Sends a signed ping event to the endpoint (even if paused) and returns what it answered. Pings never count toward pausing.', tags, 'x-error-codes': ['idempotency_key_reused', 'idempotency_key_in_use'] },
    })
    .get('/webhooks/:id/deliveries', ({ ctx, params, query }) => listAttempts(ctx, params.id, pageLimit(query.limit ?? '100')), {
      scope: 'webhooks:manage',
      params: IdParams,
      query: t.Object({ limit: t.Optional(t.String({ pattern: '^[0-9]+$', description: '1 to 100, default 100.' })) }, strict),
      response: { 200: ListOf(Attempt) },
      detail: { summary: 'The last delivery attempts', description: 'The last 100 attempts, newest first, with the request as sent and the answer (first 2 KiB).', tags },
    })
    .post('/webhooks/:id/deliveries/:delivery_id/retry', async ({ ctx, params, headers, set }) => reply(set, await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: `/webhooks/${params.id}/deliveries/${params.delivery_id}/retry`, body: null },
      async () => ({ status: 200, body: await resendDelivery(sendNow, ctx, params.id, params.delivery_id) }))), {
      scope: 'webhooks:manage',
      headers: IdempotencyHeaders,
      params: t.Object({ id: t.String(), delivery_id: t.String({ description: 'Delivery id (dlv_...).' }) }),
      response: { 200: AttemptOutcome },
      detail: { summary: 'Resend one delivery now', description: 'Same delivery id, next attempt number; returns what the endpoint answered. A delivery being attempted at this moment answers 409 delivery_in_flight. A failed resend leaves the delivery\'s own retries as they were.', tags, 'x-error-codes': ['delivery_in_flight', 'idempotency_key_reused', 'idempotency_key_in_use'] },
    })
}

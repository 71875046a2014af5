import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { ListOf, PageQuery } from '../jobs/job.model'
import {
  CreateWebhookEndpointBody, CreatedWebhookEndpoint, DeletedWebhookEndpoint, DeliveriesQuery, DeliveryAttempt, DeliveryOutcome, DeliveryParams, EndpointIdParams,
  UpdateWebhookEndpointBody, WebhookEndpoint,
} from './webhook.model'
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, updateEndpoint, type EndpointDeps } from './manage-endpoints'
import { listAttempts, pingEndpoint, resendDelivery, type SendNowDeps } from './send-now'
import { endpointView } from './webhook.queries'
import { pageLimit } from '../platform/paging'
import { requestInfo } from '../platform/request-info'
import { IdempotencyHeaders, idempotencyOwner, reply, withIdempotencyAsync } from '../idempotency/idempotency'

/** What the webhook operations run with (the address policy, the send settings), for the API's routes and the Developers pages alike. */
export function webhookDeps(deps: RouteDeps): { manage: EndpointDeps; sendNow: SendNowDeps } {
  return {
    manage: { db: deps.db, clock: deps.clock, allowPrivate: deps.config.webhookAllowPrivate, resolve: deps.webhookSend.resolve, isAllowedAddress: deps.webhookSend.isAllowedAddress },
    sendNow: { db: deps.db, clock: deps.clock, schedule: deps.config.webhookRetryScheduleMs, send: deps.webhookSend, links: deps.links },
  }
}

/**
 * Gives a request that sends to an endpoint now (a test ping, a resend) the time the send may
 * take, the webhook timeout and a little for DNS and connecting, before Bun's idle timer would
 * cut it off (it runs while a handler works without answering).
 */
export function giveSendTime(deps: RouteDeps, request: Request): void {
  requestInfo(request).allowTime?.(deps.webhookSend.timeoutMs / 1000 + 5)
}

/** The /webhooks endpoints (scope webhooks:manage). */
export function webhookRoutes(auth: AuthPlugin, deps: RouteDeps) {
  const { manage, sendNow } = webhookDeps(deps)
  const tags = ['Webhooks']
  return new Elysia({ prefix: '/api/v1' }).use(auth)
    .get('/webhooks', ({ ctx, query }) => listEndpoints(ctx, query), {
      scope: 'webhooks:manage',
      query: PageQuery,
      response: { 200: ListOf(WebhookEndpoint) },
      detail: { operationId: 'listWebhookEndpoints', summary: 'List webhook endpoints', description: 'Oldest first, cursor-paged like every list. A key limited to sites sees the endpoints made for its sites.', tags },
    })
    .post('/webhooks', async ({ ctx, body, headers, set }) => reply(set, await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: '/webhooks', body }, async () => {
      const e = await createEndpoint(manage, ctx, body)
      return { status: 201, body: { ...endpointView(e), secret: e.secret } }
    })), {
      scope: 'webhooks:manage',
      headers: IdempotencyHeaders,
      body: CreateWebhookEndpointBody,
      response: { 201: CreatedWebhookEndpoint },
      detail: { operationId: 'createWebhookEndpoint', summary: 'Add a webhook endpoint', description: 'https URLs only. Loopback, private, link-local and other non-public targets are refused (422 on url) however the host is written (IPv4-mapped, NAT64 or 6to4 IPv6; decimal, hex, octal or short IPv4; a trailing dot), and so is a name with any such address, unless the operator allows private targets. Every delivery attempt checks the host again and connects to the address it checked. The secret is returned once, here (and in a replay of this request under its Idempotency-Key). An endpoint made by a key limited to sites receives the jobs of those sites only. An account has at most 100 endpoints.', tags, 'x-error-codes': ['limit_exceeded', 'idempotency_key_reused', 'idempotency_key_in_use'], 'x-success-description': 'The endpoint was added; store its secret now.' },
    })
    .get('/webhooks/:id', ({ ctx, params }) => getEndpoint(ctx, params.id), {
      scope: 'webhooks:manage', params: EndpointIdParams, response: { 200: WebhookEndpoint }, detail: { operationId: 'getWebhookEndpoint', summary: 'Get a webhook endpoint', description: 'One endpoint (its secret is never shown again).', tags },
    })
    .patch('/webhooks/:id', async ({ ctx, params, body }) => {
      const { endpoint, secret } = await updateEndpoint(manage, ctx, params.id, body)
      return secret ? { ...endpointView(endpoint), secret } : endpointView(endpoint)
    }, {
      scope: 'webhooks:manage',
      params: EndpointIdParams,
      body: UpdateWebhookEndpointBody,
      response: { 200: WebhookEndpoint },
      detail: {
        operationId: 'updateWebhookEndpoint', summary: 'Change, pause, resume or rotate an endpoint',
        description: 'Changes any of url, events, description and status; rotate_secret mints a new secret, returned in this response only. Pausing holds deliveries; resuming sends them oldest first and resets consecutive_failures.',
        tags,
      },
    })
    .delete('/webhooks/:id', ({ ctx, params }) => {
      const e = deleteEndpoint(manage, ctx, params.id)
      return { object: 'webhook_endpoint' as const, id: e.id, deleted: true as const }
    }, {
      scope: 'webhooks:manage', params: EndpointIdParams,
      response: { 200: DeletedWebhookEndpoint },
      detail: { operationId: 'deleteWebhookEndpoint', summary: 'Delete an endpoint', description: 'Its undelivered deliveries are cancelled.', tags },
    })
    .post('/webhooks/:id/test', async ({ ctx, params, headers, set, request }) => reply(set, await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: `/webhooks/${params.id}/test`, body: null },
      async () => { giveSendTime(deps, request); return { status: 200, body: await pingEndpoint(sendNow, ctx, params.id) } })), {
      scope: 'webhooks:manage', params: EndpointIdParams, headers: IdempotencyHeaders, response: { 200: DeliveryOutcome },
      detail: { operationId: 'testWebhookEndpoint', summary: 'Send a ping now', description: 'Sends a signed ping event to the endpoint (even if paused) and returns what it answered. Pings never count toward pausing.', tags, 'x-error-codes': ['idempotency_key_reused', 'idempotency_key_in_use'] },
    })
    .get('/webhooks/:id/deliveries', ({ ctx, params, query }) => listAttempts(ctx, params.id, pageLimit(query.limit ?? '100'), query.cursor), {
      scope: 'webhooks:manage',
      params: EndpointIdParams,
      query: DeliveriesQuery,
      response: { 200: ListOf(DeliveryAttempt) },
      detail: { operationId: 'listWebhookDeliveries', summary: 'The last delivery attempts', description: 'The last 100 attempts, newest first, with the request as sent and the answer (first 2 KiB); a smaller limit pages through them with cursor.', tags },
    })
    .post('/webhooks/:id/deliveries/:delivery_id/retry', async ({ ctx, params, headers, set, request }) => reply(set, await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: `/webhooks/${params.id}/deliveries/${params.delivery_id}/retry`, body: null },
      async () => { giveSendTime(deps, request); return { status: 200, body: await resendDelivery(sendNow, ctx, params.id, params.delivery_id) } })), {
      scope: 'webhooks:manage',
      headers: IdempotencyHeaders,
      params: DeliveryParams,
      response: { 200: DeliveryOutcome },
      detail: { operationId: 'retryWebhookDelivery', summary: 'Resend one delivery now', description: 'Same delivery id, next attempt number; returns what the endpoint answered. A delivery being attempted at this moment answers 409 delivery_in_flight. A failed resend leaves the delivery\'s own retries as they were.', tags, 'x-error-codes': ['delivery_in_flight', 'idempotency_key_reused', 'idempotency_key_in_use'] },
    })
}

/**
 * What the OpenAPI document says beyond the routes: the API's description, its tags and
 * scopes, and the webhooks it sends. platform/openapi.ts turns it and the routes into the
 * document served at /api/v1/openapi.json.
 */
import { t, type AnyElysia } from 'elysia'
import { SCOPE_MEANINGS } from './accounts/scopes'
import { JOB_EVENT_TYPES } from './jobs/job-events'
import { buildOpenApiDocument, type WebhookSpec } from './platform/openapi'
import { JOB_EVENT_DOCS, JobWebhookEvent, PingWebhookEvent } from './webhooks/webhook.model'
import { API_VERSION, VERSION } from './version'


const TAGS = [
  { name: 'Account', description: 'The API key making the request.' },
  { name: 'Jobs', description: 'Towing jobs: create, change status, assign units, notes, reopen; the timeline of events and the texts each job caused.' },
  { name: 'Roster', description: 'Units (trucks and their drivers) with their last shared position.' },
  { name: 'Services', description: 'The services the company offers and their rate cards.' },
  { name: 'Commercial accounts', description: 'The directory of motor clubs, police agencies, fleets and other commercial accounts the company works for: names, kinds and contacts (never rates, billing addresses or internal notes). Jobs name theirs in commercial_account.' },
  { name: 'Webhooks', description: 'Endpoints that receive signed job events, their delivery attempts, and the events themselves (the webhooks section).' },
]

const ANSWERS = {
  '2XX': 'Delivered: any 2xx within 10 seconds. Answer first and do the work afterwards; the body is kept (first 2 KiB) but not read.',
  default: 'Anything else is a failure: another status, a redirect (never followed), no answer within 10 seconds, a connection, DNS or TLS error. ' +
    'The delivery is retried six times, at 1 minute, 10 minutes, 1 hour, 4 hours, 12 hours and 33 hours after the first attempt ' +
    '(plus up to 10% jitter; the operator may configure the schedule). A 429 or 503 with Retry-After is waited for at least that long. ' +
    'After 25 failed attempts in a row the endpoint is paused and its deliveries held until it is resumed.',
}
const PING_ANSWERS = {
  '2XX': 'Delivered: POST /webhooks/{id}/test reports delivered true.',
  default: 'Not delivered: the test reports what came back. A ping is never retried and never counts toward pausing.',
}

const pascal = (type: string) => type.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')

const WEBHOOKS: WebhookSpec[] = [
  {
    name: 'ping',
    operationId: 'receivePing',
    summary: 'ping',
    description: 'Sent by POST /webhooks/{id}/test only, to check an endpoint and its signature check.',
    tags: ['Webhooks'],
    payload: PingWebhookEvent,
    responses: PING_ANSWERS,
  },
  ...JOB_EVENT_TYPES.map((type) => ({
    name: type,
    operationId: `receive${pascal(type)}`,
    summary: type,
    description: `${JOB_EVENT_DOCS[type]} data.job is the job when it happened; data.event the timeline event.`,
    tags: ['Webhooks'],
    payload: t.Intersect([JobWebhookEvent, t.Object({ type: t.Literal(type) })]),
    responses: ANSWERS,
  })),
]

const WEBHOOK_HEADERS = [
  {
    name: 'X-SVC-Signature',
    description: '`t=<unix seconds>,v1=<hex>[,v1=<hex>]`: each v1 is the lowercase hex HMAC-SHA256, keyed with the whole `whsec_...` secret, of `<t>.<raw body>`. ' +
      'Two v1 values for 24 hours after a rotation (new secret first). Every attempt is signed afresh. Verify against the raw bytes before parsing, and refuse a t far from now.',
    schema: t.String({ pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' }),
    example: 't=1795338843,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
  },
  { name: 'X-SVC-Delivery-Id', description: 'The delivery id (dlv_...), as in the body: the same on every attempt.', schema: t.String() },
  { name: 'X-SVC-Event-Type', description: 'The event type, as in the body.', schema: t.String() },
  { name: 'X-SVC-Attempt', description: 'Which attempt this is: 1, then 2 ... on retries and resends.', schema: t.String({ pattern: '^[1-9][0-9]*$' }) },
  { name: 'User-Agent', description: 'Towline-Webhooks/<server version>.', schema: t.String() },
]

/** Builds the OpenAPI document of the app's /api/v1 routes, served at /api/v1/openapi.json. */
export function buildApiDocument(app: AnyElysia, publicUrl: string) {
  return buildOpenApiDocument(app, {
    info: {
      title: 'Towline API',
      version: API_VERSION,
      description:
        'Towing dispatch jobs, their timeline, units, services, the commercial accounts directory and webhooks. JSON in, JSON out. ' +
        'Authenticate with `Authorization: Bearer svc_live_...`; each operation names the scope it needs. ' +
        'Errors are `{ error: { code, message, details } }`; branch on `error.code`. ' +
        'Every response carries a `Request-Id` header. Clients must tolerate unknown fields.\n\n' +
        `API version ${API_VERSION} (the paths' /v1), as webhook payloads carry it in \`api_version\`. Served by Towline ${VERSION}.`,
      contact: { name: 'The operator of this installation', url: publicUrl },
      license: { name: 'MIT', identifier: 'MIT' },
    },
    serverUrl: `${publicUrl}/api/v1`,
    basePath: '/api/v1',
    tags: TAGS,
    scopes: SCOPE_MEANINGS,
    authDescription: 'An API key, `svc_live_` followed by 32 characters, created with `towline keys create --scopes ...`.',
    webhookHeaders: WEBHOOK_HEADERS,
    webhooks: WEBHOOKS,
  })
}

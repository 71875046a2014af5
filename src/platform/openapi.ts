import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import { ERROR_CATALOG, type ErrorCode } from './errors'

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CATALOG), description: 'Branch on this.' },
        message: { type: 'string', description: 'The sentence a dispatcher would have seen.' },
        details: {
          type: 'object',
          description: 'Repeats message as database_message, with fields worth branching on.',
          required: ['database_message'],
          properties: { database_message: { type: 'string' } },
          additionalProperties: true,
        },
      },
    },
  },
}

const RATE_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests of this kind (read or write) allowed per minute for the key.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests of this kind left in the current minute.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) at which the quota is full again.', schema: { type: 'integer' } },
}
const REQUEST_ID_HEADER = { 'Request-Id': { description: 'Identifies the request in the service logs.', schema: { type: 'string' } } }

/** Codes every authenticated operation can answer with. */
const AUTH_ERRORS: ErrorCode[] = ['unauthorized', 'insufficient_scope', 'rate_limited', 'internal_error']
const BODY_ERRORS: ErrorCode[] = ['invalid_json', 'payload_too_large', 'validation_failed']

function errorResponses(codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const c of new Set(codes)) {
    const s = ERROR_CATALOG[c].status
    byStatus.set(s, [...(byStatus.get(s) ?? []), c])
  }
  const out: Record<string, unknown> = {}
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CATALOG[c].when}`).join(' '),
      headers: status === 429 ? { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } }, ...RATE_HEADERS, ...REQUEST_ID_HEADER } : REQUEST_ID_HEADER,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    }
  }
  return out
}

/** Removes typebox's symbol keys and Elysia-only markers so a schema is plain JSON Schema. */
function plain(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema))
}

/**
 * Builds the OpenAPI 3.1 document from the routes themselves, then adds what Elysia does not
 * infer: JSON-only request bodies, the bearer scheme, and every error response per operation.
 */
export function buildOpenApiDocument(app: AnyElysia, info: { version: string; publicUrl: string }) {
  const generated = toOpenAPISchema(app, undefined, undefined, undefined, '3.1.2' as any) as any
  const paths: Record<string, Record<string, any>> = {}
  for (const route of (app as any).routes as { method: string; path: string; hooks: any }[]) {
    if (!route.path.startsWith('/api/v1/') || route.hooks?.detail?.hide) continue
    const method = route.method.toLowerCase()
    const fullPath = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const op = { ...(generated.paths?.[fullPath]?.[method] ?? {}) }
    // Paths are relative to the server URL, which already ends in /api/v1, as in the spec.
    const docPath = fullPath.slice('/api/v1'.length)
    const codes: ErrorCode[] = []
    if (op['x-required-scope']) codes.push(...AUTH_ERRORS)
    if (route.hooks?.body) {
      op.requestBody = { required: true, content: { 'application/json': { schema: plain(route.hooks.body) } } }
      codes.push(...BODY_ERRORS)
    }
    if (route.hooks?.query) codes.push('validation_failed')
    if (docPath.includes('{')) codes.push('not_found')
    codes.push(...((op['x-error-codes'] as ErrorCode[] | undefined) ?? []))
    const responses = { ...(op.responses ?? {}) }
    for (const [status, r] of Object.entries(responses)) {
      const resp = r as any
      if (resp.description?.startsWith('Response for status')) resp.description = op['x-success-description'] ?? 'Success.'
      if (op['x-required-scope']) resp.headers = { ...RATE_HEADERS, ...REQUEST_ID_HEADER }
      responses[status] = resp
    }
    if (!Object.keys(responses).length) responses['200'] = { description: 'Success.' }
    Object.assign(responses, errorResponses(codes))
    op.responses = responses
    delete op['x-success-description']
    ;(paths[docPath] ??= {})[method] = op
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Towline API',
      version: info.version,
      description:
        'Towing dispatch jobs, their timeline, units, services and webhooks. JSON in, JSON out. ' +
        'Authenticate with `Authorization: Bearer svc_live_...`; each operation names the scope it needs. ' +
        'Errors are `{ error: { code, message, details } }`; branch on `error.code`. ' +
        'Every response carries a `Request-Id` header. Clients must tolerate unknown fields.',
    },
    servers: [{ url: `${info.publicUrl}`, description: 'This installation' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: { ...(generated.components?.schemas ?? {}), Error: ERROR_SCHEMA },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key, `svc_live_` followed by 32 characters, created with `towline keys create`.' },
      },
    },
  }
}

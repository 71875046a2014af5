/**
 * The OpenAPI 3.1 document, made from the routes themselves: each route's typebox schemas
 * (params, query, headers, body, responses) and its `detail` (operationId, summary,
 * description, tags, x-required-scope, x-error-codes). Schemas given a name with `named()`
 * are listed once in components.schemas and referred to by $ref; error responses come from
 * the error catalog, so the document declares every status an operation can answer.
 */
import type { AnyElysia } from 'elysia'
import { ERROR_CATALOG, type ErrorCode } from './errors'
import { documentedAs, schemaName } from './schema'

type Json = Record<string, any>

/** One entry of the document's webhooks section: a request the service sends. */
export interface WebhookSpec {
  /** The key in `webhooks` (the event type). */
  name: string
  operationId: string
  summary: string
  description: string
  tags: string[]
  /** The typebox schema of the JSON body. */
  payload: unknown
  /** What the receiver's answers mean, by status or range (`2XX`, `default`). */
  responses: Record<string, string>
}

/** What the document says beyond the routes: prose, tags, scopes and the webhooks the service sends. */
export interface DocumentSpec {
  info: Json
  /** The API's base URL; operation paths are relative to it. */
  serverUrl: string
  /** The path prefix of the documented routes (the server URL's path). */
  basePath: string
  tags: { name: string; description: string }[]
  /** Every scope and what it allows; each operation names the one it needs in x-required-scope. */
  scopes: Record<string, string>
  /** The bearer scheme's description. */
  authDescription: string
  /** The headers of every webhook request, by name. */
  webhookHeaders: { name: string; description: string; schema: unknown; example?: string }[]
  webhooks: WebhookSpec[]
}

const ERROR_SCHEMA = {
  type: 'object',
  description: 'Every error: branch on error.code.',
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
          description: 'Repeats message as database_message, with fields worth branching on (required_scope, retry_after_seconds, existing_job_id, from, to, reason ...).',
          required: ['database_message'],
          properties: {
            database_message: { type: 'string' },
            fields: {
              type: 'array',
              description: 'validation_failed: what is wrong, at most 10 problems.',
              items: {
                type: 'object',
                required: ['path', 'message'],
                properties: { path: { type: 'string', examples: ['customer.name'] }, message: { type: 'string' } },
              },
            },
          },
          additionalProperties: true,
        },
      },
    },
  },
}

const HEADERS = {
  RequestId: { description: 'Identifies the request in the service logs (a plain Request-Id sent by the caller is echoed).', schema: { type: 'string' } },
  RateLimitLimit: { description: 'Requests of this kind (read or write) allowed per minute for the key.', schema: { type: 'integer' } },
  RateLimitRemaining: { description: 'Requests of this kind left in the current minute.', schema: { type: 'integer' } },
  RateLimitReset: { description: 'Unix time (seconds) at which the quota is full again.', schema: { type: 'integer' } },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  IdempotentReplayed: { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
  WwwAuthenticate: { description: 'The bearer challenge (with the missing scope on 403).', schema: { type: 'string' } },
}
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` })
const RATE_HEADERS = { 'X-RateLimit-Limit': header('RateLimitLimit'), 'X-RateLimit-Remaining': header('RateLimitRemaining'), 'X-RateLimit-Reset': header('RateLimitReset') }

/** Turns typebox schemas into OpenAPI 3.1 schemas, collecting the named ones as components. */
class SchemaSet {
  readonly components: Record<string, Json> = { Error: ERROR_SCHEMA }
  private readonly sources = new Map<string, unknown>()

  /** The document form of a schema: a $ref when it is named. */
  ref(schema: unknown): Json {
    return this.convert(schema, false)
  }

  private define(name: string, schema: unknown) {
    const known = this.sources.get(name)
    if (known === schema) return
    const converted = this.convert(schema, true)
    if (known === undefined) {
      this.sources.set(name, schema)
      this.components[name] = converted
    } else if (JSON.stringify(converted) !== JSON.stringify(this.components[name])) {
      // A schema derived from a named one (t.Omit, t.Partial) keeps its name unless renamed.
      throw new Error(`two different schemas are named ${name}: name the derived one with named()`)
    }
  }

  private convert(schema: unknown, root: boolean): any {
    if (Array.isArray(schema)) return schema.map((s) => this.convert(s, false))
    if (!schema || typeof schema !== 'object') return schema
    const name = schemaName(schema)
    if (name && !root) {
      if (name === 'Error') throw new Error('the schema name Error is taken by the error shape')
      this.define(name, schema)
      return { $ref: `#/components/schemas/${name}` }
    }
    const shown = documentedAs(schema)
    if (shown) return structuredClone(shown)
    const s = schema as Json
    if (Array.isArray(s.anyOf) && s.anyOf.some((b: Json) => b?.type === 'string' && (b.format === 'integer' || b.format === 'numeric'))) {
      throw new Error("Elysia's t.Integer/t.Numeric accept and document strings; use wholeNumber() from platform/schema")
    }
    const out: Json = {}
    // Object.entries skips typebox's symbol keys (Kind, Optional) and the schema's name.
    for (const [key, value] of Object.entries(s)) {
      if (key === 'nullable') continue // Elysia's OpenAPI 3.0 marker; the null is in anyOf already
      if (key === 'noValidate') continue // tells Elysia our own checks run instead (app.ts); not part of the schema
      if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, this.convert(v, false)]))
      else if (key === 'patternProperties') {
        const entries = Object.entries(value as Json)
        // t.Record(t.String(), X) is "any key": additionalProperties says so in every tool.
        if (entries.length === 1 && entries[0]![0] === '^(.*)$') {
          const item = entries[0]![1]
          out.additionalProperties = item && typeof item === 'object' && Object.keys(item).length === 0 ? true : this.convert(item, false)
        } else out.patternProperties = Object.fromEntries(entries.map(([k, v]) => [k, this.convert(v, false)]))
      } else if (['items', 'additionalProperties', 'not', 'contains'].includes(key) && value && typeof value === 'object') out[key] = this.convert(value, false)
      else if (['anyOf', 'allOf', 'oneOf', 'prefixItems'].includes(key) && Array.isArray(value)) out[key] = value.map((v) => this.convert(v, false))
      else out[key] = structuredClone(value)
    }
    return nullableAsTypeList(out)
  }
}

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean'])

/** `anyOf: [{type: string, ...}, {type: null}]` reads better as `type: [string, null]` (an enum gains null too). */
function nullableAsTypeList(schema: Json): Json {
  const branches = schema.anyOf
  if (!Array.isArray(branches) || branches.length !== 2) return schema
  const nullAt = branches.findIndex((b: Json) => b && b.type === 'null' && Object.keys(b).length === 1)
  if (nullAt < 0) return schema
  const other = branches[1 - nullAt] as Json
  if (typeof other.type !== 'string' || !PRIMITIVES.has(other.type) || 'const' in other || '$ref' in other) return schema
  const { anyOf: _, ...rest } = schema
  const merged: Json = { ...other, ...rest, type: [other.type, 'null'] }
  if (Array.isArray(other.enum)) merged.enum = [...other.enum, null]
  return merged
}

const CAMEL_VERB_NOUN = /^[a-z]+(?:[A-Z][a-z0-9]*)+$/
const titleCase = (h: string) => h.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('-')

/** The error codes an operation can answer beyond its own x-error-codes, from what it takes. */
function errorCodesOf(method: string, hooks: Json, hasPathParams: boolean): ErrorCode[] {
  const codes: ErrorCode[] = []
  if (hooks.detail?.['x-required-scope']) codes.push('unauthorized', 'insufficient_scope', 'rate_limited')
  // Every API request with a body has it read as one JSON object under the cap, route schema or not.
  if (method !== 'get') codes.push('invalid_json', 'payload_too_large', 'validation_failed')
  // An authenticated route refuses query parameters it does not declare, declaring none included.
  if (hooks.query || hooks.headers || hooks.detail?.['x-required-scope']) codes.push('validation_failed')
  if (hasPathParams) codes.push('not_found')
  codes.push(...((hooks.detail?.['x-error-codes'] as ErrorCode[] | undefined) ?? []), 'internal_error')
  return codes
}

function errorResponses(codes: ErrorCode[], authenticated: boolean) {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const c of new Set(codes)) {
    const s = ERROR_CATALOG[c].status
    byStatus.set(s, [...(byStatus.get(s) ?? []), c])
  }
  const out: Record<string, Json> = {}
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers: Json = { 'Request-Id': header('RequestId') }
    // The key is counted before its scope is checked: every answer but 401 carries its quota.
    if (authenticated && status !== 401) Object.assign(headers, RATE_HEADERS)
    if (status === 401 || status === 403) headers['WWW-Authenticate'] = header('WwwAuthenticate')
    if (status === 429) headers['Retry-After'] = header('RetryAfter')
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CATALOG[c].when}`).join(' '),
      headers,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    }
  }
  return out
}

/** The parameters of one `in` from a typebox object schema. */
function parametersOf(schemas: SchemaSet, object: Json | undefined, where: 'path' | 'query' | 'header'): Json[] {
  if (!object?.properties) return []
  const required = new Set<string>(object.required ?? [])
  return Object.entries<Json>(object.properties).map(([name, prop]) => {
    const schema = schemas.ref(prop)
    const description = schema.description ?? prop.description
    delete schema.description
    return {
      name: where === 'header' ? titleCase(name) : name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description ? { description } : {}),
      schema,
    }
  })
}

/**
 * Builds the OpenAPI 3.1 document of the app's routes under `spec.basePath`. Throws, naming
 * every problem, when a route lacks what the document needs (operationId, summary,
 * description, a declared tag) or a schema cannot be documented truthfully.
 */
export function buildOpenApiDocument(app: AnyElysia, spec: DocumentSpec) {
  const schemas = new SchemaSet()
  const problems: string[] = []
  const tagNames = new Set(spec.tags.map((t) => t.name))
  const operationIds = new Set<string>()
  const paths: Record<string, Record<string, Json>> = {}

  for (const route of (app as any).routes as { method: string; path: string; hooks: Json }[]) {
    if (!route.path.startsWith(`${spec.basePath}/`) || route.hooks?.detail?.hide) continue
    const hooks = route.hooks ?? {}
    const d: Json = hooks.detail ?? {}
    const method = route.method.toLowerCase()
    const docPath = route.path.slice(spec.basePath.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const label = `${route.method} ${docPath}`
    const scope = d['x-required-scope'] as string | undefined

    if (typeof d.operationId !== 'string' || !CAMEL_VERB_NOUN.test(d.operationId)) problems.push(`${label}: detail.operationId must be a camelCase verb and noun (listJobs), not ${d.operationId}`)
    else if (operationIds.has(d.operationId)) problems.push(`${label}: operationId ${d.operationId} is used twice`)
    else operationIds.add(d.operationId)
    if (!d.summary) problems.push(`${label}: detail.summary is missing`)
    if (!d.description) problems.push(`${label}: detail.description is missing`)
    if (!Array.isArray(d.tags) || !d.tags.length) problems.push(`${label}: detail.tags is missing`)
    for (const tag of d.tags ?? []) if (!tagNames.has(tag)) problems.push(`${label}: tag ${tag} is not declared`)
    if (scope && !(scope in spec.scopes)) problems.push(`${label}: scope ${scope} is not declared`)

    const pathParams = [...docPath.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
    const parameters = [
      ...parametersOf(schemas, hooks.params, 'path'),
      ...parametersOf(schemas, hooks.query, 'query'),
      ...parametersOf(schemas, hooks.headers, 'header'),
    ]
    for (const p of pathParams) if (!parameters.some((x) => x.in === 'path' && x.name === p)) problems.push(`${label}: path parameter ${p} has no params schema`)

    const op: Json = {
      operationId: d.operationId,
      summary: d.summary,
      description: scope ? `${d.description}\n\nRequires the \`${scope}\` scope.` : d.description,
      tags: d.tags,
    }
    if (scope) {
      // Scopes are named in x-required-scope: a bearer scheme has no scope list to put them in.
      op.security = [{ bearerAuth: [] }]
      op['x-required-scope'] = scope
    } else op.security = []
    if (parameters.length) op.parameters = parameters
    if (hooks.body) {
      op.requestBody = {
        required: Array.isArray(hooks.body.required) && hooks.body.required.length > 0,
        content: { 'application/json': { schema: schemas.ref(hooks.body) } },
      }
    }

    const responses: Record<string, Json> = {}
    const declared: Json = hooks.response && typeof hooks.response === 'object' && !('type' in hooks.response) ? hooks.response : hooks.response ? { 200: hooks.response } : {}
    const idempotent = !!hooks.headers?.properties?.['idempotency-key']
    for (const [status, schema] of Object.entries(declared)) {
      const headers: Json = { 'Request-Id': header('RequestId') }
      if (scope) Object.assign(headers, RATE_HEADERS)
      if (idempotent) headers['Idempotent-Replayed'] = header('IdempotentReplayed')
      responses[status] = { description: d['x-success-description'] ?? 'Success.', headers, content: { 'application/json': { schema: schemas.ref(schema) } } }
    }
    if (!Object.keys(responses).length) problems.push(`${label}: no response schema`)
    Object.assign(responses, errorResponses(errorCodesOf(method, hooks, pathParams.length > 0), !!scope))
    op.responses = responses
    ;(paths[docPath] ??= {})[method] = op
  }

  const webhookParameters = Object.fromEntries(spec.webhookHeaders.map((h) => [
    h.name.replace(/[^A-Za-z0-9]/g, ''),
    { name: h.name, in: 'header', required: true, description: h.description, schema: schemas.ref(h.schema), ...(h.example ? { example: h.example } : {}) },
  ]))
  const webhooks: Record<string, Json> = {}
  for (const w of spec.webhooks) {
    if (!CAMEL_VERB_NOUN.test(w.operationId) || operationIds.has(w.operationId)) problems.push(`webhook ${w.name}: operationId ${w.operationId} is not a unique camelCase verb and noun`)
    operationIds.add(w.operationId)
    for (const tag of w.tags) if (!tagNames.has(tag)) problems.push(`webhook ${w.name}: tag ${tag} is not declared`)
    webhooks[w.name] = {
      post: {
        operationId: w.operationId,
        summary: w.summary,
        description: w.description,
        tags: w.tags,
        security: [],
        parameters: Object.keys(webhookParameters).map((k) => ({ $ref: `#/components/parameters/${k}` })),
        requestBody: { required: true, content: { 'application/json': { schema: schemas.ref(w.payload) } } },
        responses: Object.fromEntries(Object.entries(w.responses).map(([status, description]) => [status, { description }])),
      },
    }
  }

  if (problems.length) throw new Error(`The OpenAPI document cannot be built:\n${problems.join('\n')}`)
  const scopeList = Object.entries(spec.scopes).map(([s, what]) => `- \`${s}\`: ${what}`).join('\n')
  return {
    openapi: '3.1.0',
    info: spec.info,
    servers: [{ url: spec.serverUrl, description: 'This installation' }],
    security: [{ bearerAuth: [] }],
    tags: spec.tags,
    paths,
    webhooks,
    components: {
      schemas: schemas.components,
      headers: HEADERS,
      parameters: webhookParameters,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: `${spec.authDescription}\n\nScopes (each operation names the one it needs in \`x-required-scope\`):\n${scopeList}`,
          'x-scopes': spec.scopes,
        },
      },
    },
  }
}

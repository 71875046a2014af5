import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { join, resolve } from 'node:path'
import { startTestApi, type TestApi } from '../test/kit'
import { WEBHOOK_EVENT_TYPES } from './jobs/job-events'
import { buildOpenApiDocument, type DocumentSpec } from './platform/openapi'
import { named, wholeNumber } from './platform/schema'

const ROOT = resolve(import.meta.dir, '..')
let api: TestApi
let doc: any

beforeAll(async () => {
  api = startTestApi()
  doc = await (await api.request('GET', '/api/v1/openapi.json')).json()
})
afterAll(() => api.close())

/** Every operation of the document, with its method and path. */
const operations = () => Object.entries<any>(doc.paths).flatMap(([path, methods]) => Object.entries<any>(methods).map(([method, op]) => ({ label: `${method.toUpperCase()} ${path}`, op })))

/** Every schema object in the document (components, parameters, bodies, responses, webhooks). */
function schemasIn(node: unknown, out: any[] = []): any[] {
  if (Array.isArray(node)) node.forEach((n) => schemasIn(n, out))
  else if (node && typeof node === 'object') {
    if ('type' in node || 'anyOf' in node || '$ref' in node) out.push(node)
    Object.values(node).forEach((n) => schemasIn(n, out))
  }
  return out
}

const run = (cmd: string[]) => {
  const p = Bun.spawn(cmd, {
    cwd: ROOT, stdout: 'pipe', stderr: 'pipe',
    // Nothing leaves this machine: no usage telemetry, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', DO_NOT_TRACK: '1' },
  })
  return Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]).then(([stdout, stderr, code]) => ({ stdout, stderr, code }))
}

describe('the OpenAPI document as integrators read it', () => {
  test('redocly lint (recommended) and spectral lint (spectral:oas) find nothing, not even a warning', async () => {
    const file = join(api.dir, 'openapi.json')
    await Bun.write(file, JSON.stringify(doc))
    const [redocly, spectral] = await Promise.all([
      run(['node', 'node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--config', 'redocly.yaml', '--format=json']),
      run(['node', 'node_modules/@stoplight/spectral-cli/dist/index.js', 'lint', file, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', '--fail-severity', 'hint']),
    ])
    const r = JSON.parse(redocly.stdout.slice(redocly.stdout.indexOf('{')))
    expect(r.problems.map((p: any) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([])
    expect(r.totals).toMatchObject({ errors: 0, warnings: 0 })
    const s = JSON.parse(spectral.stdout || '[]')
    expect(s.map((p: any) => `${p.severity} ${p.code}: ${p.message} at ${p.path?.join('.')}`)).toEqual([])
    expect(spectral.code).toBe(0)
  }, 120_000) // two Node programs; on a loaded two-core machine they took over 30 s

  test('is OpenAPI 3.1 with no nullable anywhere, and integers are integer, never string-or-number', () => {
    expect(doc.openapi).toStartWith('3.1')
    expect(JSON.stringify(doc)).not.toContain('"nullable"')
    for (const s of schemasIn(doc)) {
      const label = JSON.stringify(s).slice(0, 120)
      expect({ label, format: s.format }).not.toEqual({ label, format: 'integer' })
      const types = new Set((s.anyOf ?? []).map((b: any) => b.type))
      expect({ label, stringOrNumber: types.has('string') && (types.has('integer') || types.has('number')) && !('description' in s && /year/i.test(s.description)) })
        .toEqual({ label, stringOrNumber: false })
    }
    const job = doc.components.schemas.Job.properties
    expect(job.reopen_count.type).toBe('integer')
    expect(job.quote_cents.type).toEqual(['integer', 'null'])
    expect(doc.components.schemas.WebhookEndpoint.properties.paused_reason).toMatchObject({ type: ['string', 'null'], enum: ['manual', 'failures', null] })
  })

  test('names the schemas an SDK user meets and the operations refer to them', () => {
    const names = Object.keys(doc.components.schemas)
    expect(names).toEqual(expect.arrayContaining([
      'Job', 'JobEvent', 'WebhookEndpoint', 'Unit', 'Service', 'DeliveryAttempt', 'Error', 'Note', 'JobText', 'ApiKey', 'Position',
      'DeliveryOutcome', 'JobList', 'JobEventList', 'UnitList', 'ServiceList', 'WebhookEndpointList', 'DeliveryAttemptList', 'JobTextList',
      'CreateJobRequest', 'UpdateJobRequest', 'AssignJobRequest', 'AddJobNoteRequest', 'ReopenJobRequest',
      'CreateWebhookEndpointRequest', 'UpdateWebhookEndpointRequest', 'JobWebhookEvent', 'PingWebhookEvent',
      'CommercialAccount', 'CommercialAccountList',
    ]))
    const body = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema
    expect(body('/jobs/{id}', 'get', '200')).toEqual({ $ref: '#/components/schemas/Job' })
    expect(body('/jobs', 'post', '201')).toEqual({ $ref: '#/components/schemas/Job' })
    expect(body('/jobs', 'get', '200')).toEqual({ $ref: '#/components/schemas/JobList' })
    expect(doc.components.schemas.JobList.properties.data.items).toEqual({ $ref: '#/components/schemas/Job' })
    expect(doc.components.schemas.JobEventList.properties.data.items).toEqual({ $ref: '#/components/schemas/JobEvent' })
    expect(body('/units', 'get', '200')).toEqual({ $ref: '#/components/schemas/UnitList' })
    expect(body('/services', 'get', '200')).toEqual({ $ref: '#/components/schemas/ServiceList' })
    expect(body('/webhooks/{id}', 'get', '200')).toEqual({ $ref: '#/components/schemas/WebhookEndpoint' })
    expect(doc.components.schemas.DeliveryAttemptList.properties.data.items).toEqual({ $ref: '#/components/schemas/DeliveryAttempt' })
    expect(body('/jobs/{id}', 'get', '404')).toEqual({ $ref: '#/components/schemas/Error' })
    expect(doc.paths['/jobs'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateJobRequest' })
    expect(doc.paths['/jobs/{id}'].patch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/UpdateJobRequest' })
    expect(body('/accounts', 'get', '200')).toEqual({ $ref: '#/components/schemas/CommercialAccountList' })
    expect(body('/accounts/{id}', 'get', '200')).toEqual({ $ref: '#/components/schemas/CommercialAccount' })
    expect(doc.components.schemas.CommercialAccountList.properties.data.items).toEqual({ $ref: '#/components/schemas/CommercialAccount' })
  })

  test('the commercial accounts directory: its schema holds names, kinds and contacts and no private field; jobs name theirs', () => {
    const account = doc.components.schemas.CommercialAccount
    expect(Object.keys(account.properties)).toEqual(['object', 'id', 'name', 'kind', 'contacts', 'created_at', 'updated_at'])
    expect(account.properties.object).toMatchObject({ const: 'commercial_account' })
    expect(account.properties.kind.enum).toEqual(['motor_club', 'police', 'fleet', 'body_shop', 'dealer', 'insurance', 'municipality', 'private_property', 'other'])
    expect(Object.keys(account.properties.contacts.items.properties)).toEqual(['name', 'role', 'phone', 'email'])
    for (const path of ['/accounts', '/accounts/{id}']) {
      expect({ path, scope: doc.paths[path].get['x-required-scope'], tags: doc.paths[path].get.tags }).toEqual({ path, scope: 'accounts:read', tags: ['Commercial accounts'] })
      expect(Object.keys(doc.paths[path].get.responses)).toEqual(path === '/accounts' ? ['200', '401', '403', '422', '429', '500'] : ['200', '401', '403', '404', '422', '429', '500'])
    }
    expect(doc.components.schemas.Job.properties.commercial_account).toMatchObject({ anyOf: [{ type: 'object', required: ['id', 'name'] }, { type: 'null' }] })
    expect(doc.components.schemas.Job.required).toContain('commercial_account')
    for (const body of ['CreateJobRequest', 'UpdateJobRequest']) expect(doc.components.schemas[body].properties.commercial_account_id).toMatchObject({ type: ['string', 'null'] })
  })

  test("operationIds are the SDK method names of the contract, each a camelCase verb and noun", () => {
    const ids = Object.fromEntries(operations().map(({ label, op }) => [label, op.operationId]))
    expect(ids).toEqual({
      'GET /me': 'getMe',
      'GET /jobs': 'listJobs',
      'POST /jobs': 'createJob',
      'GET /jobs/{id}': 'getJob',
      'PATCH /jobs/{id}': 'updateJob',
      'POST /jobs/{id}/assign': 'assignJob',
      'DELETE /jobs/{id}/assign': 'unassignJob',
      'POST /jobs/{id}/notes': 'addJobNote',
      'POST /jobs/{id}/reopen': 'reopenJob',
      'GET /jobs/{id}/events': 'listJobEvents',
      'GET /jobs/{id}/texts': 'listJobTexts',
      'GET /units': 'listUnits',
      'GET /services': 'listServices',
      'GET /webhooks': 'listWebhookEndpoints',
      'POST /webhooks': 'createWebhookEndpoint',
      'GET /webhooks/{id}': 'getWebhookEndpoint',
      'PATCH /webhooks/{id}': 'updateWebhookEndpoint',
      'DELETE /webhooks/{id}': 'deleteWebhookEndpoint',
      'POST /webhooks/{id}/test': 'testWebhookEndpoint',
      'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
      'POST /webhooks/{id}/deliveries/{delivery_id}/retry': 'retryWebhookDelivery',
      'GET /accounts': 'listCommercialAccounts',
      'GET /accounts/{id}': 'getCommercialAccount',
    })
    for (const [label, id] of Object.entries(ids)) expect({ label, id, ok: /^(get|list|create|update|delete|add|assign|unassign|reopen|test|retry)[A-Z][A-Za-z]*$/.test(id) }).toEqual({ label, id, ok: true })
  })

  test('every operation has a summary, a description, declared tags and its scope; the scopes are declared', () => {
    const tags = new Map<string, string>(doc.tags.map((t: any) => [t.name, t.description]))
    for (const t of tags.values()) expect(t.length).toBeGreaterThan(10)
    const scopes = doc.components.securitySchemes.bearerAuth['x-scopes']
    for (const { label, op } of operations()) {
      expect({ label, summary: !!op.summary, description: !!op.description, tags: op.tags?.length > 0 && op.tags.every((t: string) => tags.has(t)) })
        .toEqual({ label, summary: true, description: true, tags: true })
      expect({ label, scope: op['x-required-scope'] in scopes, security: op.security }).toEqual({ label, scope: true, security: [{ bearerAuth: [] }] })
      expect(op.description).toContain(`\`${op['x-required-scope']}\``)
    }
    // The API version (api-spec.md, Versioning), as webhook payloads carry it in api_version.
    expect(doc.info.version).toBe('2026-09-01')
  })

  test('limit is the integer integrators send, 1 to 100', () => {
    const limits = operations().flatMap(({ label, op }) => (op.parameters ?? []).filter((p: any) => p.name === 'limit').map((p: any) => ({ label, schema: p.schema })))
    expect(limits.length).toBe(8)
    for (const l of limits) expect(l).toEqual({ label: l.label, schema: { type: 'integer', minimum: 1, maximum: 100, default: expect.any(Number) } })
  })

  test('every operation declares the statuses it can answer', () => {
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses)
    for (const { label, op } of operations()) {
      const s = Object.keys(op.responses)
      // 422 on every one: a query parameter the operation does not declare is refused.
      expect({ label, auth: ['401', '403', '422', '429'].every((x) => s.includes(x)) }).toEqual({ label, auth: true })
      if (label.includes('{')) expect({ label, has404: s.includes('404') }).toEqual({ label, has404: true })
      if (!label.startsWith('GET')) expect({ label, body: ['400', '413', '422'].every((x) => s.includes(x)) }).toEqual({ label, body: true })
    }
    expect(statuses('/jobs', 'post')).toEqual(['201', '400', '401', '403', '409', '413', '422', '429', '500'])
    expect(statuses('/jobs', 'get')).toEqual(['200', '401', '403', '422', '429', '500'])
    expect(statuses('/webhooks/{id}/deliveries/{delivery_id}/retry', 'post')).toContain('409')
    expect(doc.paths['/jobs'].post.responses['429'].headers['Retry-After']).toBeDefined()
  })

  test('the webhooks section has one entry per event type, with its payload and the headers the sender sets', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort())
    const headers = Object.values<any>(doc.components.parameters).map((p) => p.name)
    expect(headers).toEqual(['X-SVC-Signature', 'X-SVC-Delivery-Id', 'X-SVC-Event-Type', 'X-SVC-Attempt', 'User-Agent'])
    for (const [type, item] of Object.entries<any>(doc.webhooks)) {
      const op = item.post
      expect({ type, summary: op.summary, description: op.description.length > 20, '2XX': !!op.responses['2XX'], params: op.parameters.length }).toEqual({ type, summary: type, description: true, '2XX': true, params: 5 })
      const schema = op.requestBody.content['application/json'].schema
      if (type === 'ping') expect(schema).toEqual({ $ref: '#/components/schemas/PingWebhookEvent' })
      else expect(schema.allOf).toEqual([{ $ref: '#/components/schemas/JobWebhookEvent' }, expect.objectContaining({ properties: { type: { const: type, type: 'string' } } })])
    }
    const event = doc.components.schemas.JobWebhookEvent
    expect(event.properties.object).toMatchObject({ const: 'event' })
    expect(event.properties.data.properties.job).toEqual({ $ref: '#/components/schemas/Job' })
    expect(event.properties.data.properties.event).toEqual({ $ref: '#/components/schemas/JobEventSummary' })
    expect(doc.webhooks['job.created'].post.responses.default.description).toContain('33 hours')
  })
})

describe('building the document', () => {
  const spec: DocumentSpec = {
    info: { title: 'T', version: '1' }, serverUrl: 'http://x/api/v1', basePath: '/api/v1', tags: [{ name: 'Things', description: 'Things.' }],
    scopes: {}, authDescription: 'Keys.', webhookHeaders: [], webhooks: [],
  }
  const detail = { operationId: 'getThing', summary: 'Get', description: 'Gets.', tags: ['Things'] }

  test('refuses a route without a camelCase operationId, summary, description or declared tag, naming it', () => {
    const app = new Elysia({ prefix: '/api/v1' })
      .get('/things', () => ({}), { response: { 200: t.Object({}) }, detail: { summary: 'List', tags: ['Things'] } })
      .get('/things/:id', () => ({}), { params: t.Object({ id: t.String() }), response: { 200: t.Object({}) }, detail: { operationId: 'getApiV1ThingsById', description: 'x', tags: ['Other'] } })
    expect(() => buildOpenApiDocument(app, spec)).toThrow(/GET \/things: detail.operationId must be a camelCase verb and noun[\s\S]*GET \/things: detail.description is missing[\s\S]*GET \/things\/\{id\}: detail.summary is missing[\s\S]*tag Other is not declared/)
  })

  test("refuses Elysia's t.Integer, which documents string-or-number, and two schemas under one name", () => {
    const integer = new Elysia({ prefix: '/api/v1' }).get('/things', () => ({ n: 1 }), { response: { 200: t.Object({ n: t.Integer() }) }, detail })
    expect(() => buildOpenApiDocument(integer, spec)).toThrow(/use wholeNumber\(\)/)
    const A = named('Thing', t.Object({ a: wholeNumber() }))
    const B = named('Thing', t.Object({ b: t.String() }))
    const twice = new Elysia({ prefix: '/api/v1' }).get('/things', () => ({ a: { a: 1 }, b: { b: 'x' } }), { response: { 200: t.Object({ a: A, b: B }) }, detail })
    expect(() => buildOpenApiDocument(twice, spec)).toThrow(/two different schemas are named Thing/)
  })
})

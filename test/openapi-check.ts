/**
 * Holds the service to its OpenAPI document: every /api/v1 response a test gets must have a
 * status the operation declares and a body that validates against the declared schema (Ajv,
 * JSON Schema 2020-12, formats checked), and every webhook body against the webhooks section.
 * The in-process kit runs this on each response by default, so the whole suite checks the
 * document against what the service really answers.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'

const SCHEMA_BASE = 'https://towline.test/openapi/schemas/'

/** Checks one response; throws, saying what differs, when the document does not describe it. */
export type ResponseCheck = (method: string, url: string, response: Response) => Promise<void>

interface Compiled {
  ajv: Ajv2020
  operations: { method: string; template: string; pattern: RegExp; op: any }[]
  validators: Map<string, ValidateFunction>
}

/** Points `#/components/schemas/X` at the schema registered for X, so each can be compiled alone. */
function rebased(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebased)
  if (!node || typeof node !== 'object') return node
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')
    ? SCHEMA_BASE + v.slice('#/components/schemas/'.length)
    : rebased(v)]))
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

// Documents differ between test apps only in their public URL: one compilation serves them all.
const compiledByDocument = new Map<string, Compiled>()

function compile(doc: any, basePath: string): Compiled {
  const key = JSON.stringify({ basePath, paths: doc.paths, webhooks: doc.webhooks, components: doc.components })
  const known = compiledByDocument.get(key)
  if (known) return known
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true })
  addFormats(ajv)
  for (const [name, schema] of Object.entries<any>(doc.components?.schemas ?? {})) ajv.addSchema({ ...(rebased(schema) as object), $id: SCHEMA_BASE + name })
  const operations = Object.entries<any>(doc.paths ?? {}).flatMap(([template, methods]) => Object.entries<any>(methods).map(([method, op]) => ({
    method: method.toUpperCase(),
    template,
    pattern: new RegExp(`^${escapeRegExp(basePath + template).replace(/\\\{[^}]+\\\}/g, '[^/]+')}/?$`),
    op,
  })))
  const compiled = { ajv, operations, validators: new Map<string, ValidateFunction>() }
  compiledByDocument.set(key, compiled)
  return compiled
}

function validatorFor(c: Compiled, key: string, schema: unknown): ValidateFunction {
  let validate = c.validators.get(key)
  if (!validate) {
    validate = c.ajv.compile(rebased(schema) as object)
    c.validators.set(key, validate)
  }
  return validate
}

const excerpt = (text: string) => (text.length > 600 ? `${text.slice(0, 600)}...` : text)

/** Makes the check of responses under `basePath` against `doc`. */
export function responseCheckerFor(doc: any, basePath = '/api/v1'): ResponseCheck {
  const c = compile(doc, basePath)
  return async (method, url, response) => {
    const pathname = new URL(url, 'http://localhost').pathname
    const found = c.operations.find((o) => o.method === method && o.pattern.test(pathname))
    // Unknown routes and the hidden ones (the document itself, the docs page) declare nothing.
    if (!found) return
    const label = `${method} ${pathname} answered ${response.status}`
    const text = await response.clone().text()
    const declared = found.op.responses?.[String(response.status)]
    if (!declared) {
      throw new Error(`OpenAPI: ${label}, a status ${method} ${found.template} does not declare (it declares ${Object.keys(found.op.responses ?? {}).join(', ')}). Body: ${excerpt(text)}`)
    }
    const schema = declared.content?.['application/json']?.schema
    if (!schema) {
      if (text) throw new Error(`OpenAPI: ${label} with a body, where ${method} ${found.template} declares none. Body: ${excerpt(text)}`)
      return
    }
    const type = response.headers.get('content-type') ?? ''
    if (!type.startsWith('application/json')) throw new Error(`OpenAPI: ${label} with content-type ${type}, not application/json`)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new Error(`OpenAPI: ${label} with a body that is not JSON: ${excerpt(text)}`)
    }
    const validate = validatorFor(c, `${method} ${found.template} ${response.status}`, schema)
    if (!validate(body)) {
      throw new Error(`OpenAPI: ${label} with a body that does not match ${method} ${found.template}'s schema: ${c.ajv.errorsText(validate.errors, { separator: '; ' })}. Body: ${excerpt(text)}`)
    }
  }
}

/** Checks a webhook body (as received) against the document's webhooks entry for its type; returns the problems, none when it matches. */
export function webhookProblems(doc: any, body: Record<string, unknown>): string[] {
  const c = compile(doc, '/api/v1')
  const entry = typeof body.type === 'string' ? doc.webhooks?.[body.type]?.post : undefined
  if (!entry) return [`no webhooks entry for type ${String(body.type)}`]
  const validate = validatorFor(c, `webhook ${body.type}`, entry.requestBody.content['application/json'].schema)
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`)
}

/**
 * Request validation that names problems in plain words and never touches what was sent beyond
 * checking it. Elysia's own ValidationError turns the offending value into text while building
 * its message (`${value}` of {"toString":1} throws; an indented dump of deep nesting grows as the
 * square of the depth), so each route's schemas are checked here first, in the transform step,
 * and Elysia's validator only ever sees values that pass.
 */
import { getSchemaValidator, type TSchema } from 'elysia'
import { FormatRegistry } from 'elysia/type-system'
import { charCount } from './chars'

/** One problem with a request, as `details.fields` lists it. */
export interface FieldProblem { path: string; message: string }

/** At most this many problems are named; a body can hold thousands. */
export const MAX_FIELD_PROBLEMS = 10

// typebox's ValueErrorType numbers that are not about the value's type or range.
const ARRAY_MAX_ITEMS = 2
const ARRAY_MIN_ITEMS = 4
const ARRAY_UNIQUE_ITEMS = 5
const OBJECT_ADDITIONAL_PROPERTY = 42
const OBJECT_MAX_PROPERTIES = 43
const OBJECT_MIN_PROPERTIES = 44
const OBJECT_REQUIRED_PROPERTY = 45

const KNOWN_PATTERNS: Record<string, string> = { '^[0-9]+$': 'a whole number' }
const KNOWN_FORMATS: Record<string, string> = {
  'date-time': 'an ISO 8601 time such as 2026-11-21T09:30:00Z',
  uri: 'an absolute URL',
  email: 'an email address',
}

/** Where a checked copy of a string schema keeps its length bounds (its own minLength/maxLength are taken off). */
const CHARS = 'x-towline-chars'

/**
 * A copy of `schema` whose string lengths are counted in characters (charCount) rather than
 * typebox's UTF-16 units: each bounded string without a format gets a format checking its
 * bounds, registered once per pair of bounds. The document served keeps the schema as written,
 * whose minLength/maxLength JSON Schema already counts in characters.
 */
function countingCharacters(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(countingCharacters)
  if (!schema || typeof schema !== 'object') return schema
  const out: Record<string | symbol, unknown> = {}
  for (const key of Reflect.ownKeys(schema)) out[key] = countingCharacters((schema as Record<string | symbol, unknown>)[key])
  const min = out.minLength, max = out.maxLength
  if (out.type === 'string' && out.format === undefined && (typeof min === 'number' || typeof max === 'number')) {
    const lo = typeof min === 'number' ? min : 0
    const hi = typeof max === 'number' ? max : Infinity
    const format = `towline-chars-${lo}-${hi}`
    if (!FormatRegistry.Has(format)) FormatRegistry.Set(format, (value) => { const n = charCount(value); return n >= lo && n <= hi })
    delete out.minLength
    delete out.maxLength
    out.format = format
    out[CHARS] = { minLength: min, maxLength: max }
  }
  return out
}

const range = (min: unknown, max: unknown) =>
  typeof min === 'number' && typeof max === 'number' ? ` from ${min} to ${max}`
    : typeof min === 'number' ? ` of at least ${min}`
      : typeof max === 'number' ? ` of at most ${max}` : ''

/** Describes what a schema accepts, in words ("a whole number from 0 to 100", "one of a, b, or null"). */
export function describeSchema(schema: any): string {
  if (!schema || typeof schema !== 'object') return 'valid'
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`
  if ('const' in schema) return JSON.stringify(schema.const)
  if (Array.isArray(schema.anyOf)) {
    const parts = [...new Set(schema.anyOf.map(describeSchema) as string[])]
    const last = parts.pop()!
    return parts.length ? `${parts.join(', ')}, or ${last}` : last
  }
  switch (schema.type) {
    case 'string': {
      if (schema[CHARS]) return describeSchema({ type: 'string', ...schema[CHARS] })
      if (typeof schema.format === 'string') return KNOWN_FORMATS[schema.format] ?? `a string in ${schema.format} format`
      if (typeof schema.pattern === 'string') return KNOWN_PATTERNS[schema.pattern] ?? `a string matching ${schema.pattern}`
      const min = schema.minLength, max = schema.maxLength
      if (typeof min === 'number' && min > 0 && typeof max === 'number') return `a string of ${min} to ${max} characters`
      if (typeof max === 'number') return `a string of at most ${max} characters`
      if (typeof min === 'number' && min > 0) return `a string of at least ${min} characters`
      return 'a string'
    }
    case 'number': return `a number${range(schema.minimum, schema.maximum)}`
    case 'integer': return `a whole number${range(schema.minimum, schema.maximum)}`
    case 'boolean': return 'true or false'
    case 'null': return 'null'
    case 'object': return 'an object'
    case 'array': return 'a list'
    default: return 'valid'
  }
}

/** Words for one typebox error: what is wrong at its path. */
function messageOf(error: { type: number; schema: any }): string {
  switch (error.type) {
    case OBJECT_REQUIRED_PROPERTY: return 'is required'
    case OBJECT_ADDITIONAL_PROPERTY: return 'is not a field this request accepts'
    case OBJECT_MIN_PROPERTIES: return `must have at least ${error.schema.minProperties} fields`
    case OBJECT_MAX_PROPERTIES: return `must have at most ${error.schema.maxProperties} fields`
    case ARRAY_MIN_ITEMS: return `must hold at least ${error.schema.minItems} items`
    case ARRAY_MAX_ITEMS: return `must hold at most ${error.schema.maxItems} items`
    case ARRAY_UNIQUE_ITEMS: return 'must not repeat an item'
    default: return `must be ${describeSchema(error.schema)}`
  }
}

/**
 * Turns typebox's error iterator into at most MAX_FIELD_PROBLEMS problems, one per path
 * (`customer.name`), reading only each error's path and schema, never its value.
 */
export function problemsOf(errors: Iterable<{ type: number; path: string; schema: any }>, root: string): FieldProblem[] {
  const out = new Map<string, string>()
  for (const e of errors) {
    const path = e.path.replace(/^\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).join('.').replace(/\p{Cs}/gu, '\ufffd') || root
    if (!out.has(path)) out.set(path, messageOf(e))
    if (out.size >= MAX_FIELD_PROBLEMS) break
  }
  return [...out].map(([path, message]) => ({ path, message }))
}

/** A compiled check of one schema: null when the value passes, else its problems. */
export type Checker = (value: unknown) => FieldProblem[] | null

/**
 * Compiles a schema into a Checker; `root` names a problem with the value as a whole ("body",
 * "query"). Headers allow fields the schema does not name, as Elysia's own check of them does
 * (the options match Elysia's, which writes them into the schema it is given).
 */
export function compileChecker(schema: TSchema, root: string): Checker {
  const validator = getSchemaValidator(countingCharacters(schema) as TSchema, { normalize: false, additionalProperties: root === 'headers' }) as unknown as {
    Check(v: unknown): boolean
    Errors(v: unknown): Iterable<{ type: number; path: string; schema: any }>
  }
  return (value) => (validator.Check(value) ? null : problemsOf(validator.Errors(value), root))
}

/** The checks of one route's inputs. */
export interface RouteCheckers { body?: Checker; query?: Checker; params?: Checker; headers?: Checker }

/** Compiles the checkers of every route Elysia knows, keyed `METHOD /path/:param`. */
export function compileRouteCheckers(routes: { method: string; path: string; hooks?: any }[]): Map<string, RouteCheckers> {
  const out = new Map<string, RouteCheckers>()
  for (const r of routes) {
    const h = r.hooks ?? {}
    const checkers: RouteCheckers = {}
    for (const part of ['body', 'query', 'params', 'headers'] as const) {
      if (h[part] && typeof h[part] === 'object') checkers[part] = compileChecker(h[part], part)
    }
    out.set(`${r.method} ${r.path}`, checkers)
  }
  return out
}

import { t } from 'elysia'
// Elysia's `t` is built on this package (its peer dependency); only its plain Integer is taken.
import { Type } from '@sinclair/typebox'

/**
 * One of a fixed set of strings. `t.UnionEnum` without the default Elysia gives it (its first
 * value), which would silently fill in optional fields: a PATCH would set status to "pending".
 */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, options: Record<string, unknown> = {}) {
  const schema = t.UnionEnum(values as unknown as [T[number], ...T[number][]], options)
  delete (schema as { default?: unknown }).default
  return schema
}

/**
 * A whole number, as JSON sends it. Elysia's `t.Integer` also takes the string "15" and turns it
 * into 15 (and documents string-or-integer); a string where a number belongs is refused instead.
 */
export function wholeNumber(options: { minimum?: number; maximum?: number; description?: string } = {}) {
  return Type.Integer(options)
}

const NAME = Symbol.for('towline.schemaName')
const DOCUMENTED_AS = Symbol.for('towline.documentedAs')

/**
 * Names a schema: the OpenAPI document lists it once in components.schemas under that name and
 * refers to it wherever it occurs (copies made by t.Optional keep the name; a schema derived
 * from a named one, as t.Omit makes, must be named again).
 */
export function named<T extends object>(name: string, schema: T): T {
  Object.defineProperty(schema, NAME, { value: name, enumerable: true, configurable: true, writable: true })
  return schema
}

/** The name given with `named`, if any. */
export function schemaName(schema: unknown): string | undefined {
  return schema && typeof schema === 'object' ? (schema as Record<symbol, string | undefined>)[NAME] : undefined
}

/** What the OpenAPI document shows instead of a schema checked in another form (see queryWholeNumber). */
export function documentedAs(schema: unknown): Record<string, unknown> | undefined {
  return schema && typeof schema === 'object' ? (schema as Record<symbol, Record<string, unknown> | undefined>)[DOCUMENTED_AS] : undefined
}

/**
 * A whole number in the query string. The query arrives as text, so it is checked as digits
 * (the operation checks the range and names it in its 422); the OpenAPI document describes the
 * integer integrators send, so generated clients take a number.
 */
export function queryWholeNumber(doc: { minimum: number; maximum: number; default: number; description: string }) {
  const schema = t.String({ pattern: '^[0-9]+$', description: doc.description })
  Object.defineProperty(schema, DOCUMENTED_AS, { value: { type: 'integer', ...doc }, enumerable: true, configurable: true, writable: true })
  return schema
}

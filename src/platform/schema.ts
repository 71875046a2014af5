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

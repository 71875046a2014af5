import { t } from 'elysia'

/**
 * One of a fixed set of strings. `t.UnionEnum` without the default Elysia gives it (its first
 * value), which would silently fill in optional fields: a PATCH would set status to "pending".
 */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, options: Record<string, unknown> = {}) {
  const schema = t.UnionEnum(values as unknown as [T[number], ...T[number][]], options)
  delete (schema as { default?: unknown }).default
  return schema
}

import { describe, expect, test } from 'bun:test'
import { toPostgres } from './to-postgres'

describe('a statement written for SQLite, in PostgreSQL spelling', () => {
  test('placeholders are numbered in order; ?N keeps its number', () => {
    expect(toPostgres('SELECT * FROM jobs WHERE id = ? AND account_id = ?')).toBe('SELECT * FROM jobs WHERE id = $1 AND account_id = $2')
    expect(toPostgres('SELECT ?2, ?1, ?2')).toBe('SELECT $2, $1, $2')
  })
  test('what is inside string literals and quoted names is left alone', () => {
    expect(toPostgres(`SELECT 'a ? b', "odd?name", 'it''s ?' FROM t WHERE x = ?`)).toBe(`SELECT 'a ? b', "odd?name", 'it''s ?' FROM t WHERE x = $1`)
  })
  test('backquoted names become double-quoted', () => {
    expect(toPostgres('CREATE INDEX `a` ON `jobs` (`b`)')).toBe('CREATE INDEX "a" ON "jobs" ("b")')
  })
  test('LIMIT -1, INDEXED BY, IFNULL and LIKE', () => {
    expect(toPostgres('SELECT rowid FROM t INDEXED BY t_idx WHERE a LIKE ? LIMIT -1 OFFSET ?')).toBe('SELECT rowid FROM t WHERE a ILIKE $1 LIMIT ALL OFFSET $2')
    expect(toPostgres('SELECT IFNULL(MAX(position), 0) FROM e')).toBe('SELECT COALESCE(MAX(position), 0) FROM e')
  })
  test("SQLite's null-safe IS ? and IS NOT ?", () => {
    expect(toPostgres('UPDATE t SET a = 1 WHERE b IS ? AND c IS NOT ? AND d IS NULL')).toBe('UPDATE t SET a = 1 WHERE b IS NOT DISTINCT FROM $1 AND c IS DISTINCT FROM $2 AND d IS NULL')
  })
  test("json_extract(x, '$.a.b') reads the JSON text's key path", () => {
    expect(toPostgres("SELECT 1 FROM jobs WHERE json_extract(customer, '$.phone') = ?")).toBe("SELECT 1 FROM jobs WHERE (customer::jsonb #>> '{phone}') = $1")
    expect(toPostgres("SELECT json_extract(j.data, '$.job.site_id') FROM x j")).toBe("SELECT (j.data::jsonb #>> '{job,site_id}') FROM x j")
  })
  test('json_each of a JSON array gives its elements in a column named value', () => {
    expect(toPostgres('SELECT 1 WHERE a NOT IN (SELECT value FROM json_each(?2)) AND b = ?1')).toBe('SELECT 1 WHERE a NOT IN (SELECT value FROM json_array_elements_text(($2)::text::json)) AND b = $1')
    expect(toPostgres('SELECT 1 FROM json_each(site_ids) WHERE value IN (?, ?)')).toBe('SELECT 1 FROM json_array_elements_text((site_ids)::text::json) WHERE value IN ($1, $2)')
  })
  test('words that only contain a keyword are not touched', () => {
    expect(toPostgres('SELECT likes, unlike_count, is_default FROM t')).toBe('SELECT likes, unlike_count, is_default FROM t')
  })
})

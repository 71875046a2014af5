/**
 * Rewrites a statement written for SQLite into PostgreSQL's spelling of the same thing, for the
 * few differences that are only spelling: placeholders (`?`, `?2` → `$n`), backquoted names,
 * `LIMIT -1`, `INDEXED BY`, `IS ?` (SQLite's null-safe equality), `json_extract(x, '$.a')`,
 * `json_object`, `json_each` of an array of scalars, `ifnull`, and LIKE (case-insensitive in
 * SQLite, ILIKE in PostgreSQL). String literals and quoted names are left alone. What differs in
 * meaning is written for each engine where it is used (a branch on `db.engine`).
 */
export function toPostgres(sql: string): string {
  return rewrite(sql, { next: 1 })
}

/** Rewrites `sql`; plain `?` placeholders take their numbers from `state` (shared with the enclosing statement). */
function rewrite(sql: string, state: { next: number }): string {
  let out = ''
  let i = 0
  const n = sql.length
  while (i < n) {
    const c = sql[i]!
    if (c === "'" || c === '"') {
      const end = endOfQuoted(sql, i, c)
      out += sql.slice(i, end)
      i = end
    } else if (c === '`') {
      const end = endOfQuoted(sql, i, '`')
      out += `"${sql.slice(i + 1, end - 1).replaceAll('"', '""')}"`
      i = end
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      i = end < 0 ? n : end
    } else if (c === '?') {
      let j = i + 1
      while (j < n && sql[j]! >= '0' && sql[j]! <= '9') j++
      if (j > i + 1) out += `$${sql.slice(i + 1, j)}`
      else out += `$${state.next++}`
      i = j
    } else if (isWordStart(c) && (i === 0 || !isWordChar(sql[i - 1]!))) {
      let j = i + 1
      while (j < n && isWordChar(sql[j]!)) j++
      const word = sql.slice(i, j)
      const upper = word.toUpperCase()
      if (upper === 'LIKE') { out += 'ILIKE'; i = j; continue }
      if (upper === 'IFNULL') { out += 'COALESCE'; i = j; continue }
      // Its value comes back as text, as SQLite's does (pg-thread.ts).
      if (upper === 'JSON_OBJECT') { out += 'json_build_object'; i = j; continue }
      if (upper === 'LIMIT') {
        const m = /^\s+-1\b/.exec(sql.slice(j))
        if (m) { out += 'LIMIT ALL'; i = j + m[0].length; continue }
      }
      if (upper === 'INDEXED') {
        const m = /^\s+BY\s+[A-Za-z_][A-Za-z0-9_]*\s*/i.exec(sql.slice(j))
        if (m) { i = j + m[0].length; continue }
      }
      if (upper === 'IS') {
        const m = /^(\s+NOT)?\s+\?(?![0-9])/i.exec(sql.slice(j))
        if (m) { out += m[1] ? 'IS DISTINCT FROM ' : 'IS NOT DISTINCT FROM '; i = j + m[0].length - 1; continue }
      }
      if (upper === 'JSON_EACH') {
        // A JSON array's elements as text, in a column named value (json_each's too). Through text:
        // a parameter typed json would be sent as a JSON string of the text.
        const call = callArgument(sql, j)
        if (call) { out += `json_array_elements_text((${rewrite(call.arg, state)})::text::json)`; i = call.end; continue }
      }
      if (upper === 'JSON_EXTRACT') {
        const call = jsonExtract(sql, j)
        if (call) { out += `(${rewrite(call.target, state)}::jsonb #>> '{${call.path.join(',')}}')`; i = call.end; continue }
      }
      out += word
      i = j
    } else {
      out += c
      i++
    }
  }
  return out
}

function endOfQuoted(sql: string, start: number, q: string): number {
  let i = start + 1
  while (i < sql.length) {
    if (sql[i] === q) {
      if (sql[i + 1] === q) { i += 2; continue }
      return i + 1
    }
    i++
  }
  return sql.length
}

function isWordStart(c: string): boolean { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' }
function isWordChar(c: string): boolean { return isWordStart(c) || (c >= '0' && c <= '9') || c === '$' }

/** The one argument of a call from the `(` after the name, and where the call ends. */
function callArgument(sql: string, at: number): { arg: string; end: number } | null {
  let i = at
  while (sql[i] === ' ') i++
  if (sql[i] !== '(') return null
  let depth = 0
  for (let j = i; j < sql.length; j++) {
    const c = sql[j]
    if (c === "'") { j = endOfQuoted(sql, j, "'") - 1; continue }
    if (c === '(') depth++
    else if (c === ')' && --depth === 0) return { arg: sql.slice(i + 1, j), end: j + 1 }
  }
  return null
}

/** `json_extract(target, '$.a.b')` from the `(` after the name: the target, the path's keys and where the call ends. */
function jsonExtract(sql: string, at: number): { target: string; path: string[]; end: number } | null {
  const call = callArgument(sql, at)
  if (!call) return null
  // The first comma outside parentheses and quotes ends the target.
  let depth = 0
  let comma = -1
  for (let j = 0; j < call.arg.length && comma < 0; j++) {
    const c = call.arg[j]
    if (c === "'") j = endOfQuoted(call.arg, j, "'") - 1
    else if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === ',' && depth === 0) comma = j
  }
  const path = comma < 0 ? null : /^\s*'\$((?:\.[A-Za-z_][A-Za-z0-9_]*)+)'\s*$/.exec(call.arg.slice(comma + 1))
  if (!path) return null
  return { target: call.arg.slice(0, comma).trim(), path: path[1]!.slice(1).split('.'), end: call.end }
}

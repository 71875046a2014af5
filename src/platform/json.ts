/**
 * Reading untrusted JSON: nesting is capped before JSON.parse sees the text (one linear scan),
 * and strings holding a lone UTF-16 surrogate are found, since every strict JSON parser
 * downstream (webhook receivers) would choke on them once stored.
 */

/** Deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64

/** Tells whether JSON text nests arrays and objects deeper than `max`, counting brackets outside strings. */
export function nestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  // Fewer brackets than that cannot nest that deep: the usual small body skips the scan.
  if (text.length <= 2 * max) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) { if (++depth > max) return true }
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/** Why JSON text could not be read as a value. */
export type JsonProblem = 'not_json' | 'too_deep'

/** Parses untrusted JSON text, refusing nesting deeper than MAX_JSON_DEPTH before parsing. */
export function parseUntrustedJson(text: string): { ok: true; value: unknown } | { ok: false; problem: JsonProblem } {
  if (nestsDeeperThan(text)) return { ok: false, problem: 'too_deep' }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, problem: 'not_json' }
  }
}

const LONE_SURROGATE = /\p{Cs}/u
// Decoded UTF-8 holds no lone surrogate; only a \uD800-\uDFFF escape can make one.
const SURROGATE_ESCAPE = /\\u[dD][89abcdefABCDEF]/

/**
 * Returns the path (`customer.name`, `events.1`) of the first string or key holding a lone
 * surrogate, or null. `text` is the JSON the value came from: without an escape of one, the
 * walk is skipped. Keys in the path have their lone surrogates shown as U+FFFD.
 */
export function loneSurrogatePath(value: unknown, text: string): string | null {
  if (!SURROGATE_ESCAPE.test(text)) return null
  return walk(value, '', LONE_SURROGATE)
}

const NUL = /\u0000/
// JSON text holds U+0000 only as an escape (a raw control character is not JSON).
const NUL_ESCAPE = /\\u0000/

/**
 * Returns the path of the first string or key holding U+0000 (NUL), or null: no text field may
 * hold it (PostgreSQL's text cannot, and no name, address or note needs it), on either engine.
 */
export function nulCharacterPath(value: unknown, text: string): string | null {
  if (!NUL_ESCAPE.test(text)) return null
  return walk(value, '', NUL)
}

function walk(value: unknown, path: string, bad: RegExp): string | null {
  if (typeof value === 'string') return bad.test(value) ? path : null
  if (typeof value !== 'object' || value === null) return null
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], path ? `${path}.${i}` : String(i), bad)
      if (found !== null) return found
    }
    return null
  }
  for (const [key, v] of Object.entries(value)) {
    const here = path ? `${path}.${key.replace(/\p{Cs}/gu, '\ufffd')}` : key.replace(/\p{Cs}/gu, '\ufffd')
    if (bad.test(key)) return here
    const found = walk(v, here, bad)
    if (found !== null) return found
  }
  return null
}

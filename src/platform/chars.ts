/**
 * How many characters a string holds, as people and JSON Schema's minLength/maxLength count them:
 * by code point, so an emoji is one character, not the two UTF-16 units of JavaScript's length.
 */
export function charCount(s: string): number {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) { n--; i++ }
    }
  }
  return n
}

/**
 * What is wrong with a name given at the console or in a form (a company, site, unit, driver or
 * service), or null: it holds characters, at most `max` of them, and no control characters (a
 * newline or tab breaks the texts and tables it is printed in). `name` is already trimmed.
 */
export function nameProblem(name: string, max: number): string | null {
  if (!name) return 'must not be blank'
  if (/[\p{Cc}\p{Zl}\p{Zp}]/u.test(name)) return 'must be on one line, without tabs or other control characters'
  // Direction overrides and isolates make a name read otherwise than it is stored (a key named to look like another).
  if (/[\u202A-\u202E\u2066-\u2069]/u.test(name)) return 'must not hold characters that change the direction of the text around them'
  if (charCount(name) > max) return `must be at most ${max} characters`
  return null
}

/** A name as names are compared (two that differ only by case or by how an accent is composed are one): trimmed, NFC, lower-cased by Unicode's rules. */
export const nameKey = (name: string): string => name.trim().normalize('NFC').toLowerCase()

/** Letters that Unicode does not decompose into a base letter and a mark, as searches spell them. */
const UNDECOMPOSED: Record<string, string> = { ø: 'o', æ: 'ae', œ: 'oe', ß: 'ss', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't' }

/**
 * Text as searches compare it: accents and other marks taken off (é, ë, ñ, ç become e, e, n, c),
 * compatibility forms unfolded (ﬁ, full-width letters), lower case: "zoe" finds "Zoë", "pena" "Peña".
 */
export function searchFold(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[øæœßłđðþıħŧ]/g, (c) => UNDECOMPOSED[c]!)
}

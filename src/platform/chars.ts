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

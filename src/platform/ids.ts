/** Prefixed, time-sortable ids (ULID-like): `job_01JF...`. Sorting ids sorts by creation time. */

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ' // Crockford base32
/** `acct` is a tenant (a towing company using Towline); `cac` an entry of its commercial accounts directory (a motor club, a police agency...). */
export type IdPrefix = 'job' | 'unit' | 'svc' | 'note' | 'evt' | 'whk' | 'dlv' | 'key' | 'acct' | 'cac' | 'site' | 'req' | 'txt' | 'usr' | 'ses' | 'att' | 'rate' | 'pho' | 'sig' | 'inv' | 'pay'

let lastMs = -1
const lastRand = new Uint8Array(16)

/** Mints a new id for the prefix; ids minted in the same millisecond still sort in mint order. */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    // Same (or earlier, clock stepped back) millisecond: bump the random part so order holds.
    nowMs = lastMs
    for (let i = 15; i >= 0; i--) {
      if (lastRand[i]! < 31) { lastRand[i]!++; break }
      lastRand[i] = 0
    }
  } else {
    lastMs = nowMs
    const bytes = crypto.getRandomValues(new Uint8Array(16))
    // Keep the top bit of the random part clear so increments never overflow in practice.
    for (let i = 0; i < 16; i++) lastRand[i] = (bytes[i]! & 31) >> (i === 0 ? 1 : 0)
  }
  let time = ''
  let ms = nowMs
  for (let i = 0; i < 10; i++) { time = ALPHABET[ms % 32] + time; ms = Math.floor(ms / 32) }
  let rand = ''
  for (let i = 0; i < 16; i++) rand += ALPHABET[lastRand[i]!]
  return `${prefix}_${time}${rand}`
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Returns `length` uniformly random base62 characters (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2))
    for (const b of bytes) {
      if (b < 248) out += BASE62[b % 62] // 248 = 62 * 4
      if (out.length === length) break
    }
  }
  return out
}

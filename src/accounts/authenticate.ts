import { writeIfFree, type Db } from '../db/client'
import { AppError } from '../platform/errors'
import { hashApiKey, looksLikeApiKey } from './api-key'
import type { Scope } from './scopes'
import { dataVersionOf } from '../db/data-version'

/** Who is calling: the key, its account, its scopes and (if limited) its sites. */
export interface Principal {
  keyId: string
  keyName: string
  accountId: string
  accountName: string
  /** The company's phone shown to customers (E.164), or null. */
  accountPhone: string | null
  /** Country phone numbers without +country are read in. */
  defaultCountry: string
  /** The company's time zone (IANA). */
  timeZone: string
  scopes: Scope[]
  /** Site ids the key is limited to, or null for every site of the account. */
  siteIds: string[] | null
  /** The sites this key can see (all of the account's unless limited), oldest first. */
  sites: { id: string; name: string }[]
}

const CHALLENGE = 'Bearer realm="towline"'

function unauthorized(message: string, invalidToken: boolean): AppError {
  return new AppError('unauthorized', message, {}, {
    'WWW-Authenticate': invalidToken ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE,
  })
}

type KeyLookupRow = { id: string; name: string; account_id: string; account_name: string; account_phone: string | null; default_country: string; time_zone: string; scopes: string; site_ids: string | null; last_used_at: number | null }

/** Bumped by every in-process change to keys, accounts or sites, so cached principals are dropped at once. */
let keysGeneration = 0
/** Tells authenticators in this process that keys, or the accounts and sites they resolve to, changed (revocation, a renamed account, a new site...). */
export function keysChanged(): void {
  keysGeneration++
}

/**
 * Returns `authenticate(header)`: resolves an Authorization header to a principal, or throws
 * 401. Resolved keys are cached; the cache is dropped whenever another connection commits to
 * the database (its data version, e.g. `towline keys revoke` from the CLI) or keys change
 * in this process, so a revocation holds from the very next request.
 */
export function createAuthenticator(db: Db, nowMs: () => number) {
  const lookup = db.$client.prepare<KeyLookupRow, [string]>(
    `SELECT k.id, k.name, k.account_id, a.name AS account_name, a.phone AS account_phone, a.default_country, a.time_zone, k.scopes, k.site_ids, k.last_used_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.hash = ? AND k.revoked_at IS NULL`,
  )
  const sitesOf = db.$client.prepare<{ id: string; name: string }, [string]>('SELECT id, name FROM sites WHERE account_id = ? ORDER BY created_at, id')
  const dataVersion = dataVersionOf(db)
  let checkedAt = -Infinity
  const touch = db.$client.prepare<unknown, [number, string]>('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  const cache = new Map<string, { principal: Principal; touchedAt: number }>()
  // The same entries by the Authorization header as sent: a key's next request skips parsing and
  // hashing it. Only keys that resolved are here, and both maps are dropped together.
  const byHeader = new Map<string, { principal: Principal; touchedAt: number }>()
  let seen = { version: -1, generation: -1 }

  return function authenticate(header: string | null): Principal {
    // Another process's commit (a CLI revocation) is noticed within a millisecond; asking
    // the database on every request would cost a quarter of the request.
    const tick = performance.now()
    if (tick - checkedAt >= 1 || keysGeneration !== seen.generation) {
      checkedAt = tick
      const version = dataVersion()
      if (version !== seen.version || keysGeneration !== seen.generation) {
        cache.clear()
        byHeader.clear()
        seen = { version, generation: keysGeneration }
      }
    }
    let hit = header ? byHeader.get(header) : undefined
    if (hit) return touched(hit)
    if (!header) throw unauthorized('No API key was sent. Send it as the header Authorization: Bearer <key>.', false)
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!m) throw unauthorized('The Authorization header must be "Bearer <key>".', true)
    const key = m[1]!
    if (!looksLikeApiKey(key)) throw unauthorized('That is not a Towline API key; live keys begin with svc_live_.', true)
    const hash = hashApiKey(key)
    hit = cache.get(hash)
    if (!hit) {
      const row = lookup.get(hash)
      // Unknown keys are never cached, so random keys cannot grow the cache.
      if (!row) throw unauthorized('The API key is not valid, or it has been revoked.', true)
      const siteIds: string[] | null = row.site_ids ? JSON.parse(row.site_ids) : null
      const sites = sitesOf.all(row.account_id).filter((s) => !siteIds || siteIds.includes(s.id))
      hit = {
        principal: {
          keyId: row.id, keyName: row.name, accountId: row.account_id, accountName: row.account_name, accountPhone: row.account_phone, defaultCountry: row.default_country, timeZone: row.time_zone,
          scopes: JSON.parse(row.scopes), siteIds, sites,
        },
        touchedAt: row.last_used_at ?? 0,
      }
      if (cache.size > 10_000) { cache.clear(); byHeader.clear() }
      cache.set(hash, hit)
    }
    if (byHeader.size > 10_000) byHeader.clear()
    byHeader.set(header, hit)
    return touched(hit)
  }

  function touched(hit: { principal: Principal; touchedAt: number }): Principal {
    const now = nowMs()
    // last_used_at is informational: written at most once a minute per key, not per request.
    if (hit.touchedAt < now - 60_000) {
      // Never waits for another connection's write (an import): then it is tried again in a second.
      hit.touchedAt = writeIfFree(db, () => touch.run(now, hit.principal.keyId)) ? now : now - 59_001
    }
    return hit.principal
  }
}

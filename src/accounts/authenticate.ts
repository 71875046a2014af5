import type { Db } from '../db/client'
import { AppError } from '../platform/errors'
import { hashApiKey, looksLikeApiKey } from './api-key'
import type { Scope } from './scopes'

/** Who is calling: the key, its account, its scopes and (if limited) its sites. */
export interface Principal {
  keyId: string
  keyName: string
  accountId: string
  accountName: string
  scopes: Scope[]
  /** Site ids the key is limited to, or null for every site of the account. */
  siteIds: string[] | null
}

const CHALLENGE = 'Bearer realm="towline"'

function unauthorized(message: string, invalidToken: boolean): AppError {
  return new AppError('unauthorized', message, {}, {
    'WWW-Authenticate': invalidToken ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE,
  })
}

type KeyLookupRow = { id: string; name: string; account_id: string; account_name: string; scopes: string; site_ids: string | null; last_used_at: number | null }

/** Resolves an Authorization header to a principal, or throws 401 unauthorized. */
export function createAuthenticator(db: Db, nowMs: () => number) {
  // Looked up on every request (one indexed read), so a revocation holds from the next request.
  const lookup = db.$client.prepare<KeyLookupRow, [string]>(
    `SELECT k.id, k.name, k.account_id, a.name AS account_name, k.scopes, k.site_ids, k.last_used_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.hash = ? AND k.revoked_at IS NULL`,
  )
  const touch = db.$client.prepare<unknown, [number, string]>('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  const lastTouched = new Map<string, number>()

  return function authenticate(header: string | null): Principal {
    if (!header) throw unauthorized('No API key was sent. Send it as the header Authorization: Bearer <key>.', false)
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!m) throw unauthorized('The Authorization header must be "Bearer <key>".', true)
    const key = m[1]!
    if (!looksLikeApiKey(key)) throw unauthorized('That is not a Towline API key; live keys begin with svc_live_.', true)
    const row = lookup.get(hashApiKey(key))
    if (!row) throw unauthorized('The API key is not valid, or it has been revoked.', true)
    const now = nowMs()
    // last_used_at is informational: write it at most once a minute per key, not per request.
    if ((lastTouched.get(row.id) ?? row.last_used_at ?? 0) < now - 60_000) {
      lastTouched.set(row.id, now)
      touch.run(now, row.id)
    }
    return {
      keyId: row.id,
      keyName: row.name,
      accountId: row.account_id,
      accountName: row.account_name,
      scopes: JSON.parse(row.scopes),
      siteIds: row.site_ids ? JSON.parse(row.site_ids) : null,
    }
  }
}

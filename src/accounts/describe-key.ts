import type { Db } from '../db/client'
import type { Principal } from './authenticate'
import { listSites } from './account.queries'

/** Describes the calling key for GET /me: its account, the sites it can see and its scopes. */
export function describeKey(db: Db, principal: Principal, limits: { reads: number; writes: number }) {
  const sites = listSites(db, principal.accountId, principal.siteIds)
  return {
    object: 'key' as const,
    id: principal.keyId,
    name: principal.keyName,
    account: { id: principal.accountId, name: principal.accountName },
    sites: sites.map((s) => ({ id: s.id, name: s.name })),
    site_restricted: principal.siteIds !== null,
    scopes: principal.scopes,
    rate_limits: { reads_per_minute: limits.reads, writes_per_minute: limits.writes },
  }
}

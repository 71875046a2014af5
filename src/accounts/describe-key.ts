import type { Principal } from './authenticate'

/** Describes the calling key for GET /me: the key, its account, the sites it can see and its scopes. */
export function describeKey(principal: Principal, limits: { reads: number; writes: number }) {
  return {
    object: 'key' as const,
    id: principal.keyId,
    name: principal.keyName,
    account: { id: principal.accountId, name: principal.accountName },
    sites: principal.sites,
    site_restricted: principal.siteIds !== null,
    scopes: principal.scopes,
    rate_limits: { reads_per_minute: limits.reads, writes_per_minute: limits.writes },
  }
}

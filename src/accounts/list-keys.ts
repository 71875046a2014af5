import { iso } from '../platform/clock'
import type { OperationContext } from '../operations/operation-context'
import { requirePermission } from './actor'
import { listKeys, listSites } from './account.queries'
import type { Scope } from './scopes'

/** A key as the dashboard lists it: never the key itself, only its prefix. */
export interface KeyView {
  id: string
  name: string
  prefix: string
  scopes: Scope[]
  /** The sites it is limited to, or null for every site (those added later included). */
  sites: { id: string; name: string }[] | null
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

/**
 * Lists the context's account's keys, newest first, revoked ones included (permission
 * `keys:manage`), and the account's sites a new key may be limited to.
 */
export function listApiKeys(ctx: OperationContext): { keys: KeyView[]; sites: { id: string; name: string }[] } {
  requirePermission(ctx.actor, 'keys:manage')
  const sites = listSites(ctx.db, ctx.account.id).map((s) => ({ id: s.id, name: s.name }))
  const keys = listKeys(ctx.db, ctx.account.id).reverse().map((k): KeyView => {
    const siteIds: string[] | null = k.siteIds ? JSON.parse(k.siteIds) : null
    return {
      id: k.id, name: k.name, prefix: k.prefix, scopes: JSON.parse(k.scopes) as Scope[],
      sites: siteIds ? sites.filter((s) => siteIds.includes(s.id)) : null,
      created_at: iso(k.createdAt)!, last_used_at: iso(k.lastUsedAt), revoked_at: iso(k.revokedAt),
    }
  })
  return { keys, sites }
}

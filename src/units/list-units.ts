import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { decodeCursor, page, pageLimit } from '../platform/paging'
import { busyUnitIds, listUnits, positionOf, type UnitRow } from './unit.queries'

/** A unit as the API shows it. */
export function unitView(u: UnitRow, busy: boolean) {
  return {
    object: 'unit' as const,
    id: u.id,
    name: u.name,
    driver: u.driverName || u.driverPhone ? { name: u.driverName, phone: u.driverPhone } : null,
    status: (u.offDuty ? 'off_duty' : busy ? 'busy' : 'available') as 'off_duty' | 'busy' | 'available',
    site_ids: u.siteIds,
    position: positionOf(u),
  }
}

/** GET /units: the roster by name (the units serving the caller's sites), with each unit's last shared position and whether it holds a job. */
export function listUnitsPage(ctx: OperationContext, query: { limit?: string; cursor?: string }) {
  requirePermission(ctx.actor, 'roster:read')
  const { db, scope } = ctx
  const limit = pageLimit(query.limit)
  const after = query.cursor ? decodeCursor<[string, string]>(query.cursor, ['string', 'string'], { idPrefix: 'unit' }) : undefined
  const rows = listUnits(db, scope, limit + 1, after ? { name: after[0], id: after[1] } : undefined)
  const busy = busyUnitIds(db, scope.accountId, rows.map((r) => r.id))
  return page(rows, limit, (u) => unitView(u, busy.has(u.id)), (u) => [u.name, u.id])
}

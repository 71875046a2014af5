import { and, asc, eq, gt, or } from 'drizzle-orm'
import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { decodeCursor, page, pageLimit } from '../platform/paging'
import { services } from './service.table'

/** GET /services: active services by name with their rate cards. */
export function listServicesPage(ctx: OperationContext, query: { limit?: string; cursor?: string }) {
  requirePermission(ctx.actor, 'services:read')
  const { db } = ctx
  const accountId = ctx.scope.accountId
  const limit = pageLimit(query.limit)
  const after = query.cursor ? decodeCursor<[string, string]>(query.cursor, ['string', 'string'], { idPrefix: 'svc' }) : undefined
  const base = and(eq(services.accountId, accountId), eq(services.active, true))
  const where = after ? and(base, or(gt(services.name, after[0]), and(eq(services.name, after[0]), gt(services.id, after[1])))) : base
  const rows = db.select().from(services).where(where).orderBy(asc(services.name), asc(services.id)).limit(limit + 1).all()
  return page(rows, limit, (s) => ({ object: 'service' as const, id: s.id, name: s.name, service_type: s.serviceType, rates: s.rates }), (s) => [s.name, s.id])
}

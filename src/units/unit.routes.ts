import { Elysia, t } from 'elysia'
import type { AppDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { ListOf, PageQuery, PositionSchema } from '../jobs/job.model'
import { oneOf } from '../platform/schema'
import { listUnitsPage } from './list-units'
import { parsePositionReport, PositionError, recordPosition } from './record-position'

const Unit = t.Object({
  object: t.Literal('unit'),
  id: t.String(),
  name: t.String(),
  driver: t.Nullable(t.Object({ name: t.Nullable(t.String()), phone: t.Nullable(t.String()) })),
  status: oneOf(['available', 'busy', 'off_duty']),
  site_ids: t.Nullable(t.Array(t.String()), { description: 'The sites the unit serves, or null for every site of the account.' }),
  position: PositionSchema,
})

/** GET /api/v1/units, and position ingest from drivers' phones (OsmAnd protocol, Traccar Client). */
export function unitRoutes(auth: AuthPlugin, deps: AppDeps) {
  const ingest = async ({ request, query }: { request: Request; query: Record<string, string | undefined> }) => {
    let params: Record<string, unknown> = { ...query }
    let json: unknown
    if (request.method === 'POST') {
      const text = await request.text()
      const type = request.headers.get('content-type') ?? ''
      if (type.includes('json')) { try { json = JSON.parse(text) } catch { return new Response('invalid JSON\n', { status: 400 }) } }
      else if (text) params = { ...Object.fromEntries(new URLSearchParams(text)), ...params }
    }
    try {
      recordPosition(deps.db, deps.clock, parsePositionReport(params, json, deps.clock.now()))
      return new Response('OK\n', { status: 200, headers: { 'content-type': 'text/plain' } })
    } catch (err) {
      if (err instanceof PositionError) return new Response(err.message + '\n', { status: err.status, headers: { 'content-type': 'text/plain' } })
      throw err
    }
  }
  return new Elysia()
    .get('/osmand', ingest, { detail: { hide: true } })
    .post('/osmand', ingest, { detail: { hide: true } })
    .use(new Elysia({ prefix: '/api/v1' }).use(auth)
      .get('/units', ({ principal, query }) => listUnitsPage(deps.db, { accountId: principal.accountId, siteIds: principal.siteIds }, query), {
        scope: 'roster:read',
        query: PageQuery,
        response: { 200: ListOf(Unit) },
        detail: { summary: 'List units', description: 'Drivers and trucks by name (a key limited to sites sees the units serving them), each with its last shared position (null until the driver\'s phone reports) and status: available, busy (holds an unfinished job) or off_duty.', tags: ['Roster'] },
      }))
}

import { Elysia, t } from 'elysia'
import type { AppDeps } from '../app'
import type { AuthPlugin } from '../accounts/auth.plugin'
import { ListOf, PageQuery, PositionSchema } from '../jobs/job.model'
import { named, oneOf } from '../platform/schema'
import { routeProps } from '../platform/route-props'
import { parseUntrustedJson } from '../platform/json'
import { addressBucket } from '../platform/rate-limit'
import { limiterFor } from '../platform/shared-rate-limit'
import { requestInfo } from '../platform/request-info'
import { listUnitsPage } from './list-units'
import { parsePositionReport, PositionError, recordPosition } from './record-position'

/** A position report is a few hundred bytes; Traccar Client's JSON with its extras stays under 2 KiB. */
export const OSMAND_BODY_BYTES = 16 * 1024
/** Unknown device ids one client address may try a minute before it gets 429 (ids are guessable otherwise). */
export const UNKNOWN_DEVICES_PER_MINUTE = 20

const Unit = named('Unit', t.Object({
  object: t.Literal('unit'),
  id: t.String(),
  name: t.String(),
  driver: t.Nullable(t.Object({ name: t.Nullable(t.String()), phone: t.Nullable(t.String()) })),
  status: oneOf(['available', 'busy', 'off_duty']),
  site_ids: t.Nullable(t.Array(t.String()), { description: 'The sites the unit serves, or null for every site of the account.' }),
  position: PositionSchema,
}, { description: 'A truck and its driver.' }))

/** GET /api/v1/units, and position ingest from drivers' phones (OsmAnd protocol, Traccar Client). */
export function unitRoutes(auth: AuthPlugin, deps: AppDeps) {
  const plain = (status: number, text: string, headers: Record<string, string> = {}) =>
    new Response(`${text}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } })
  const misses = limiterFor(deps.db, deps.clock, { unknown_device: UNKNOWN_DEVICES_PER_MINUTE })
  /** Reads and stores one report; the status and text the device gets, limits aside. */
  const handle = (request: Request, query: Record<string, string | undefined>, body: unknown): { status: number; text: string } => {
    let params: Record<string, unknown> = { ...query }
    let json: unknown
    // A GET carries its report in the query; a POST's body is the text the route read (form or JSON).
    if (typeof body === 'string') {
      const type = request.headers.get('content-type') ?? ''
      if (type.includes('json')) {
        const parsed = parseUntrustedJson(body)
        if (!parsed.ok) return { status: 400, text: 'invalid JSON' }
        json = parsed.value
      } else if (body) params = { ...Object.fromEntries(new URLSearchParams(body)), ...params }
    }
    try {
      recordPosition(deps.db, deps.clock, parsePositionReport(params, json, deps.clock.now()))
      return { status: 200, text: 'OK' }
    } catch (err) {
      if (!(err instanceof PositionError)) throw err
      return { status: err.status, text: err.message }
    }
  }
  const tooMany = (retryAfterS: number) =>
    plain(429, `too many unknown device ids from this address; retry in ${retryAfterS} seconds`, { 'retry-after': String(retryAfterS) })
  const ingest = ({ request, query, body }: { request: Request; query: Record<string, string | undefined>; body: unknown }) => {
    const client = addressBucket(requestInfo(request).peer?.() ?? 'in-process')
    // While an address is limited, every report from it is answered 429 whatever it held, so
    // the answer never tells a known id from an unknown one. A known device's fix is still
    // stored: phones sharing an address (behind a proxy) with a misconfigured one keep reporting.
    const before = misses.peek(client, 'unknown_device')
    const outcome = handle(request, query, body)
    if (outcome.status === 404) {
      const miss = misses.take(client, 'unknown_device')
      if (!miss.allowed) return tooMany(miss.retryAfterS)
    }
    if (!before.allowed) return tooMany(before.retryAfterS)
    return plain(outcome.status, outcome.text)
  }
  return new Elysia().use(routeProps)
    // Phones post from no page of ours: no same-origin check; errors are plain text for the app's log.
    .get('/osmand', ingest, { answers: 'text', detail: { hide: true } })
    .post('/osmand', ingest, { answers: 'text', sameOrigin: false, accepts: { kind: 'text', maxBytes: OSMAND_BODY_BYTES }, detail: { hide: true } })
    .use(new Elysia({ prefix: '/api/v1' }).use(auth)
      .get('/units', ({ ctx, query }) => listUnitsPage(ctx, query), {
        scope: 'roster:read',
        query: PageQuery,
        response: { 200: ListOf(Unit) },
        detail: { operationId: 'listUnits', summary: 'List units', description: 'Drivers and trucks by name (a key limited to sites sees the units serving them), each with its last shared position (null until the driver\'s phone reports) and status: available, busy (holds an unfinished job) or off_duty.', tags: ['Roster'] },
      }))
}

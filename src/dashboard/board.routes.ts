import { Elysia } from 'elysia'
import { heartbeatTicks, resumeFrom, sseResponse } from '../pages/sse'
import type { RouteDeps } from '../app'
import { mapView } from '../pages/map'
import { escapeHtml } from '../platform/error-page'
import { boardCustomerMessages, listBoardJobs } from '../jobs/list-board-jobs'
import { listUnitsPage } from '../units/list-units'
import type { SessionPlugin } from '../users/session.plugin'
import { sessionIsLive, type SessionUser } from '../users/sessions'
import { BoardHub } from './board-hub'
import { boardColumns } from './board.page'
import { dashboardPage } from './shell'

/** `/board` (the dispatch board), its live stream and its state. */
export function boardRoutes(session: SessionPlugin, deps: RouteDeps) {
  const hub = new BoardHub({ db: deps.db, links: deps.links, bus: deps.bus, heartbeatTicks: heartbeatTicks(deps.config.idleTimeoutS), logger: deps.logger, isDraining: deps.isDraining })
  const units = (ctx: Parameters<typeof listBoardJobs>[0]) => listUnitsPage(ctx, { limit: '100' }).data

  return new Elysia({ name: 'towline.board' }).use(session)
    .get('/board', ({ ctx, user }) => {
      const position = hub.position
      const jobs = listBoardJobs(ctx)
      const now = deps.clock.now()
      const roster = units(ctx)
      const body = `<div class="board-toolbar">
<h1>Dispatch board</h1>
<form method="get" action="/jobs/new"><button type="submit">New job</button></form>
<label class="sound-toggle"><input type="checkbox" id="sound" name="sound"> Sound on new jobs</label>
<p class="live-status" role="status" id="live-status">Live updates start when the page's script loads.</p>
</div>
<div class="board-layout">
<div class="board board-columns" id="board" data-position="${position}" data-now="${now}">
${boardColumns(jobs, now, ctx.account.timeZone, boardCustomerMessages(ctx, jobs))}
</div>
<aside class="board-map" aria-labelledby="map-heading">
<h2 id="map-heading">Units</h2>
${mapView({ label: 'Units on the map', tileUrl: deps.config.tileUrl, places: roster.flatMap((u) => (u.position ? [{ id: u.id, lat: u.position.lat, lng: u.position.lng, name: u.name }] : [])) }).text}
<ul class="unit-list" id="unit-list">${roster.map((u) => `<li data-unit-id="${escapeHtml(u.id)}">${escapeHtml(u.name)}: ${u.status.replace('_', ' ')}${u.position ? '' : ' (no position yet)'}</li>`).join('')}</ul>
</aside>
</div>`
      return dashboardPage({ title: 'Dispatch board', user, active: 'board', body, scripts: ['dashboard.js', 'board.js', 'map.js'] })
    }, { signedIn: 'dispatcher' })
    .get('/board/state', ({ ctx }) => {
      const position = hub.position
      const jobs = listBoardJobs(ctx)
      return { position, jobs, columns_html: boardColumns(jobs, deps.clock.now(), ctx.account.timeZone, boardCustomerMessages(ctx, jobs)) }
    }, { signedIn: 'dispatcher', answers: 'json' })
    .get('/board/units', ({ ctx }) => ({ data: units(ctx) }), { signedIn: 'dispatcher', answers: 'json' })
    .get('/board/events', ({ request, query, user }) => boardStream(hub, request, user, resumeFrom(request, query as Record<string, unknown>), () => sessionIsLive(deps.db, deps.clock, user.sessionId)), { signedIn: 'dispatcher', answers: 'json' })
}

/** The board's Server-Sent Events stream: `hello`, then what was missed, then every change, with heartbeats; `signed_out` and the end when the session ends. */
function boardStream(hub: BoardHub, request: Request, user: SessionUser, after: number | null, isLive: () => boolean): Response {
  return sseResponse(request, { position: hub.position, resumed_from: after }, (sink) =>
    hub.connect({ accountId: user.accountId, siteIds: null, send: sink.send, close: sink.close, isLive }, after))
}

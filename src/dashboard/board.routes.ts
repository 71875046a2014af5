import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { mapView } from '../pages/map'
import { escapeHtml } from '../platform/error-page'
import { listBoardJobs } from '../jobs/list-board-jobs'
import { listUnitsPage } from '../units/list-units'
import type { SessionPlugin } from '../users/session.plugin'
import { sessionIsLive, type SessionUser } from '../users/sessions'
import { BoardHub } from './board-hub'
import { boardColumns } from './board.page'
import { dashboardPage } from './shell'

const encoder = new TextEncoder()

/**
 * Where a board resumes from: the Last-Event-ID header its EventSource sends on reconnect, else
 * `?last_event_id=` (the pages' live wrapper reopening a stream, web/shared/live.ts), else
 * `?after=` (the position the page was rendered at).
 */
function resumeFrom(request: Request, query: Record<string, unknown>): number | null {
  const fromQuery = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : null)
  const raw = request.headers.get('last-event-id') ?? fromQuery('last_event_id') ?? fromQuery('after')
  if (raw === null || !/^\d{1,15}$/.test(raw.trim())) return null
  return Number(raw.trim())
}

/** `/board` (the dispatch board), its live stream and its state. */
export function boardRoutes(session: SessionPlugin, deps: RouteDeps) {
  const hub = new BoardHub({ db: deps.db, links: deps.links, bus: deps.bus, logger: deps.logger, isDraining: deps.isDraining })
  const units = (ctx: Parameters<typeof listBoardJobs>[0]) => listUnitsPage(ctx, { limit: '100' }).data

  return new Elysia({ name: 'towline.board' }).use(session)
    .get('/board', ({ ctx, user }) => {
      const position = hub.position
      const jobs = listBoardJobs(ctx)
      const now = deps.clock.now()
      const roster = units(ctx)
      const body = `<div class="board-toolbar">
<h1>Dispatch board</h1>
<a class="button" href="/jobs/new">New job</a>
<label class="sound-toggle"><input type="checkbox" id="sound" name="sound"> Sound on new jobs</label>
<p class="live-status" role="status" id="live-status">Live updates start when the page's script loads.</p>
</div>
<div class="board-layout">
<div class="board board-columns" id="board" data-position="${position}" data-now="${now}">
${boardColumns(jobs, now)}
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
      return { position, jobs, columns_html: boardColumns(jobs, deps.clock.now()) }
    }, { signedIn: 'dispatcher', answers: 'json' })
    .get('/board/units', ({ ctx }) => ({ data: units(ctx) }), { signedIn: 'dispatcher', answers: 'json' })
    .get('/board/events', ({ request, query, user }) => boardStream(hub, request, user, resumeFrom(request, query as Record<string, unknown>), () => sessionIsLive(deps.db, deps.clock, user.sessionId)), { signedIn: 'dispatcher', answers: 'json' })
}

/** The board's Server-Sent Events stream: `hello`, then what was missed, then every change, with heartbeats; `signed_out` and the end when the session ends. */
function boardStream(hub: BoardHub, request: Request, user: SessionUser, after: number | null, isLive: () => boolean): Response {
  let disconnect = () => {}
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      const end = () => {
        if (!open) return
        open = false
        disconnect()
        try { controller.close() } catch {}
      }
      // `retry` tells the browser to reconnect after 2 s; the hello names where the stream starts.
      controller.enqueue(encoder.encode(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ position: hub.position, resumed_from: after })}\n\n`))
      disconnect = hub.connect({
        accountId: user.accountId,
        siteIds: null,
        send: (bytes) => { if (open) { try { controller.enqueue(bytes) } catch { end() } } },
        close: end,
        isLive,
      }, after)
      request.signal.addEventListener('abort', end, { once: true })
    },
    cancel() { disconnect() },
  })
  return new Response(stream, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
  })
}

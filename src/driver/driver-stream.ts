import type { JobEventBus } from '../jobs/job-event-bus'

const encoder = new TextEncoder()
/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 25_000
/** Events after which the link may have died: the stream checks it and says `gone`. */
const HANDOVERS = new Set(['job.reassigned', 'job.unassigned', 'job.assigned'])

/**
 * Where a stream resumes from: the Last-Event-ID header its EventSource sends on reconnect, else
 * `?last_event_id=` (web/shared/live.ts reopening a stream), else `?after=` (the position the
 * page was rendered at); null to start now.
 */
export function resumeFrom(request: Request, query: Record<string, unknown>): number | null {
  const fromQuery = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : null)
  const raw = request.headers.get('last-event-id') ?? fromQuery('last_event_id') ?? fromQuery('after')
  if (raw === null || !/^\d{1,15}$/.test(raw.trim())) return null
  return Number(raw.trim())
}

/** What the driver's stream needs: the bus, whether the server is draining, whether the link still leads to its job. */
export interface DriverStreamDeps { bus: JobEventBus; isDraining: () => boolean; stillLive: () => boolean }

/**
 * The driver's page's Server-Sent Events stream: `hello`, then each event of this job only (its
 * type; the page re-reads `/d/{token}/state`), resumed by Last-Event-ID; `gone` and the end when
 * the link dies (the job handed to another unit or taken off it).
 */
export function driverStream(deps: DriverStreamDeps, request: Request, jobId: string, after: number | null): Response {
  let stop = () => {}
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      let heartbeat: ReturnType<typeof setInterval> | undefined
      const send = (s: string) => { if (open) { try { controller.enqueue(encoder.encode(s)) } catch { end() } } }
      const end = () => {
        if (!open) return
        open = false
        clearInterval(heartbeat)
        stop()
        try { controller.close() } catch {}
      }
      send(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ position: deps.bus.position, resumed_from: after })}\n\n`)
      stop = deps.bus.subscribe(after ?? deps.bus.position, (e) => {
        if (!open || e.event.jobId !== jobId) return
        if (HANDOVERS.has(e.event.type) && !deps.stillLive()) {
          send(`id: ${e.position}\nevent: gone\ndata: {}\n\n`)
          end()
          return
        }
        send(`id: ${e.position}\nevent: job\ndata: ${JSON.stringify({ type: e.event.type, status: e.event.toStatus })}\n\n`)
      })
      heartbeat = setInterval(() => (deps.isDraining() ? end() : send(': heartbeat\n\n')), HEARTBEAT_MS)
      request.signal.addEventListener('abort', end, { once: true })
    },
    cancel() { stop() },
  })
  return new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } })
}

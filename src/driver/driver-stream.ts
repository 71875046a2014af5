import type { JobEventBus } from '../jobs/job-event-bus'
import { sseResponse } from '../pages/sse'

const encoder = new TextEncoder()
/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 25_000
/** Events after which the link may have died: the stream checks it and says `gone`. */
const HANDOVERS = new Set(['job.reassigned', 'job.unassigned', 'job.assigned'])

/** What the driver's stream needs: the bus, whether the server is draining, whether the link still leads to its job. */
export interface DriverStreamDeps { bus: JobEventBus; isDraining: () => boolean; stillLive: () => boolean }

/**
 * The driver's page's Server-Sent Events stream: `hello`, then each event of this job only (its
 * type; the page re-reads `/d/{token}/state`), resumed by Last-Event-ID; `gone` and the end when
 * the link dies (the job handed to another unit or taken off it).
 */
export function driverStream(deps: DriverStreamDeps, request: Request, jobId: string, after: number | null): Response {
  return sseResponse(request, { position: deps.bus.position, resumed_from: after }, (sink) => {
    const send = (text: string) => sink.send(encoder.encode(text))
    const stop = deps.bus.subscribe(after ?? deps.bus.position, (e) => {
      if (e.event.jobId !== jobId) return
      if (HANDOVERS.has(e.event.type) && !deps.stillLive()) {
        send(`id: ${e.position}\nevent: gone\ndata: {}\n\n`)
        sink.close()
        return
      }
      send(`id: ${e.position}\nevent: job\ndata: ${JSON.stringify({ type: e.event.type, status: e.event.toStatus })}\n\n`)
    })
    const heartbeat = setInterval(() => (deps.isDraining() ? sink.close() : send(': heartbeat\n\n')), HEARTBEAT_MS)
    return () => { clearInterval(heartbeat); stop() }
  })
}

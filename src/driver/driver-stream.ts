import type { JobEventBus } from '../jobs/job-event-bus'
import { HEARTBEAT, sseResponse } from '../pages/sse'

const encoder = new TextEncoder()
/** Events after which the link may have died: the stream checks it and says `gone`. */
const HANDOVERS = new Set(['job.reassigned', 'job.unassigned', 'job.assigned'])

/**
 * What the driver's stream needs: the bus, whether the server is draining, whether the link
 * still leads to its job, and the seconds between heartbeats (pages/sse.ts heartbeatTicks).
 */
export interface DriverStreamDeps { bus: JobEventBus; isDraining: () => boolean; stillLive: () => boolean; heartbeatTicks: number }

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
    // Each second: ended at once when shutdown begins (draining is not held), a heartbeat every few.
    let ticks = 0
    const timer = setInterval(() => {
      if (deps.isDraining()) sink.close()
      else if (++ticks % deps.heartbeatTicks === 0) sink.send(HEARTBEAT)
    }, 1000)
    return () => { clearInterval(timer); stop() }
  })
}

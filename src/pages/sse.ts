/**
 * Server-Sent Events for the pages' live streams (the board, the driver's page, the tracking
 * page): one response shape, one way to resume, one way to end.
 */
const encoder = new TextEncoder()

/** What every live stream sends when it has nothing else to say (a comment: EventSource ignores it). */
export const HEARTBEAT = encoder.encode(': heartbeat\n\n')

/**
 * How many one-second ticks apart a live stream sends its heartbeat: at most six tenths of the
 * server's idle timeout (Bun closes a connection that sent and received nothing for that long,
 * TOWLINE_IDLE_TIMEOUT_SECONDS, 10 by default: a heartbeat every 6 s), so that a quiet stream is
 * never cut and its page never has to reconnect.
 */
export function heartbeatTicks(idleTimeoutS: number): number {
  return Math.max(1, Math.floor(idleTimeoutS * 0.6))
}

/** Where a stream writes, and how it ends itself. */
export interface SseSink {
  /** Writes bytes that are already SSE messages; a stream that is gone is ended instead. */
  send(bytes: Uint8Array): void
  /** Ends the stream (the client's EventSource then reconnects, unless told otherwise). */
  close(): void
}

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

/**
 * A text/event-stream response: `retry: 2000` (reconnect after 2 s) and `event: hello` with
 * `hello` as its data, then whatever `attach` sends through the sink. `attach` returns how to
 * detach it; that runs once, when the client goes away or the sink is closed.
 */
export function sseResponse(request: Request, hello: unknown, attach: (sink: SseSink) => () => void): Response {
  let detach = () => {}
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      const sink: SseSink = {
        send: (bytes) => { if (open) { try { controller.enqueue(bytes) } catch { sink.close() } } },
        close: () => {
          if (!open) return
          open = false
          detach()
          try { controller.close() } catch {}
        },
      }
      controller.enqueue(encoder.encode(`retry: 2000\nevent: hello\ndata: ${JSON.stringify(hello)}\n\n`))
      const attached = attach(sink)
      // Closed while attaching (a catch-up that found the stream dead): detach at once.
      if (open) detach = attached
      else attached()
      request.signal.addEventListener('abort', sink.close, { once: true })
    },
    cancel() { detach() },
  })
  return new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } })
}

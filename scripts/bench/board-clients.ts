/**
 * The boards of scripts/bench (boards section), and the tracking pages of its pages section, in
 * a process of their own: many Server-Sent Events connections to /board/events (one session
 * cookie each) or to one /t/{token}/events, each read as a browser's EventSource reads it, noting
 * for every message (by its `id`, the event's global position) when the first and the last
 * connection received it (performance.timeOrigin + performance.now(): wall-clock milliseconds
 * comparable across processes on one machine). Its own process so that reading 200 streams
 * never delays the bench's writes or their clocks, and the other way round.
 *
 * Control, on a plain HTTP server (it prints "listening on http://127.0.0.1:<port>"):
 *   POST /connect   {"url": ".../board/events", "cookies": ["towline_session=...", ...]}
 *                   opens one connection per cookie (or {"url", "count": n, "event": "state"}:
 *                   n connections without a cookie, counting `state` messages instead of `job`);
 *                   answers once every one said hello:
 *                   {"connected": n, "ms": ...} (or an error after 60 s)
 *   GET  /complete?after=P&timeout=MS
 *                   waits for the first position above P that every open connection has
 *                   received: {"position", "first", "last", "count", "type"} or {"timeout": true, ...}
 *   GET  /status    {"open", "hellos", "closed", "errors", "messages", "bytes"}
 *   POST /close     ends every connection
 */
const wallMs = () => performance.timeOrigin + performance.now()

interface Arrival { first: number; last: number; count: number; type: string | null }

const arrivals = new Map<number, Arrival>()
const controllers: AbortController[] = []
let open = 0
let hellos = 0
let closed = 0
let messages = 0
let bytes = 0
const errors: string[] = []
let waiters: (() => void)[] = []
let onHello: (() => void) | null = null
/** The event name whose messages are counted (`job` on the board, `state` on the tracking page). */
let countedEvent = 'job'

const TYPE = /"type":"([a-z_.]+)"/

/** Reads one stream until it ends, noting each message's arrival. */
async function readStream(url: string, cookie: string, abort: AbortController): Promise<void> {
  let counted = false
  try {
    const res = await fetch(url, { headers: { ...(cookie ? { cookie } : {}), accept: 'text/event-stream' }, signal: abort.signal })
    if (res.status !== 200 || !res.body) throw new Error(`${url} answered ${res.status}`)
    open++
    counted = true
    const decoder = new TextDecoder()
    let buf = ''
    for await (const chunk of res.body) {
      const at = wallMs() // the chunk is here: this is when the board has the message
      bytes += chunk.byteLength
      buf += decoder.decode(chunk, { stream: true })
      let end: number
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end)
        buf = buf.slice(end + 2)
        if (block.startsWith(':')) continue // heartbeat
        let id: number | null = null
        let event = 'message'
        for (const line of block.split('\n', 3)) {
          if (line.startsWith('id: ')) id = Number(line.slice(4))
          else if (line.startsWith('event: ')) event = line.slice(7)
        }
        if (event === 'hello') { hellos++; onHello?.(); continue }
        if (id === null || event !== countedEvent) continue
        messages++
        const a = arrivals.get(id)
        if (a) { a.count++; a.last = Math.max(a.last, at); a.first = Math.min(a.first, at) } else arrivals.set(id, { first: at, last: at, count: 1, type: TYPE.exec(block)?.[1] ?? null })
        if ((a?.count ?? 1) >= open) { const w = waiters; waiters = []; for (const f of w) f() }
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) errors.push(String(err instanceof Error ? err.message : err))
  } finally {
    if (counted) { open--; closed++ }
    const w = waiters; waiters = []; for (const f of w) f()
  }
}

/** The first position above `after` every open connection has received, or null. */
function completeAfter(after: number): ({ position: number } & Arrival) | null {
  let best: ({ position: number } & Arrival) | null = null
  for (const [position, a] of arrivals) if (position > after && a.count >= open && (!best || position < best.position)) best = { position, ...a }
  return best
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 120,
  async fetch(req) {
    const url = new URL(req.url)
    if (req.method === 'POST' && url.pathname === '/connect') {
      const body = (await req.json()) as { url: string; cookies?: string[]; count?: number; event?: string }
      const target = body.url
      const cookies = body.cookies ?? Array.from({ length: body.count ?? 0 }, () => '')
      countedEvent = body.event ?? 'job'
      const started = wallMs()
      const want = hellos + cookies.length
      const ready = new Promise<void>((resolve) => { onHello = () => { if (hellos >= want) resolve() } })
      for (const cookie of cookies) {
        const abort = new AbortController()
        controllers.push(abort)
        void readStream(target, cookie, abort)
      }
      const ok = await Promise.race([ready.then(() => true), Bun.sleep(60_000).then(() => false)])
      onHello = null
      if (!ok) return json({ error: `only ${hellos} of ${want} connections said hello in 60 s`, errors: errors.slice(0, 5) }, 500)
      return json({ connected: open, ms: wallMs() - started })
    }
    if (url.pathname === '/complete') {
      const after = Number(url.searchParams.get('after'))
      const deadline = wallMs() + Number(url.searchParams.get('timeout') ?? 5000)
      for (;;) {
        const found = completeAfter(after)
        if (found) return json(found)
        const left = deadline - wallMs()
        if (left <= 0) {
          const partial = [...arrivals].filter(([p]) => p > after).sort((x, y) => x[0] - y[0])[0]
          return json({ timeout: true, open, partial: partial ? { position: partial[0], count: partial[1].count } : null })
        }
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), Bun.sleep(left)])
      }
    }
    if (url.pathname === '/status') return json({ open, hellos, closed, errors: errors.slice(0, 5), messages, bytes })
    if (req.method === 'POST' && url.pathname === '/close') {
      for (const c of controllers.splice(0)) c.abort()
      return json({ closing: true })
    }
    return json({ error: 'not found' }, 404)
  },
})
process.stderr.write(`board clients listening on http://127.0.0.1:${server.port}\n`)

export {} // a module: its names are its own, not the DOM's globals

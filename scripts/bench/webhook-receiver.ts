/**
 * The webhook receiver for scripts/bench (webhooks section), in its own process so it never
 * shares the bench's or towline's event loop: an HTTPS Bun.serve with the certificate the bench
 * made (CERT_PATH, KEY_PATH) that answers 200 at once, and notes for every request its arrival
 * time (performance.timeOrigin + performance.now(): wall-clock milliseconds with sub-ms
 * precision, comparable across processes on one machine), the endpoint (path /e/<n>), the job
 * id and event type of the envelope, and its attempt number.
 *
 * A second, plain-HTTP server on another port is the control channel for the bench:
 *   GET  /count     {"count": n}                   arrivals since the last reset
 *   GET  /arrivals  {"t":[], "ep":[], "job":[], "type":[], "attempt":[]}  every arrival since the last reset
 *   GET  /sample    {"body": "...", "headers": {...}}  the last job.created as it came (for the fetch baseline)
 *   POST /reset     forgets every arrival
 * It prints "receiver listening on http://127.0.0.1:<control port> https=<https port>".
 */
import { readFileSync } from 'node:fs'

const certPath = process.env.CERT_PATH
const keyPath = process.env.KEY_PATH
if (!certPath || !keyPath) throw new Error('CERT_PATH and KEY_PATH must name the server certificate and key')

const wallMs = () => performance.timeOrigin + performance.now()

let t: number[] = []
let ep: number[] = []
let job: (string | null)[] = []
let type: (string | null)[] = []
let attempt: (number | null)[] = []
let sample: { body: string; headers: Record<string, string> } | null = null

const OK = '{"ok":true}'

const https = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false,
  tls: { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') },
  async fetch(req) {
    const at = wallMs() // headers are in: this is the arrival
    const raw = await req.text()
    const path = req.url.slice(req.url.indexOf('/', 8))
    let jobId: string | null = null
    let eventType: string | null = null
    let n: number | null = null
    try {
      const body = JSON.parse(raw) as { type?: string; attempt?: number; data?: { job?: { id?: string } } }
      jobId = body.data?.job?.id ?? null
      eventType = body.type ?? null
      n = body.attempt ?? null
    } catch {
      // Not an envelope: counted all the same.
    }
    t.push(at)
    ep.push(path.startsWith('/e/') ? Number.parseInt(path.slice(3), 10) : -1)
    job.push(jobId)
    type.push(eventType)
    attempt.push(n)
    if (eventType === 'job.created') sample = { body: raw, headers: Object.fromEntries(req.headers) }
    return new Response(OK, { headers: { 'content-type': 'application/json' } })
  },
})

const control = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false,
  fetch(req) {
    const path = new URL(req.url).pathname
    if (path === '/count') return Response.json({ count: t.length })
    if (path === '/arrivals') return Response.json({ t, ep, job, type, attempt })
    if (path === '/sample') return sample ? Response.json(sample) : new Response('no request yet', { status: 404 })
    if (path === '/reset' && req.method === 'POST') {
      t = []; ep = []; job = []; type = []; attempt = []
      return Response.json({ ok: true })
    }
    return new Response('not found', { status: 404 })
  },
})

process.stderr.write(`receiver listening on http://127.0.0.1:${control.port} https=${https.port}\n`)
process.on('SIGTERM', () => { https.stop(true); control.stop(true); process.exit(0) })

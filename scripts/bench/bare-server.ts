/**
 * The baseline for scripts/bench: a bare Bun.serve that answers every request with a JSON body
 * of BODY_BYTES bytes. It runs in its own process, so it does not share the bench's CPU, and
 * prints the same "listening on" line as towline so one helper starts both.
 */
const size = Number(process.env.BODY_BYTES ?? 417)
const skeleton = '{"pad":""}'
if (!Number.isInteger(size) || size < skeleton.length) throw new Error(`BODY_BYTES must be a whole number ≥ ${skeleton.length}`)
const body = `{"pad":"${'x'.repeat(size - skeleton.length)}"}`

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false,
  fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
})
process.stderr.write(`bare listening on http://127.0.0.1:${server.port} (body ${body.length} bytes)\n`)
process.on('SIGTERM', () => { server.stop(true); process.exit(0) })

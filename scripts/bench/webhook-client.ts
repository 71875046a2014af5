/**
 * The baseline for the webhooks section of scripts/bench: bare `fetch` POSTs from a bun process
 * of its own to the bench's HTTPS receiver, with the body and headers of a real delivery, on
 * STREAMS parallel streams (stream n posts to /e/<n> one request after another, as towline
 * does with one delivery in flight per endpoint). Trusts the bench's CA through
 * NODE_EXTRA_CA_CERTS, as towline does.
 *
 * Env: TARGET (https://127.0.0.1:PORT), BODY_FILE, HEADERS_FILE (JSON object), STREAMS,
 * SECONDS, WARMUP_SECONDS. Prints one line: BENCH_JSON {"requests","seconds","rps","p50Ms","p99Ms","failures","cpuSeconds"}
 * (cpuSeconds: this process's user + system CPU over the measured part).
 */
import { readFileSync } from 'node:fs'

const num = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0`)
  return n
}
const target = process.env.TARGET
const bodyFile = process.env.BODY_FILE
const headersFile = process.env.HEADERS_FILE
if (!target || !bodyFile || !headersFile) throw new Error('TARGET, BODY_FILE and HEADERS_FILE are required')
const body = readFileSync(bodyFile, 'utf8')
const headers = JSON.parse(readFileSync(headersFile, 'utf8')) as Record<string, string>
const streams = num('STREAMS', 50)
const seconds = num('SECONDS', 10)
const warmupSeconds = num('WARMUP_SECONDS', 1)

/** Runs every stream until `untilMs`; returns the latencies (ms) of the requests that finished 200. */
async function drive(untilMs: number): Promise<{ latencies: number[]; failures: number }> {
  const latencies: number[] = []
  let failures = 0
  await Promise.all(Array.from({ length: streams }, async (_, n) => {
    const url = `${target}/e/${n}`
    while (performance.now() < untilMs) {
      const started = performance.now()
      try {
        const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', keepalive: true } as RequestInit)
        await res.arrayBuffer()
        if (res.status === 200) latencies.push(performance.now() - started)
        else failures++
      } catch {
        failures++
      }
    }
  }))
  return { latencies, failures }
}

if (warmupSeconds > 0) await drive(performance.now() + warmupSeconds * 1000)
const cpuBefore = process.cpuUsage()
const started = performance.now()
const { latencies, failures } = await drive(started + seconds * 1000)
const elapsed = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpuBefore)
latencies.sort((a, b) => a - b)
const pct = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]! : 0)
const cpuSeconds = (cpu.user + cpu.system) / 1e6
process.stdout.write(`BENCH_JSON ${JSON.stringify({ requests: latencies.length, seconds: elapsed, rps: latencies.length / elapsed, p50Ms: pct(50), p99Ms: pct(99), failures, cpuSeconds })}\n`)

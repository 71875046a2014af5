/**
 * The "import" section (issue 14's Measure): a CSV import of 500 rows, every column filled,
 * against the compiled binary. Timed through `towline jobs import` (the console, its own process
 * on the database the server serves) and through the dashboard's POST /import (inside the
 * server); meanwhile readers call GET /api/v1/jobs/{id} in a closed loop, and their p99 is set
 * beside the p99 of the same readers with no import running (goal: within 2x).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BenchContext, RunningServer, Section } from './lib'
import { fmt, median, pct, runCommand } from './lib'
import { createBenchKey, startTowline, towlineEnv } from './frame'
import { createBenchLogin, pageOrigin, signInSession } from './sign-in'

const ROWS = 500
const RUNS = 5
const READERS = 4
const TARGET_RATIO = 2

/** A 500-row file of finished jobs with every column filled; `tag` keeps its references unique. */
function importFile(tag: string): string {
  const header = 'external_ref,status,created_at,customer.name,customer.phone,customer.sms_consent,vehicle.year,vehicle.make,vehicle.model,vehicle.color,vehicle.plate,vehicle.drive_type,pickup.location,pickup.lat,pickup.lng,destination,service_type,payer_type,urgency,source,quote_cents,final_price_cents,payment_method,cancel_reason,confirmed_at,completed_at,cancelled_at'
  const lines = [header]
  for (let i = 0; i < ROWS; i++) {
    const day = String(1 + (i % 28)).padStart(2, '0')
    const cancelled = i % 7 === 0
    lines.push([
      `${tag}-${i}`, cancelled ? 'cancelled' : 'completed', `2026-03-${day}T14:05:00-08:00`, `"Lee, Customer ${i}"`, '+15035550142', 'true',
      '2019', 'Honda', 'Civic', 'Blue', `7ABC${i}`, 'fwd', `"${100 + i} SE Main St\nPortland, OR"`, '45.5231', '-122.6765', "Joe's Garage",
      'flatbed', 'motor_club', 'urgent', 'motor_club', '18500', cancelled ? '' : '19750', cancelled ? '' : 'card', cancelled ? 'Customer found another ride' : '',
      `2026-03-${day}T14:06:00-08:00`, cancelled ? '' : `2026-03-${day}T15:40:00-08:00`, cancelled ? `2026-03-${day}T14:30:00-08:00` : '',
    ].join(','))
  }
  return lines.join('\r\n') + '\r\n'
}

/** Calls GET /api/v1/jobs/{id} from READERS closed loops until `stop` resolves; returns every latency (ms). */
async function readWhile(server: RunningServer, key: string, ids: string[], stop: Promise<unknown>): Promise<number[]> {
  const times: number[] = []
  let done = false
  void stop.finally(() => { done = true })
  await Promise.all(Array.from({ length: READERS }, async (_, r) => {
    for (let i = r; !done; i += READERS) {
      const started = performance.now()
      const res = await fetch(`${server.baseUrl}/api/v1/jobs/${ids[i % ids.length]}`, { headers: { authorization: `Bearer ${key}` } })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`GET /jobs/{id} answered ${res.status}`)
      times.push(performance.now() - started)
    }
  }))
  return times
}

/** Posts a file to /import as the page's Import button does; resolves when the server answered. */
async function postImport(server: RunningServer, cookie: string, csv: string): Promise<void> {
  const form = new FormData()
  form.set('file', new File([csv], 'history.csv', { type: 'text/csv' }))
  form.set('action', 'import')
  const res = await fetch(`${server.baseUrl}/import`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: pageOrigin(server) }, body: form })
  const body = await res.text()
  if (res.status !== 303) throw new Error(`POST /import answered ${res.status}: ${body.slice(0, 300)}`)
}

/** Runs `importOnce` RUNS times with readers alongside; records the import's time and the readers' p99 beside the baseline's. */
async function measure(ctx: BenchContext, label: string, server: RunningServer, key: string, ids: string[], baselineP99: number, importOnce: (run: number) => Promise<void>) {
  const walls: number[] = []
  const during: number[] = []
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now()
    const work = importOnce(run).then(() => walls.push(performance.now() - started))
    during.push(...await readWhile(server, key, ids, work))
    await work
  }
  during.sort((a, b) => a - b)
  const p99 = pct(during, 99)
  ctx.log(`${label}: median ${fmt(median(walls))} ms for ${ROWS} rows (runs: ${walls.map((w) => fmt(w)).join(', ')} ms); reads during it: ${during.length}, p99 ${fmt(p99, 1)} ms`)
  ctx.record({ metric: `${label}: time for ${ROWS} rows, median of ${RUNS}`, value: `${fmt(median(walls))} ms`, target: '', pass: null })
  ctx.record({ metric: `${label}: GET /jobs/{id} p99 during it / without`, value: `${fmt(p99, 1)} / ${fmt(baselineP99, 1)} ms (${fmt(p99 / baselineP99, 2)}x)`, target: `<= ${TARGET_RATIO}x`, pass: p99 <= TARGET_RATIO * baselineP99 })
}

/** The section (see the top of this file). */
export const importSection: Section = {
  name: 'import',
  summary: `CSV import of ${ROWS} rows (console and page): time, and GET /jobs/{id} p99 while it runs vs without`,
  async run(ctx) {
    const db = join(ctx.tmp, 'import.db')
    const key = await createBenchKey(ctx, db)
    const login = await createBenchLogin(ctx, db)
    const { server } = await startTowline(ctx, db)
    const cookie = await signInSession(server, login)
    const ids: string[] = []
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${server.baseUrl}/api/v1/jobs`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ customer: { name: `Reader ${i}`, phone: '+15035550100' }, pickup: { location: `${i} Main St` } }) })
      const job = await res.json() as { id: string }
      ids.push(job.id)
    }
    // The baseline: the same readers for about as long as the imports take, with nothing else running.
    const baseline = await readWhile(server, key, ids, Bun.sleep(4000))
    baseline.sort((a, b) => a - b)
    const baselineP99 = pct(baseline, 99)
    ctx.log(`reads alone: ${baseline.length} in 4 s, median ${fmt(median(baseline), 2)} ms, p99 ${fmt(baselineP99, 1)} ms`)
    ctx.record({ metric: `GET /jobs/{id} alone (${READERS} readers): median / p99`, value: `${fmt(median(baseline), 2)} / ${fmt(baselineP99, 1)} ms`, target: '', pass: null })

    const files = Array.from({ length: RUNS }, (_, i) => { const p = join(ctx.tmp, `import-${i}.csv`); writeFileSync(p, importFile(`B${i}`)); return p })
    await measure(ctx, 'towline jobs import (console)', server, key, ids, baselineP99, async (run) => {
      await runCommand(ctx.children, [ctx.binary, 'jobs', 'import', files[run]!, '--db', db], { cwd: ctx.root, env: towlineEnv() })
    })
    await measure(ctx, 'POST /import (dashboard)', server, key, ids, baselineP99, async (run) => {
      await postImport(server, cookie, importFile(`P${run}`))
    })
    ctx.note(`import: ${ROWS} rows a file, ${RUNS} files per way, every column filled (quoted commas and newlines); ${READERS} closed-loop readers of GET /api/v1/jobs/{id} over 200 jobs; the console's time includes its process start`)
    await ctx.children.stop(server.proc)
  },
}

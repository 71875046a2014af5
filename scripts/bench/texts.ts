/**
 * The "texts" section: how soon a customer's text reaches Twilio after the API answers, and
 * how fast the outbox drains a burst. Towline (the compiled binary) runs with the twilio
 * provider pointed at the local stand-in of the tests (test/twilio-standin.ts, in this
 * process), which notes when each create arrives. No targets: the issue sets none; the
 * figures say whether texts keep up with the jobs that cause them.
 *
 * 1. Idle: jobs created one at a time, a few ms apart; 201 → create at the stand-in, p50/p99.
 * 2. Burst: POST /jobs at 100/s (open loop) for BENCH_SECONDS: texts/s arriving while the
 *    writes ran, and the time to drain what was left.
 */
import { join } from 'node:path'
import type { BenchContext, Section } from './lib'
import { fmt, ms, pct, wallMs } from './lib'
import { createBenchKey, startTowline } from './frame'
import { startTwilioStandin, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN } from '../../test/twilio-standin'

const IDLE_JOBS = 200
const IDLE_GAP_MS = 5
const WRITE_RATE = 100

/** A distinct customer number per job, so each arrival names its job. */
const phoneOf = (n: number) => `+1971555${String(n).padStart(4, '0')}`

async function run(ctx: BenchContext): Promise<void> {
  const arrivals = new Map<string, number>()
  const twilio = startTwilioStandin({ answer: (to) => { if (!arrivals.has(to)) arrivals.set(to, wallMs()); return 'ok' } })
  const db = join(ctx.tmp, 'texts.db')
  const { server } = await startTowline(ctx, db, {
    env: { TOWLINE_SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: TWILIO_SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM, TOWLINE_TWILIO_API_BASE: twilio.apiBase },
  })
  try {
    const key = await createBenchKey(ctx, db)
    let n = 0
    const create = async () => {
      const phone = phoneOf(n++)
      const res = await fetch(`${server.baseUrl}/api/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ customer: { name: 'Bench', phone, sms_consent: true }, pickup: { location: 'I-5 N at exit 299B' } }),
      })
      const answeredAt = wallMs()
      await res.arrayBuffer()
      if (res.status !== 201) throw new Error(`POST /api/v1/jobs answered ${res.status}`)
      return { phone, answeredAt }
    }
    const latencies = (created: { phone: string; answeredAt: number }[]) => created.map((c) => (arrivals.get(c.phone) ?? Number.NaN) - c.answeredAt).filter((v) => !Number.isNaN(v)).sort((a, b) => a - b)
    const waitAll = async (created: { phone: string }[], timeoutMs: number) => {
      const end = Date.now() + timeoutMs
      while (created.some((c) => !arrivals.has(c.phone)) && Date.now() < end) await Bun.sleep(5)
    }

    // 1. Idle queue.
    const idle = []
    for (let i = 0; i < IDLE_JOBS; i++) { idle.push(await create()); await Bun.sleep(IDLE_GAP_MS) }
    await waitAll(idle, 10_000)
    const il = latencies(idle)
    ctx.log(`idle: ${il.length}/${IDLE_JOBS} texts arrived; 201 → Twilio p50 ${ms(pct(il, 50))}, p99 ${ms(pct(il, 99))}`)
    ctx.record({ metric: 'idle: 201 → text at Twilio p50 / p99', value: `${ms(pct(il, 50))} / ${ms(pct(il, 99))}`, target: '', pass: null })

    // 2. A burst at WRITE_RATE jobs/s.
    const seconds = ctx.settings.seconds
    const total = WRITE_RATE * seconds
    const start = wallMs()
    const pending: Promise<{ phone: string; answeredAt: number }>[] = []
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / WRITE_RATE
      const wait = due - wallMs()
      if (wait > 0) await Bun.sleep(wait)
      pending.push(create())
    }
    const burst = await Promise.all(pending)
    const writesDone = wallMs()
    const during = burst.filter((c) => (arrivals.get(c.phone) ?? Infinity) <= writesDone).length
    await waitAll(burst, 60_000)
    const drained = Math.max(0, ...burst.map((c) => arrivals.get(c.phone) ?? Number.NaN)) - writesDone
    const bl = latencies(burst)
    ctx.log(`burst: ${total} jobs in ${fmt((writesDone - start) / 1000, 1)} s; ${during} texts arrived meanwhile; all ${bl.length} arrived ${ms(Math.max(0, drained))} after the last 201`)
    ctx.record({ metric: `burst ${WRITE_RATE} jobs/s: texts/s arriving while writing`, value: fmt(during / ((writesDone - start) / 1000), 1), target: '', pass: null })
    ctx.record({ metric: `burst ${WRITE_RATE} jobs/s: 201 → text at Twilio p50 / p99`, value: `${ms(pct(bl, 50))} / ${ms(pct(bl, 99))}`, target: '', pass: null })
    ctx.record({ metric: `burst: texts not at Twilio after 60 s`, value: fmt(total - bl.length), target: '0', pass: bl.length === total })
    const dupes = twilio.creates.length - arrivals.size
    ctx.record({ metric: 'texts sent twice', value: fmt(dupes), target: '0', pass: dupes === 0 })
  } finally {
    await ctx.children.stop(server.proc)
    twilio.stop()
  }
}

export const texts: Section = {
  name: 'texts',
  summary: 'customer texts reaching a local Twilio stand-in: idle latency and a 100 jobs/s burst',
  run,
}

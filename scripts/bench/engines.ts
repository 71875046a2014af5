/**
 * The "engines" section: the same binary on SQLite and on PostgreSQL, side by side in one run on
 * one machine. For each engine: GET /api/v1/jobs/{id} and POST /api/v1/jobs (requests/s and
 * latency, default settings and log level, output to a file), and webhook fan-out (one burst of
 * jobs to 10 endpoints on a local HTTPS receiver: deliveries per second until the last arrives).
 * Then on PostgreSQL, two instances on the one database against one: reads and creates, each
 * instance loaded by its own client at once, requests/s summed; and the fan-out burst written
 * through both, delivered by both (their schedulers claim side by side). Each fan-out's
 * endpoints are deleted after it, so the loads before and after run with no endpoint.
 *
 * PostgreSQL is a throwaway cluster started for the section (test/pg.ts: initdb in a temporary
 * folder, fsync on, as an operator's would be), on this machine's loopback like everything else.
 */
import { join } from 'node:path'
import type { BenchContext, LoadResult, RunningServer, Section } from './lib'
import { fmt, loadTest } from './lib'
import { recordLoad, startTowline } from './frame'
import { makeCerts, Receiver } from './webhooks'
import { startPgCluster, type PgCluster } from '../../test/pg'

const ENDPOINTS = 10
const FANOUT_JOBS = 200
const READ_JOBS = 200

interface Engine { name: 'SQLite' | 'PostgreSQL'; db: string; env: Record<string, string>; /** Where its servers' logs go (a file per start). */ log: string }

/** Runs a console command of the binary on `engine`'s database and returns its stdout. */
function command(ctx: BenchContext, engine: Engine, args: string[]): string {
  const r = Bun.spawnSync([ctx.binary, ...args, '--db', engine.db], { cwd: ctx.root, env: { ...process.env, ...engine.env }, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`towline ${args.join(' ')} failed: ${r.stderr.toString()}`)
  return r.stdout.toString()
}

async function post(server: RunningServer, key: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${server.baseUrl}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`POST ${server.baseUrl} ${path} answered ${res.status}: ${await res.text()}`)
  return res.json()
}

const JOB = (ref: string) => ({ external_ref: ref, customer: { name: 'Bench Customer', phone: '+15035550100', sms_consent: false }, pickup: { location: 'I-5 N exit 299B', lat: 45.5, lng: -122.6 }, vehicle: { make: 'Ford', model: 'F-150' } })

/** Reads and creates on one running instance; returns both load results. */
async function readsAndCreates(ctx: BenchContext, server: RunningServer, key: string, ids: string[]): Promise<{ reads: LoadResult; creates: LoadResult }> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const reads = await loadTest(ctx, { url: server.baseUrl, pid: server.proc.pid, headers, paths: ids.map((id) => `/api/v1/jobs/${id}`) })
  const creates = await loadTest(ctx, { url: `${server.baseUrl}/api/v1/jobs`, pid: server.proc.pid, headers, method: 'POST', body: JSON.stringify(JOB('B-{seq}')) })
  return { reads, creates }
}

/**
 * One burst of jobs fanned out to ENDPOINTS endpoints, the jobs written through `servers` in
 * turn: deliveries per second until the last one arrived. The endpoints are deleted after.
 */
async function fanOut(servers: RunningServer[], key: string, receiver: Receiver, tag: string): Promise<number> {
  await receiver.reset()
  const endpoints: string[] = []
  for (let e = 0; e < ENDPOINTS; e++) endpoints.push((await post(servers[0]!, key, '/webhooks', { url: `${receiver.httpsUrl}/e/${e}`, events: ['job.created'] })).id)
  const started = performance.now()
  await Promise.all(Array.from({ length: FANOUT_JOBS }, (_, i) => post(servers[i % servers.length]!, key, '/jobs', JOB(`${tag}-${i}`))))
  const want = ENDPOINTS * FANOUT_JOBS
  const got = await receiver.waitForCount(want, 120_000)
  if (got < want) throw new Error(`only ${got} of ${want} deliveries arrived in 2 minutes`)
  const perSecond = want / ((performance.now() - started) / 1000)
  for (const id of endpoints) {
    const res = await fetch(`${servers[0]!.baseUrl}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } })
    if (res.status !== 200) throw new Error(`DELETE /webhooks/${id} answered ${res.status}`)
  }
  return perSecond
}

export const engines: Section = {
  name: 'engines',
  summary: 'SQLite and PostgreSQL side by side (reads, creates, webhook fan-out), and two instances against one on PostgreSQL',
  async run(ctx) {
    let cluster: PgCluster | undefined
    try {
      cluster = startPgCluster({ fsync: true })
      const certs = makeCerts(join(ctx.tmp, 'engines-certs'))
      const receiver = await Receiver.start(ctx, certs)
      const webhookEnv = { NODE_EXTRA_CA_CERTS: certs.caPath, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' }
      const list: Engine[] = [
        { name: 'SQLite', db: join(ctx.tmp, 'engines.db'), env: {}, log: join(ctx.tmp, 'engines-sqlite') },
        { name: 'PostgreSQL', db: cluster.createDatabase({ name: 'bench' }), env: { TOWLINE_LINK_KEY_FILE: join(ctx.tmp, 'engines-pg.key') }, log: join(ctx.tmp, 'engines-pg') },
      ]
      const figures: Record<string, { reads: number; creates: number; fanOut: number }> = {}
      for (const engine of list) {
        command(ctx, engine, ['migrate'])
        const key = command(ctx, engine, ['keys', 'create', '--name', 'bench', '--scopes', 'all']).trim()
        const { server } = await startTowline(ctx, engine.db, { env: { ...engine.env, ...webhookEnv }, logFile: engine.log })
        const ids: string[] = []
        for (let i = 0; i < READ_JOBS; i++) ids.push((await post(server, key, '/jobs', JOB(`R-${i}`))).id)
        const { reads, creates } = await readsAndCreates(ctx, server, key, ids)
        recordLoad(ctx, `${engine.name}: GET /api/v1/jobs/{id}`, reads)
        recordLoad(ctx, `${engine.name}: POST /api/v1/jobs`, creates)
        const perSecond = await fanOut([server], key, receiver, 'F')
        ctx.record({ metric: `${engine.name}: webhook fan-out, ${FANOUT_JOBS} jobs x ${ENDPOINTS} endpoints, deliveries/s to the last arrival`, value: fmt(perSecond), target: '', pass: null })
        figures[engine.name] = { reads: reads.rps, creates: creates.rps, fanOut: perSecond }
        await ctx.children.stop(server.proc)

        if (engine.name === 'PostgreSQL') {
          // Two instances on the one database, each loaded by its own client at the same time.
          const one = await startTowline(ctx, engine.db, { env: { ...engine.env, ...webhookEnv }, logFile: engine.log })
          const two = await startTowline(ctx, engine.db, { env: { ...engine.env, ...webhookEnv }, logFile: engine.log })
          const both = await Promise.all([one, two].map((t) => readsAndCreates(ctx, t.server, key, ids)))
          for (const [i, r] of both.entries()) ctx.log(`PostgreSQL, instance ${i + 1} of 2: reads ${fmt(r.reads.rps)}/s (${r.reads.failures} failures), creates ${fmt(r.creates.rps)}/s (${r.creates.failures} failures)`)
          const reads2 = both[0]!.reads.rps + both[1]!.reads.rps
          const creates2 = both[0]!.creates.rps + both[1]!.creates.rps
          ctx.record({ metric: 'PostgreSQL, two instances: GET /api/v1/jobs/{id} requests/s (sum), and against one', value: `${fmt(reads2)} (${fmt(reads2 / reads.rps, 2)}x)`, target: '', pass: null })
          ctx.record({ metric: 'PostgreSQL, two instances: POST /api/v1/jobs requests/s (sum), and against one', value: `${fmt(creates2)} (${fmt(creates2 / creates.rps, 2)}x)`, target: '', pass: null })
          const fanOut2 = await fanOut([one.server, two.server], key, receiver, 'G')
          ctx.record({ metric: `PostgreSQL, two instances: webhook fan-out (jobs written through both), deliveries/s, and against one`, value: `${fmt(fanOut2)} (${fmt(fanOut2 / perSecond, 2)}x)`, target: '', pass: null })
          await ctx.children.stop(one.server.proc)
          await ctx.children.stop(two.server.proc)
        }
      }
      const s = figures.SQLite!
      const p = figures.PostgreSQL!
      ctx.record({ metric: 'PostgreSQL / SQLite: reads, creates, fan-out', value: `${fmt(p.reads / s.reads, 2)}, ${fmt(p.creates / s.creates, 2)}, ${fmt(p.fanOut / s.fanOut, 2)}`, target: '', pass: null })
      ctx.note(`engines: PostgreSQL ${cluster.version} on this machine's loopback (a throwaway cluster, fsync on), against SQLite's default settings; two instances share the machine's ${navigator.hardwareConcurrency} cores with the clients and the database.`)
    } finally {
      cluster?.stop()
    }
  },
}

/**
 * The delivery scheduler in process, on a real SQLite file, against real HTTPS servers on
 * loopback, with a clock the test moves: leases between two instances, a resend racing the
 * scheduler, a failed turn, fairness between accounts, leases left by dead processes, the one
 * due query, the endpoint cap and history pruning.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { hostname } from 'node:os'
import pino from 'pino'
import { openDatabase, closeDatabase, inTransaction } from '../db/client'
import { createLogger } from '../platform/log'
import { expectError, startTestApi, TEST_ENGINE, until, whileWriteLockHeld, type TestApi } from '../../test/kit'
import { makeTestCa, startReceiver, type Behaviour, type Received } from '../../test/https-receiver'
import { DeliveryScheduler, DUE_ENDPOINTS_SQL, type SchedulerDeps } from './scheduler'
import { pruneWebhookHistory } from './prune-history'
import { MAX_ENDPOINTS_PER_ACCOUNT } from './manage-endpoints'
import { LEASE_OWNER } from '../platform/lease-owner'
import { WRITE_LOCK } from '../db/pg/pg-client'
import { holdPgLocks } from '../../test/pg-lock-holder'

const ca = makeTestCa()
const behaviour: { fn: (r: Received) => Behaviour } = { fn: () => ({}) }
const receiver = startReceiver(ca, { behave: (r) => behaviour.fn(r) })
afterAll(() => receiver.stop())

const logger = createLogger((process.env.TOWLINE_TEST_LOG as 'error' | undefined) ?? 'silent')
const SCHEDULE = [1_000, 2_000, 3_000, 4_000, 5_000, 6_000]
let api: TestApi
const schedulers: DeliveryScheduler[] = []
afterEach(async () => {
  for (const s of schedulers.splice(0)) await s.stop(0)
  behaviour.fn = () => ({})
  api?.close()
})

function scheduler(over: Partial<SchedulerDeps> = {}) {
  const s = new DeliveryScheduler({ db: api.db, clock: api.clock, logger, schedule: SCHEDULE, send: { timeoutMs: 5_000, allowPrivate: true, tls: { ca: ca.ca } }, owner: 'test-host:1', links: api.links, ...over })
  schedulers.push(s)
  return s
}
async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await api.request(method, `/api/v1${path}`, { key, body })
  return { status: res.status, body: await res.json() as any }
}
async function endpoint(key: string, path: string, url = receiver.url) {
  const r = await call(key, 'POST', '/webhooks', { url: url + path, events: ['job.created'] })
  expect(r.status).toBe(201)
  return r.body
}
const newJob = (key: string, ref?: string) => call(key, 'POST', '/jobs', { external_ref: ref, customer: { name: 'Ann' }, pickup: { location: 'Exit 4' } })
const at = (path: string) => receiver.received.filter((r) => r.path === path)

describe('leases', () => {
  test("the periodic look for gone processes leaves this process's own deliveries in flight alone: each is sent once", async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    await endpoint(key, '/own')
    // Each send takes longer than several looks; the scheduler holds its leases under this process's real name.
    behaviour.fn = () => ({ delayMs: 150 })
    const s = scheduler({ owner: LEASE_OWNER, reapEveryMs: 10 })
    s.start()
    for (let i = 0; i < 3; i++) { await newJob(key); s.wake() }
    await until(() => at('/own').length >= 3 && s.inFlight === 0)
    await Bun.sleep(300) // what a wrongly taken-back lease would send again, it would have sent by now
    expect(at('/own').map((r) => r.body.attempt)).toEqual([1, 1, 1])
    expect(new Set(at('/own').map((r) => r.body.id)).size).toBe(3)
  })

  test('two instances on one database never send a delivery twice', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    for (const p of ['/two-a', '/two-b', '/two-c']) await endpoint(key, p)
    behaviour.fn = () => ({ delayMs: 2 })
    const second = openDatabase(api.db.location)
    try {
      const a = scheduler({ owner: 'host-a:1' })
      const b = scheduler({ db: second, owner: 'host-b:2' })
      a.start(); b.start()
      for (let i = 0; i < 30; i++) { await newJob(key); a.wake(); b.wake() }
      await until(() => ['/two-a', '/two-b', '/two-c'].every((p) => at(p).length >= 30))
      // Every delivery is recorded as succeeded and nothing is in flight: no attempt can still come.
      await until(() => a.inFlight === 0 && b.inFlight === 0 && (api.db.$client.query("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'").get() as { n: number }).n === 90)
      for (const p of ['/two-a', '/two-b', '/two-c']) {
        const ids = at(p).map((r) => r.body.id)
        expect({ path: p, sent: ids.length, distinct: new Set(ids).size }).toEqual({ path: p, sent: 30, distinct: 30 })
        expect(at(p).every((r) => r.body.attempt === 1)).toBe(true)
      }
    } finally {
      for (const s of schedulers.splice(0)) await s.stop(0)
      closeDatabase(second)
    }
  }, 30_000)

  test('while another instance is sending to an endpoint, a lane this one keeps open for it claims nothing: the endpoint gets its events one at a time, in order', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    await endpoint(key, '/lane-open')
    const s = scheduler({ owner: 'host-a:1' })
    s.start()
    await newJob(key, 'LANE-1')
    await until(() => at('/lane-open').length === 1)
    // This scheduler's lane for the endpoint stays open a moment. Meanwhile another instance
    // claims the next event and is sending it, under a lease that runs 15 s:
    await newJob(key, 'LANE-2')
    const now = api.clock.now()
    const ep = api.db.$client.query("SELECT id, account_id FROM webhook_endpoints WHERE url LIKE '%/lane-open'").get() as { id: string; account_id: string }
    const ev = api.db.$client.query('SELECT * FROM webhook_events ORDER BY seq DESC LIMIT 1').get() as Record<string, any>
    inTransaction(api.db, () => {
      // What that claim leaves (taken the moment the event committed, before this scheduler's next turn).
      api.db.$client.run("DELETE FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?", [ev.event_id, ep.id])
      api.db.$client.run(`INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, lease_owner, created_at, updated_at)
        VALUES ('dlv_elsewhere', ?, ?, ?, ?, 'sending', 0, ?, 'host-b:2', ?, ?)`, [ep.account_id, ep.id, ev.event_id, ev.type, now + 15_000, ev.created_at, now])
      api.db.$client.run('UPDATE webhook_endpoints SET cursor = ? WHERE id = ? AND cursor < ?', [ev.seq, ep.id, ev.seq])
    })
    await newJob(key, 'LANE-3')
    s.wake()
    // Turns pass; the lane does not take LANE-3 beside the delivery in flight elsewhere.
    for (let i = 0; i < 10; i++) { s.wake(); await Bun.sleep(30) }
    expect(at('/lane-open').map((r) => r.body.data.job.external_ref)).toEqual(['LANE-1'])
    // That instance died mid-send: its lease runs out and this one sends both, in order.
    api.clock.advance(15_001)
    s.wake()
    await until(() => at('/lane-open').length === 3)
    expect(at('/lane-open').map((r) => r.body.data.job.external_ref)).toEqual(['LANE-1', 'LANE-2', 'LANE-3'])
  })

  test('a resend while the scheduler is sending answers 409 delivery_in_flight; attempt numbers never repeat', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' }, { webhookSend: { tls: { ca: ca.ca } } })
    const key = api.key('all')
    const e = await endpoint(key, '/race')
    let release!: () => void
    const held = new Promise<void>((r) => { release = r })
    behaviour.fn = (r) => (r.path === '/race' && r.body.attempt === 1 ? { hold: held } : {})
    scheduler().start()
    await newJob(key)
    await until(() => at('/race').length === 1)
    const deliveryId = at('/race')[0]!.body.id
    await expectError(await api.request('POST', `/api/v1/webhooks/${e.id}/deliveries/${deliveryId}/retry`, { key }), 409, 'delivery_in_flight')
    release()
    await until(() => (api.db.$client.query('SELECT status FROM webhook_deliveries WHERE id = ?').get(deliveryId) as { status: string } | null)?.status === 'succeeded')
    const resent = await call(key, 'POST', `/webhooks/${e.id}/deliveries/${deliveryId}/retry`)
    expect(resent.body).toMatchObject({ delivery_id: deliveryId, delivered: true })
    const log = (await call(key, 'GET', `/webhooks/${e.id}/deliveries`)).body.data
    expect(log.map((a: any) => a.attempt)).toEqual([2, 1])
    expect(at('/race').map((r) => r.body.attempt)).toEqual([1, 2])
    // The request body shown for each attempt is the one the receiver got.
    expect(log.map((a: any) => a.request_body)).toEqual(at('/race').map((r) => r.raw).reverse())
  })

  test('a lease another machine holds is waited out; a lease of a process of this machine that is gone is taken back at start', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    await endpoint(key, '/remote')
    await endpoint(key, '/local')
    await newJob(key)
    const now = api.clock.now()
    // What a claim by another process leaves: the delivery made, sending under its lease, the cursor past the event.
    const lease = (path: string, owner: string) => {
      const ep = api.db.$client.query('SELECT id, account_id FROM webhook_endpoints WHERE url LIKE ?').get(`%${path}`) as { id: string; account_id: string }
      const ev = api.db.$client.query('SELECT * FROM webhook_events ORDER BY seq DESC LIMIT 1').get() as Record<string, any>
      api.db.$client.run(`INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, lease_owner, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, 'sending', 0, ?, ?, ?, ?)`, [`dlv_${path.slice(1)}`, ep.account_id, ep.id, ev.event_id, ev.type, now + 15_000, owner, ev.created_at, now])
      api.db.$client.run('UPDATE webhook_endpoints SET cursor = ?, next_due_at = ? WHERE id = ?', [ev.seq, now + 15_000, ep.id])
    }
    lease('/remote', 'another-machine:4242')
    // No process has pid 2^22 + 1 here: the Linux maximum is 2^22.
    lease('/local', `${hostname()}:4194305`)
    const s = scheduler({ owner: `${hostname()}:${process.pid}` })
    s.start()
    await until(() => at('/local').length === 1)
    expect(at('/remote')).toHaveLength(0)
    api.clock.advance(15_001)
    s.wake()
    await until(() => at('/remote').length === 1)
    expect([at('/local')[0]!.body.attempt, at('/remote')[0]!.body.attempt]).toEqual([1, 1])
  })

  // On PostgreSQL instances run on several machines: a holder whose heartbeat stopped is gone.
  const onPostgres = TEST_ENGINE === 'postgres' ? test : test.skip
  onPostgres('a lease of another machine whose heartbeat stopped is taken back within seconds; one still beating, or that never beat, is waited out', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    for (const path of ['/stopped', '/beating', '/never']) await endpoint(key, path)
    await newJob(key)
    const now = api.clock.now()
    const ev = api.db.$client.query('SELECT * FROM webhook_events ORDER BY seq DESC LIMIT 1').get() as Record<string, any>
    // Each endpoint's delivery claimed by a process of another machine, under a ten-minute lease.
    const lease = (path: string, owner: string) => {
      const ep = api.db.$client.query('SELECT id, account_id FROM webhook_endpoints WHERE url LIKE ?').get(`%${path}`) as { id: string; account_id: string }
      api.db.$client.run(`INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, lease_owner, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, 'sending', 0, ?, ?, ?, ?)`, [`dlv_${path.slice(1)}`, ep.account_id, ep.id, ev.event_id, ev.type, now + 600_000, owner, ev.created_at, now])
      api.db.$client.run('UPDATE webhook_endpoints SET cursor = ?, next_due_at = ? WHERE id = ?', [ev.seq, now + 600_000, ep.id])
    }
    lease('/stopped', 'machine-b:7')
    lease('/beating', 'machine-c:8')
    lease('/never', 'machine-d:9')
    // machine-b last beat 31 s ago; machine-c just now; machine-d (an older binary) never.
    api.db.$client.run('INSERT INTO lease_holders (owner, seen_at) VALUES (?, ?), (?, ?)', ['machine-b:7', now - 31_000, 'machine-c:8', now])
    const s = scheduler({ owner: 'machine-a:1', reapEveryMs: 10 })
    s.start()
    await until(() => at('/stopped').length === 1)
    // This scheduler beats too.
    expect(api.db.$client.query('SELECT seen_at FROM lease_holders WHERE owner = ?').get('machine-a:1')).toEqual({ seen_at: now })
    await Bun.sleep(100)
    expect([at('/beating').length, at('/never').length]).toEqual([0, 0])
    // machine-c stops beating: 30 s later its lease is taken back too; machine-d's still runs.
    api.clock.advance(30_001)
    await until(() => at('/beating').length === 1)
    await Bun.sleep(100)
    expect(at('/never')).toHaveLength(0)
    expect([at('/stopped')[0]!.body.attempt, at('/beating')[0]!.body.attempt]).toEqual([1, 1])
    // A scheduler that stops takes its heartbeat with it.
    await s.stop(0)
    expect(api.db.$client.query('SELECT owner FROM lease_holders ORDER BY owner').all()).toEqual([{ owner: 'machine-b:7' }, { owner: 'machine-c:8' }])
  })

  onPostgres('an instance silent longer than a heartbeat may be sends nothing more of what it had claimed: the instance that took over sends it, once', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    await endpoint(key, '/stall')
    for (let i = 0; i < 3; i++) await newJob(key)
    // A's first send hangs until released; its other two wait in its lane behind it.
    let release!: () => void
    const hold = new Promise<void>((r) => { release = r })
    let first = true
    behaviour.fn = () => (first ? ((first = false), { hold }) : {})
    const second = openDatabase(api.db.location)
    try {
      const a = scheduler({ owner: 'machine-a:1', reapEveryMs: 300 })
      a.start()
      await until(() => at('/stall').length === 1)
      // 31 s pass with no heartbeat from A (its process held up): B, starting, takes A's leases back.
      api.clock.advance(31_000)
      const b = scheduler({ db: second, owner: 'machine-b:2', reapEveryMs: 10 })
      b.start()
      await until(() => new Set(at('/stall').map((r) => r.body.id)).size === 3)
      // A beats again, learns it was silent too long, and lets go of what it has not sent.
      await Bun.sleep(400)
      release()
      await until(() => a.inFlight === 0 && b.inFlight === 0)
      await Bun.sleep(200)
      const sends = new Map<string, number>()
      for (const r of at('/stall')) sends.set(r.body.id, (sends.get(r.body.id) ?? 0) + 1)
      // The delivery A had in flight went out twice under its one id (at least once); the others once.
      expect([...sends.values()].sort()).toEqual([1, 1, 2])
    } finally {
      for (const s of schedulers.splice(0)) await s.stop(0)
      closeDatabase(second)
    }
  }, 30_000)
})

describe('claims on PostgreSQL: row locks, not the write lock', () => {
  const onPostgres = TEST_ENGINE === 'postgres' ? test : test.skip

  onPostgres('a delivery is claimed and sent while another instance holds the write lock: claims do not queue behind job writes', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const e = await endpoint(key, '/claim-free')
    await newJob(key)
    // Another instance in a long write transaction (an import, say) holds the one write lock.
    const locks = holdPgLocks(api.db.location, `SELECT pg_advisory_xact_lock(${WRITE_LOCK})`, `SELECT 1 FROM webhook_deliveries WHERE endpoint_id = '${e.id}' AND status = 'sending'`, 5_000)
    await locks.held
    scheduler().start()
    expect(await locks.released).toBe('condition')
    await until(() => (api.db.$client.query("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'").get() as { n: number }).n === 1)
    expect(at('/claim-free').map((r) => r.body.attempt)).toEqual([1])
  }, 20_000)

  onPostgres('an endpoint whose row another transaction holds is passed over, not waited for: the others are served meanwhile, it right after', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const held = await endpoint(key, '/row-held')
    const free = await endpoint(key, '/row-free')
    await newJob(key)
    const locks = holdPgLocks(api.db.location, `SELECT id FROM webhook_endpoints WHERE id = '${held.id}' FOR UPDATE`,
      `SELECT 1 FROM webhook_deliveries WHERE endpoint_id = '${free.id}' AND status = 'succeeded'`, 5_000)
    await locks.held
    const s = scheduler()
    s.start()
    // The free endpoint's delivery went out and was recorded while the other's row was held.
    expect(await locks.released).toBe('condition')
    // The holder's commit wakes a running service (background.ts); here the test does.
    s.wake()
    await until(() => at('/row-held').length === 1 && s.inFlight === 0)
    expect([at('/row-held').length, at('/row-free').length]).toEqual([1, 1])
  }, 20_000)

  test('jobs written while two schedulers claim side by side: every event reaches every endpoint once, in order', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const paths = ['/side-a', '/side-b', '/side-c', '/side-d']
    for (const p of paths) {
      const r = await call(key, 'POST', '/webhooks', { url: receiver.url + p, events: ['*'] })
      expect(r.status).toBe(201)
    }
    const second = openDatabase(api.db.location)
    try {
      const a = scheduler({ owner: 'host-a:1' })
      const b = scheduler({ db: second, owner: 'host-b:2' })
      a.start(); b.start()
      const jobs: string[] = []
      for (let i = 0; i < 20; i++) {
        const job = (await newJob(key)).body
        jobs.push(job.id)
        expect((await call(key, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: 'customer got a ride' })).status).toBe(200)
        a.wake(); b.wake()
      }
      // Each endpoint takes every event of the log.
      const events = (api.db.$client.query('SELECT count(*) AS n FROM webhook_events').get() as { n: number }).n
      expect(events).toBeGreaterThanOrEqual(40)
      await until(() => paths.every((p) => at(p).length >= events) && a.inFlight === 0 && b.inFlight === 0, 15_000)
      for (const p of paths) {
        const got = at(p).map((r) => ({ job: r.body.data.job.id as string, sequence: r.body.data.event.sequence as number }))
        expect(new Set(got.map((g) => `${g.job}:${g.sequence}`)).size).toBe(events)
        expect(got.length).toBe(events)
        // Each job's events arrive in their order.
        for (const id of jobs) {
          const sequences = got.filter((g) => g.job === id).map((g) => g.sequence)
          expect(sequences).toEqual([...sequences].sort((x, y) => x - y))
        }
      }
    } finally {
      for (const s of schedulers.splice(0)) await s.stop(0)
      closeDatabase(second)
    }
  }, 30_000)
})

describe('robustness', () => {
  test('a turn that fails (the database refuses a write) is logged and retried; the attempt is recorded once and the process lives', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const e = await endpoint(key, '/fail-turn')
    let release!: () => void
    const held = new Promise<void>((r) => { release = r })
    behaviour.fn = () => ({ hold: held })
    const errors: string[] = []
    scheduler({ logger: pino({ level: 'error' }, { write: (line: string) => { errors.push(line) } }) }).start()
    await newJob(key)
    await until(() => at('/fail-turn').length === 1)
    // Recording the finished attempt now fails inside the turn's transaction.
    api.db.$client.run('ALTER TABLE webhook_attempts RENAME TO webhook_attempts_away')
    release()
    await until(() => errors.some((l) => l.includes('webhook scheduler turn failed')))
    api.db.$client.run('ALTER TABLE webhook_attempts_away RENAME TO webhook_attempts')
    await until(() => api.db.$client.query('SELECT count(*) AS n FROM webhook_attempts').get() !== null && (api.db.$client.query('SELECT count(*) AS n FROM webhook_attempts').get() as any).n === 1, 5000)
    const log = (await call(key, 'GET', `/webhooks/${e.id}/deliveries`)).body.data
    expect(log).toHaveLength(1)
    expect(log[0]).toMatchObject({ attempt: 1, status: 'succeeded' })
    expect(at('/fail-turn')).toHaveLength(1)
  })
})

describe('idle turns', () => {
  // SQLite: another connection's long write (an import) holds the one write lock. On PostgreSQL
  // claims take no write lock at all (the tests above).
  test.skipIf(TEST_ENGINE === 'postgres')('a turn with nothing to record or claim takes no write lock: a long write elsewhere does not hold this thread up', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    await endpoint(key, '/idle')
    const errors: string[] = []
    const s = scheduler({ logger: pino({ level: 'error' }, { write: (line: string) => { errors.push(line) } }) })
    s.start()
    await Bun.sleep(50)
    await whileWriteLockHeld(api.db, async () => {
      // Another process's commit wakes the scheduler (background.ts): this turn finds nothing to do.
      const woke = performance.now()
      s.wake()
      await Bun.sleep(50)
      // Waiting for the lock would have held this thread for the busy timeout (5 s), then failed the turn.
      expect(performance.now() - woke).toBeLessThan(2_000)
    })
    expect(errors.filter((l) => l.includes('turn failed'))).toEqual([])
    await newJob(key)
    s.wake()
    await until(() => at('/idle').length === 1)
  })
})

/** A loopback port that accepts connections and never answers (not even the TLS handshake); `open` holds the connections it has. */
function blackHole() {
  const open = new Set<unknown>()
  const hole = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { open(s) { open.add(s) }, close(s) { open.delete(s) }, data() {} } })
  return { open, url: `https://127.0.0.1:${hole.port}`, stop: () => hole.stop(true) }
}

describe('fairness', () => {
  test("one account's endpoints at a black hole never hold up another account's delivery", async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const hole = blackHole()
    const open = hole.open
    try {
      const a = api.key('all')
      const b = api.key('all', { accountId: api.account('Other Towing') })
      for (let i = 0; i < 6; i++) await endpoint(a, `/hole-${i}`, hole.url)
      await endpoint(b, '/other-account')
      await newJob(a)
      const s = scheduler({ global: 4, perAccount: 3, send: { timeoutMs: 60_000, allowPrivate: true, tls: { ca: ca.ca } } })
      s.start()
      await until(() => open.size === 3)
      await newJob(b)
      s.wake()
      await until(() => at('/other-account').length === 1)
      await until(() => s.inFlight === 3 && (api.db.$client.query("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'").get() as { n: number }).n === 1)
      // Account A still holds its three slots at the black hole: B went by them.
      expect(open.size).toBe(3)
      expect((api.db.$client.query("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'sending'").get() as { n: number }).n).toBe(3)
    } finally {
      for (const s of schedulers.splice(0)) await s.stop(0)
      hole.stop()
    }
  })
})

describe('fairness within an account', () => {
  test("an account's endpoints at a black hole do not hold up its endpoint that answers: it gets its events before they are through their first attempts", async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const hole = blackHole()
    try {
      const a = api.key('all')
      const holes: string[] = []
      for (let i = 0; i < 4; i++) holes.push((await endpoint(a, `/hole-${i}`, hole.url)).id)
      const triedAtHoles = () => (api.db.$client.query(`SELECT count(*) AS n FROM webhook_attempts WHERE endpoint_id IN (${holes.map(() => '?').join(', ')})`).get(...holes) as { n: number }).n
      // Made after the holes, so its events are the newest due: oldest-due-first alone would serve it last.
      await endpoint(a, '/answers')
      const jobs = 12
      for (let i = 0; i < jobs; i++) expect((await newJob(a)).status).toBe(201)
      const s = scheduler({ global: 4, perAccount: 4, send: { timeoutMs: 200, allowPrivate: true, tls: { ca: ca.ca } } })
      s.start()
      await until(() => at('/answers').length === jobs, 20_000)
      // Four dead endpoints with twelve deliveries each: before, every slot stayed with them until
      // all 48 had been tried once. Now the live one had its twelve after a handful of them.
      const tried = triedAtHoles()
      expect(tried).toBeLessThan(holes.length * jobs / 2)
      // And the dead ones are still being tried, within their share.
      await until(() => triedAtHoles() > tried)
    } finally {
      for (const s of schedulers.splice(0)) await s.stop(0)
      hole.stop()
    }
  }, 30_000)
})

describe('rotating the signing secret', () => {
  test('every secret rotated out keeps signing for its own 24 hours, a second rotation within them included', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' }, { webhookSend: { tls: { ca: ca.ca } } })
    const key = api.key('all')
    const e = await endpoint(key, '/rotations')
    const rotate = async () => (await call(key, 'PATCH', `/webhooks/${e.id}`, { rotate_secret: true })).body.secret as string
    /** Which of the secrets sign the next ping, in the header's order. */
    const signers = async (secrets: string[]) => {
      expect((await call(key, 'POST', `/webhooks/${e.id}/test`)).body).toMatchObject({ delivered: true })
      const got = at('/rotations').at(-1)!
      const [t, ...v1] = got.headers['x-svc-signature']!.split(',')
      const ts = t!.slice(2)
      return v1.map((v) => secrets.findIndex((s) => new Bun.CryptoHasher('sha256', s).update(`${ts}.${got.raw}`).digest('hex') === v.slice(3)))
    }
    const s0 = e.secret as string
    api.clock.advance(60_000)
    const s1 = await rotate()
    api.clock.advance(3_600_000)
    const s2 = await rotate()
    const all = [s0, s1, s2]
    expect(await signers(all)).toEqual([2, 1, 0])
    // 24 h after the first rotation s0 is done; s1, rotated out an hour later, still signs.
    api.clock.advance(23 * 3_600_000 + 1_000)
    expect(await signers(all)).toEqual([2, 1])
    api.clock.advance(3_600_000)
    expect(await signers(all)).toEqual([2])
  })
})

describe('changing what an endpoint takes', () => {
  test('a paused endpoint whose events change keeps what it took before the change (held, sent on resume) and gets nothing it did not take then', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const e = (await call(key, 'POST', '/webhooks', { url: receiver.url + '/changes', events: ['job.note_added'] })).body
    scheduler().start()
    expect((await call(key, 'PATCH', `/webhooks/${e.id}`, { status: 'paused' })).status).toBe(200)
    const job = (await newJob(key)).body
    const eta = (minutes: number) => new Date(api.clock.now() + minutes * 60_000).toISOString()
    expect((await call(key, 'POST', `/jobs/${job.id}/notes`, { text: 'held under the old list' })).status).toBe(201)
    expect((await call(key, 'PATCH', `/jobs/${job.id}`, { eta_at: eta(30) })).status).toBe(200)
    expect((await call(key, 'PATCH', `/webhooks/${e.id}`, { events: ['job.eta_updated'] })).status).toBe(200)
    expect((await call(key, 'POST', `/jobs/${job.id}/notes`, { text: 'not taken any more' })).status).toBe(201)
    expect((await call(key, 'PATCH', `/jobs/${job.id}`, { eta_at: eta(20) })).status).toBe(200)
    expect(at('/changes')).toEqual([])
    expect((await call(key, 'PATCH', `/webhooks/${e.id}`, { status: 'active' })).status).toBe(200)
    await until(() => at('/changes').length >= 2)
    expect(at('/changes').map((r) => [r.body.type, r.body.data.event.detail.text ?? r.body.data.event.detail.eta_at])).toEqual([
      ['job.note_added', 'held under the old list'],
      ['job.eta_updated', eta(20)],
    ])
  })

  test('an active endpoint narrowing its events still gets what it had not yet taken under the old list', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const e = (await call(key, 'POST', '/webhooks', { url: receiver.url + '/narrowed', events: ['job.created', 'job.note_added'] })).body
    // No scheduler yet: the events wait in the log, not taken up, when the list changes.
    const job = (await newJob(key, 'NARROW-1')).body
    expect((await call(key, 'POST', `/jobs/${job.id}/notes`, { text: 'first' })).status).toBe(201)
    expect((await call(key, 'PATCH', `/webhooks/${e.id}`, { events: ['job.note_added'] })).status).toBe(200)
    await newJob(key, 'NARROW-2')
    expect((await call(key, 'POST', `/jobs/${job.id}/notes`, { text: 'second' })).status).toBe(201)
    scheduler().start()
    await until(() => at('/narrowed').length >= 3)
    expect(at('/narrowed').map((r) => r.body.type === 'job.created' ? r.body.data.job.external_ref : r.body.data.event.detail.text)).toEqual(['NARROW-1', 'first', 'second'])
  })
})

describe('the retry schedule', () => {
  test('retries count from the start of the first attempt, not its end: a slow failing receiver does not push them later', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const e = await endpoint(key, '/slow-fail')
    let release!: () => void
    const held = new Promise<void>((r) => { release = r })
    behaviour.fn = (r) => (r.path === '/slow-fail' ? { hold: held, status: 500 } : {})
    scheduler().start()
    await newJob(key)
    await until(() => at('/slow-fail').length === 1)
    const started = api.clock.now()
    // The receiver takes 700 ms (of the injected clock) to answer 500.
    api.clock.advance(700)
    release()
    const attempts = async () => (await call(key, 'GET', `/webhooks/${e.id}/deliveries`)).body.data as any[]
    await until(async () => (await attempts()).length === 1)
    const [first] = await attempts()
    expect(first).toMatchObject({ attempt: 1, status: 'failed' })
    // SCHEDULE's first retry is 1 s after the first attempt began, plus up to 10% jitter; counted from its end it would be 1.7 s or more.
    const wait = Date.parse(first.next_attempt_at) - started
    expect(wait).toBeGreaterThanOrEqual(1_000)
    expect(wait).toBeLessThanOrEqual(1_100)
  })
})

describe('reading the event log', () => {
  test('an endpoint that takes a rare event type among hundreds it skips gets exactly those, in order; one that takes all gets every event once, in order', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_RATE_LIMIT_WRITES: '1000' })
    const key = api.key('all')
    const rare = await call(key, 'POST', '/webhooks', { url: receiver.url + '/notes-only', events: ['job.note_added'] })
    expect(rare.status).toBe(201)
    await endpoint(key, '/every-created')
    // More events than one refill reads (EVENTS_READ), the notes at both ends of them.
    const first = (await newJob(key, 'LOG-0')).body
    expect((await call(key, 'POST', `/jobs/${first.id}/notes`, { text: 'first note' })).status).toBe(201)
    const refs = ['LOG-0']
    for (let i = 1; i <= 300; i++) { refs.push(`LOG-${i}`); expect((await newJob(key, `LOG-${i}`)).status).toBe(201) }
    expect((await call(key, 'POST', `/jobs/${first.id}/notes`, { text: 'last note' })).status).toBe(201)
    scheduler().start()
    await until(() => at('/every-created').length === refs.length && at('/notes-only').length === 2, 30_000)
    expect(at('/every-created').map((r) => r.body.data.job.external_ref)).toEqual(refs)
    expect(at('/notes-only').map((r) => [r.body.type, r.body.data.event.detail.text])).toEqual([['job.note_added', 'first note'], ['job.note_added', 'last note']])
  })
})

describe('the due query', () => {
  // SQLite's plan (PostgreSQL plans by its statistics: the same indexes exist, lockstep.test.ts).
  test.skipIf(TEST_ENGINE === 'postgres')('reads endpoints by their due time and deliveries by endpoint through indexes, never a whole table', () => {
    api = startTestApi()
    const plan = (api.db.$client.query(`EXPLAIN QUERY PLAN ${DUE_ENDPOINTS_SQL}`).all(0, '[]', 10) as { detail: string }[]).map((r) => r.detail)
    expect(plan.some((d) => /SEARCH e USING INDEX webhook_endpoints_due_idx/.test(d))).toBe(true)
    expect(plan.filter((d) => /SCAN (e|d|x|y|p)\b/.test(d) && !/USING (COVERING )?INDEX/.test(d))).toEqual([])
    expect(plan.filter((d) => / x | y /.test(` ${d} `)).every((d) => /webhook_deliveries_open_idx/.test(d))).toBe(true)
  })

  test('5,000 quiet endpoints cost nothing: the one with work is served', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const quiet = api.account('Quiet Towing')
    api.db.$client.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
      INSERT INTO webhook_endpoints (id, account_id, url, events, status, secret, consecutive_failures, created_at, updated_at)
      SELECT 'whk_quiet' || i, '${quiet}', 'https://127.0.0.1:9/q', '["*"]', 'active', 'whsec_x', 0, 0, 0 FROM n`)
    await endpoint(key, '/busy')
    scheduler().start()
    await newJob(key)
    await until(() => at('/busy').length === 1)
  })
})

describe('limits and history', () => {
  test(`an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} endpoints: the next is 422 limit_exceeded and not made`, async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    api.db.$client.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${MAX_ENDPOINTS_PER_ACCOUNT - 1})
      INSERT INTO webhook_endpoints (id, account_id, url, events, status, secret, consecutive_failures, created_at, updated_at)
      SELECT 'whk_many' || i, '${api.accountId}', 'https://127.0.0.1:9/m', '["*"]', 'active', 'whsec_x', 0, 0, 0 FROM n`)
    expect((await call(key, 'POST', '/webhooks', { url: 'https://127.0.0.1:9/last', events: ['*'] })).status).toBe(201)
    const err = await expectError(await api.request('POST', '/api/v1/webhooks', { key, body: { url: 'https://127.0.0.1:9/over', events: ['*'] } }), 422, 'limit_exceeded')
    expect(err.details.limit).toBe(MAX_ENDPOINTS_PER_ACCOUNT)
    expect((api.db.$client.query('SELECT count(*) AS n FROM webhook_endpoints').get() as any).n).toBe(MAX_ENDPOINTS_PER_ACCOUNT)
    // Another account is not affected.
    const other = api.key('all', { accountId: api.account('Other Towing') })
    expect((await call(other, 'POST', '/webhooks', { url: 'https://127.0.0.1:9/theirs', events: ['*'] })).status).toBe(201)
  })

  test('history older than the window goes, except the last 100 attempts of each endpoint, which still show their request', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_RATE_LIMIT_WRITES: '1000' })
    const key = api.key('all')
    const e = await endpoint(key, '/history')
    const paused = await endpoint(key, '/paused')
    await call(key, 'PATCH', `/webhooks/${paused.id}`, { status: 'paused' })
    const s = scheduler()
    s.start()
    for (let i = 0; i < 120; i++) await newJob(key)
    await until(() => at('/history').length === 120)
    await until(() => (api.db.$client.query("SELECT count(*) AS n FROM webhook_attempts").get() as any).n === 120)
    const DAY = 86_400_000
    api.clock.advance(31 * DAY)
    await newJob(key)
    s.wake()
    await until(() => at('/history').length === 121)
    await until(() => (api.db.$client.query("SELECT count(*) AS n FROM webhook_attempts").get() as any).n === 121)
    const count = (t: string) => (api.db.$client.query(`SELECT count(*) AS n FROM ${t}`).get() as any).n
    const before = { attempts: count('webhook_attempts'), deliveries: count('webhook_deliveries'), events: count('webhook_events') }
    expect(before).toEqual({ attempts: 121, deliveries: 121, events: 121 })
    // The list shows the last 100 of the 121, newest first: in one page by default, or paged by a smaller limit.
    const whole = (await call(key, 'GET', `/webhooks/${e.id}/deliveries`)).body
    expect({ n: whole.data.length, has_more: whole.has_more, next_cursor: whole.next_cursor }).toEqual({ n: 100, has_more: false, next_cursor: null })
    const pages: any[] = []
    for (let cursor: string | null = null, i = 0; i === 0 || cursor; i++) {
      const p: any = (await call(key, 'GET', `/webhooks/${e.id}/deliveries?limit=30${cursor ? `&cursor=${cursor}` : ''}`)).body
      pages.push(p)
      cursor = p.next_cursor
    }
    expect(pages.map((p) => [p.data.length, p.has_more])).toEqual([[30, true], [30, true], [30, true], [10, false]])
    expect(pages.flatMap((p) => p.data.map((a: any) => a.id))).toEqual(whole.data.map((a: any) => a.id))
    const bad = await call(key, 'GET', `/webhooks/${e.id}/deliveries?cursor=nonsense`)
    expect({ status: bad.status, code: bad.body.error.code }).toEqual({ status: 422, code: 'validation_failed' })
    const pruned = await pruneWebhookHistory(api.db, api.clock, 30 * DAY)
    // The paused endpoint has not taken its 121 events up yet: they stay however old.
    expect(pruned).toEqual({ attempts: 21, deliveries: 21, events: 0 })
    expect(count('webhook_attempts')).toBe(before.attempts - 21)
    const log = (await call(key, 'GET', `/webhooks/${e.id}/deliveries`)).body.data as any[]
    expect(log).toHaveLength(100)
    const shown = new Map(at('/history').map((r) => [r.body.id, r.raw]))
    expect(log.every((a) => a.request_body === shown.get(a.delivery_id))).toBe(true)
    // Resumed, it gets all of them, oldest first; then what everyone has taken up can go.
    await call(key, 'PATCH', `/webhooks/${paused.id}`, { status: 'active' })
    s.wake()
    await until(() => at('/paused').length === 121)
    expect(at('/paused').map((r) => r.body.data.job.id)).toEqual(at('/history').map((r) => r.body.data.job.id))
    await until(() => count('webhook_attempts') === 100 + 121)
    api.clock.advance(31 * DAY)
    expect(await pruneWebhookHistory(api.db, api.clock, 30 * DAY)).toEqual({ attempts: 21, deliveries: 21, events: 21 })
  }, 30_000)
})

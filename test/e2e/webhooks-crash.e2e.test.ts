/**
 * Nothing is lost: the compiled binary is killed with SIGKILL in the middle of a burst of job
 * writes and deliveries; after a restart every acknowledged write has been delivered.
 */
import { afterAll, expect, test } from 'bun:test'
import { createKeyWithCli, freshFolder, startServer } from '../binary'
import { makeTestCa, startReceiver } from '../https-receiver'

const ca = makeTestCa()
const receiver = startReceiver(ca, { behave: () => ({ delayMs: 5 }) })
const folder = freshFolder()
afterAll(() => { receiver.stop(); folder.cleanup() })

const env = { NODE_EXTRA_CA_CERTS: ca.caPath, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms,400ms,500ms,600ms' }

test('every acknowledged write is delivered after a SIGKILL and a restart', async () => {
  let server = await startServer(folder.bin, { cwd: folder.dir, env })
  const key = createKeyWithCli(folder.bin, folder.dir, 'all')
  const call = (s: typeof server, method: string, path: string, body?: unknown) =>
    fetch(s.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  for (const path of ['/a', '/b']) expect((await call(server, 'POST', '/webhooks', { url: receiver.url + path, events: ['job.created'] })).status).toBe(201)

  // A burst of concurrent creates; kill -9 while they and their deliveries are in flight.
  const acknowledged: string[] = []
  const burst = Array.from({ length: 120 }, (_, i) => call(server, 'POST', '/jobs', { external_ref: `K-${i}`, customer: { name: 'C' }, pickup: { location: 'x' } })
    .then(async (r) => { if (r.status === 201) acknowledged.push((await r.json() as any).id) })
    .catch(() => {}))
  // Kill once some writes are acknowledged (however loaded the machine), while the rest are in flight.
  for (const end = Date.now() + 10_000; acknowledged.length < 5 && Date.now() < end;) await Bun.sleep(2)
  server.proc.kill('SIGKILL')
  await Promise.all(burst)
  await server.proc.exited
  const deliveredBeforeKill = receiver.received.length
  expect(acknowledged.length).toBeGreaterThan(0)
  // The kill really cut deliveries short: the restart has work to do.
  expect(deliveredBeforeKill).toBeLessThan(acknowledged.length * 2)

  server = await startServer(folder.bin, { cwd: folder.dir, env })
  try {
    const delivered = (path: string) => new Set(receiver.received.filter((r) => r.path === path).map((r) => r.body.data.job.id))
    const deadline = Date.now() + 15_000
    while (acknowledged.some((id) => !delivered('/a').has(id) || !delivered('/b').has(id)) && Date.now() < deadline) await Bun.sleep(50)
    for (const path of ['/a', '/b']) {
      const got = delivered(path)
      expect(acknowledged.filter((id) => !got.has(id))).toEqual([])
    }
    // Each delivery kept its id across the crash: receivers de-duplicate on it.
    const byJob = new Map<string, Set<string>>()
    for (const r of receiver.received.filter((r) => r.path === '/a')) byJob.set(r.body.data.job.id, (byJob.get(r.body.data.job.id) ?? new Set()).add(r.body.id))
    expect([...byJob.values()].every((ids) => ids.size === 1)).toBe(true)
  } finally {
    await server.stop()
  }
}, 40_000)

test('private targets are checked again at send time', async () => {
  const f = freshFolder()
  try {
    let s = await startServer(f.bin, { cwd: f.dir, env })
    const key = createKeyWithCli(f.bin, f.dir, 'all')
    const call = (method: string, path: string, body?: unknown) =>
      fetch(s.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const e = await (await call('POST', '/webhooks', { url: receiver.url + '/private', events: ['*'] })).json() as any
    await s.stop()
    // The operator withdraws the permission: the loopback endpoint must not get anything now.
    s = await startServer(f.bin, { cwd: f.dir, env: { ...env, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '0' } })
    await call('POST', '/jobs', { customer: { name: 'C' }, pickup: { location: 'x' } })
    let log: any[] = []
    for (const end = Date.now() + 8000; !log.length; await Bun.sleep(20)) {
      if (Date.now() > end) throw new Error('no attempt recorded')
      log = (await (await call('GET', `/webhooks/${e.id}/deliveries`)).json() as any).data
    }
    expect(log[0]).toMatchObject({ status: 'failed', error: 'blocked' })
    expect(receiver.received.filter((r) => r.path === '/private')).toHaveLength(0)
    const refused = await call('POST', '/webhooks', { url: receiver.url + '/private2', events: ['*'] })
    expect(refused.status).toBe(422)
    await s.stop()
  } finally {
    f.cleanup()
  }
}, 30_000)

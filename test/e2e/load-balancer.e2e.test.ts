/**
 * The load-balancer example of docs/deploy.md, run as written: nginx with
 * docs/examples/nginx.conf (only its addresses, ports and certificate paths replaced) in front
 * of two instances of the compiled binary on one PostgreSQL database. Through nginx, over
 * HTTPS: the API and a dashboard login work whichever instance answers, the live board streams
 * unbuffered, the per-address limit on unknown device ids counts the client nginx names (not
 * nginx, not what the client wrote in X-Forwarded-For), and requests keep succeeding while one
 * instance drains (SIGTERM, a rolling restart) and after the other is killed.
 * Runs on PostgreSQL whichever engine the rest of the suite is on.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, createKeyWithCli, freePort, freshFolder, ROOT, startServer, type RunningServer } from '../binary'
import { makeTestCa } from '../https-receiver'
import { pgCluster } from '../pg'
import { readSse } from '../sse-reader'
import { nginxPath } from '../nginx'

const ca = makeTestCa()
const a = freshFolder()
const b = freshFolder()
const nginxDir = join(a.dir, 'nginx')
// nginx reaches the instances from this address, and only it is trusted; clients come from others.
const BALANCER = '127.0.0.2'
const httpsPort = freePort()
const httpPort = freePort()
const publicUrl = `https://127.0.0.1:${httpsPort}`
let env: Record<string, string>
let nginx: ReturnType<typeof Bun.spawn> | null = null
const servers: RunningServer[] = []

afterAll(async () => {
  nginx?.kill('SIGTERM')
  await nginx?.exited
  for (const s of servers) if (s.proc.exitCode === null) await s.stop('SIGKILL')
  a.cleanup()
  b.cleanup()
})

beforeAll(() => {
  env = {
    TOWLINE_DB: pgCluster().createDatabase(),
    TOWLINE_LINK_KEY_FILE: join(a.dir, 'towline.key'),
    TOWLINE_PUBLIC_URL: publicUrl,
    TOWLINE_TRUSTED_PROXIES: BALANCER,
    TOWLINE_RATE_LIMIT_READS: '100000',
  }
  expect(cli(a.bin, ['migrate'], { cwd: a.dir, env }).code).toBe(0)
})

/** docs/examples/nginx.conf with this machine's loopback addresses, ports and test certificate. */
function siteConfig(ports: [number, number]): string {
  let text = readFileSync(join(ROOT, 'docs/examples/nginx.conf'), 'utf8')
  const swaps: [string, string][] = [
    ['server 10.0.0.11:3000', `server 127.0.0.1:${ports[0]}`],
    ['server 10.0.0.12:3000', `server 127.0.0.1:${ports[1]}`],
    ['listen 80;', `listen 127.0.0.1:${httpPort};`],
    ['listen 443 ssl http2;', `listen 127.0.0.1:${httpsPort} ssl http2;`],
    ['/etc/ssl/towline/fullchain.pem', join(ca.dir, 'server.pem')],
    ['/etc/ssl/towline/privkey.pem', join(ca.dir, 'server.key')],
  ]
  for (const [from, to] of swaps) {
    // The example and this test change together: a line the test cannot find fails it.
    expect(text).toContain(from)
    text = text.replaceAll(from, to)
  }
  // Nothing left pointing anywhere but this machine (comments aside).
  expect(text.split('\n').filter((l) => !l.trim().startsWith('#')).join('\n')).not.toMatch(/\b\d+\.\d+\.\d+\.\d+\b(?<!127\.0\.0\.\d+)/)
  return text
}

async function startNginx(ports: [number, number]): Promise<void> {
  mkdirSync(nginxDir, { recursive: true })
  writeFileSync(join(nginxDir, 'towline.conf'), siteConfig(ports))
  // What /etc/nginx/nginx.conf would hold, in the test's folder; the site file is included as is.
  writeFileSync(join(nginxDir, 'nginx.conf'), `worker_processes 1;
pid ${nginxDir}/nginx.pid;
error_log ${nginxDir}/error.log warn;
events { worker_connections 512; }
http {
  log_format upstream '$request_method $uri $status $upstream_addr';
  access_log ${nginxDir}/access.log upstream;
  client_body_temp_path ${nginxDir}/body;
  proxy_temp_path ${nginxDir}/proxy;
  fastcgi_temp_path ${nginxDir}/fastcgi;
  uwsgi_temp_path ${nginxDir}/uwsgi;
  scgi_temp_path ${nginxDir}/scgi;
  proxy_bind ${BALANCER};
  include ${nginxDir}/towline.conf;
}
`)
  const bin = nginxPath()
  if (!bin) throw new Error('nginx is not installed: `sudo apt-get install nginx` (npm test installs it when run as root)')
  nginx = Bun.spawn([bin, '-p', nginxDir, '-c', join(nginxDir, 'nginx.conf'), '-g', 'daemon off;'], { stdout: 'pipe', stderr: 'pipe' })
  for (const end = Date.now() + 10_000; ;) {
    const up = await fetch(`${publicUrl}/healthz`, { tls: { ca: ca.ca } }).then((r) => r.status === 200, () => false)
    if (up) return
    if (nginx.exitCode !== null || Date.now() > end) throw new Error(`nginx did not start: ${await new Response(nginx.stderr as ReadableStream).text()} ${readFileSync(join(nginxDir, 'error.log'), 'utf8')}`)
    await Bun.sleep(20)
  }
}

const through = (path: string, init: RequestInit = {}) => fetch(publicUrl + path, { ...init, redirect: 'manual', tls: { ca: ca.ca } })

test('two instances behind the example nginx: API, login and live board through it, client addresses from the balancer, a rolling restart and a killed instance unnoticed', async () => {
  const portOne = freePort()
  let one = await startServer(a.bin, { cwd: a.dir, env, args: ['--port', String(portOne)] })
  const two = await startServer(b.bin, { cwd: b.dir, env })
  servers.push(one, two)
  await startNginx([portOne, Number(new URL(two.url).port)])
  const key = createKeyWithCli(a.bin, a.dir, 'all', [], env)
  expect(cli(b.bin, ['users', 'create', '--email', 'dee@example.com', '--role', 'dispatcher', '--password', 'correct horse battery'], { cwd: b.dir, env }).code).toBe(0)
  const api = (method: string, path: string, body?: unknown) =>
    through(`/api/v1${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })

  // Plain http is sent to https.
  const plain = await fetch(`http://127.0.0.1:${httpPort}/board`, { redirect: 'manual' })
  expect(plain.status).toBe(301)
  expect(plain.headers.get('location')).toStartWith('https://')

  // A dispatcher signs in through the balancer; the session works whichever instance answers.
  const login = await through('/login', { method: 'POST', headers: { origin: publicUrl, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email: 'dee@example.com', password: 'correct horse battery' }).toString() })
  expect(login.status).toBe(303)
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  for (let i = 0; i < 6; i++) expect((await through('/board', { headers: { cookie } })).status).toBe(200)

  // The live board, through nginx, hears jobs written through nginx (either instance) as they are made.
  const board = readSse(await through('/board/events', { headers: { cookie } }))
  await board.until((m) => m.some((x) => x.event === 'hello'))
  const made: string[] = []
  for (let i = 0; i < 10; i++) {
    const res = await api('POST', '/jobs', { external_ref: `NGX-${i}`, customer: { name: `C${i}` }, pickup: { location: 'x' } })
    expect(res.status).toBe(201)
    made.push(((await res.json()) as any).id)
  }
  await board.until((m) => made.every((id) => m.some((x) => x.event === 'job' && x.data?.job?.id === id)), 10_000)
  await board.cancel()
  // Both instances took some of the writes: nginx's log names the instance that answered each.
  const creates = readFileSync(join(nginxDir, 'access.log'), 'utf8').split('\n').filter((l) => l.startsWith('POST /api/v1/jobs 201 '))
  expect(creates.length).toBe(10)
  const byInstance = [one, two].map((s) => creates.filter((l) => l.endsWith(`127.0.0.1:${new URL(s.url).port}`)).length)
  if (!byInstance.every((n) => n > 0)) throw new Error(`one instance took every write:\n${readFileSync(join(nginxDir, 'access.log'), 'utf8')}\n${readFileSync(join(nginxDir, 'error.log'), 'utf8')}`)

  // Unknown device ids are limited per client address. Behind the balancer that is the address
  // nginx names, counted across both instances; what the client wrote in X-Forwarded-For is not it.
  const reports: number[] = []
  for (let i = 0; i < 25; i++) {
    const res = await through(`/osmand?id=nobody-${i}&lat=45.5&lon=-122.6`, { method: 'POST', headers: { 'x-forwarded-for': `203.0.113.${i}` } })
    reports.push(res.status)
  }
  expect(reports.slice(0, 20)).toEqual(Array(20).fill(404))
  expect(reports.slice(20)).toEqual(Array(5).fill(429))
  // Another client (another loopback address) is not limited by the first one's misses.
  const other = Bun.spawnSync(['curl', '-sS', '--cacert', ca.caPath, '--interface', '127.0.0.3', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', `${publicUrl}/osmand?id=nobody-else&lat=45.5&lon=-122.6`])
  expect(other.stdout.toString()).toBe('404')

  // A rolling restart: one instance drains (SIGTERM) and comes back while requests keep coming.
  const failures: string[] = []
  let traffic = true
  let phase = 'before'
  const load = (async () => {
    let n = 0
    while (traffic) {
      const res = await api('GET', `/jobs/${made[n++ % made.length]}`).catch((err) => ({ status: String(err) }))
      if (res.status !== 200) failures.push(`${phase}:${res.status}`)
      await Bun.sleep(5)
    }
    return n
  })()
  await Bun.sleep(200)
  phase = 'drain'
  expect(await one.stop('SIGTERM')).toBe(0)
  phase = 'down'
  await Bun.sleep(200)
  one = await startServer(a.bin, { cwd: a.dir, env, args: ['--port', String(portOne)] })
  servers.push(one)
  phase = 'restarted'
  // nginx sends to an instance it saw fail again after fail_timeout (5 s): the example's rule for
  // a rolling restart is to wait that long before stopping the next one.
  await Bun.sleep(5_500)
  phase = 'kill'
  // The other instance dies outright.
  two.proc.kill('SIGKILL')
  await two.proc.exited
  await Bun.sleep(300)
  traffic = false
  expect(await load).toBeGreaterThan(100)
  expect([...new Set(failures)]).toEqual([])

  // Writes and sign-ins still go through the one left.
  expect((await api('POST', '/jobs', { external_ref: 'NGX-after', customer: { name: 'After' }, pickup: { location: 'x' } })).status).toBe(201)
  expect((await through('/board', { headers: { cookie } })).status).toBe(200)
  expect(await one.stop()).toBe(0)
}, 90_000)

/**
 * HTTPS from the binary itself (`serve --tls-cert --tls-key`, or TOWLINE_TLS_CERT and
 * TOWLINE_TLS_KEY), with a throwaway CA and certificate made by openssl in the test, and the
 * warning when the public URL is plain http on a host other than this machine. Traffic goes to
 * 127.0.0.1 only; the public URLs below are never contacted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, createKeyWithCli, freshFolder, startServerPerTest, type RunningServer } from '../binary'
import { makeTestCa, type TestCa } from '../https-receiver'

let folder: ReturnType<typeof freshFolder>
let ca: TestCa
beforeAll(() => {
  folder = freshFolder()
  ca = makeTestCa()
  writeFileSync(join(folder.dir, 'cert.pem'), ca.cert)
  writeFileSync(join(folder.dir, 'key.pem'), ca.key, { mode: 0o600 })
})
afterAll(() => {
  folder?.cleanup()
  if (ca) Bun.spawnSync(['rm', '-rf', ca.dir])
})

// A failed expectation must not leave a server running: every one started is stopped after its test.
const startServer = startServerPerTest()

/** Runs `serve` expecting it to stop at once (bounded), and returns what it said. */
function serveFails(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([folder.bin, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], {
    cwd: folder.dir, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdout: 'pipe', stderr: 'pipe', timeout: 10_000,
  })
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
}

describe('serve --tls-cert --tls-key', () => {
  test('answers HTTPS with the certificate (trusted through the test CA), and job links start https://localhost:<port>', async () => {
    const s = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'tls.db', '--tls-cert', 'cert.pem', '--tls-key', 'key.pem'] })
    expect(s.url).toStartWith('https://127.0.0.1:')
    const port = new URL(s.url).port
    const health = await fetch(`https://127.0.0.1:${port}/healthz`, { tls: { ca: ca.ca } })
    expect(health.status).toBe(200)
    expect((await health.json() as { status: string }).status).toBe('ok')
    // The public URL is https, so browsers are told to stay on it.
    expect(health.headers.get('strict-transport-security')).toContain('max-age=')
    // Without trusting the CA the handshake fails: it is that certificate being served.
    expect(await fetch(`https://127.0.0.1:${port}/healthz`).then(() => 'trusted', () => 'refused')).toBe('refused')
    expect(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 'no plain http')).not.toBe(200)

    const key = createKeyWithCli(folder.bin, folder.dir, 'jobs:read,jobs:write', ['--db', 'tls.db'])
    const created = await fetch(`https://127.0.0.1:${port}/api/v1/jobs`, {
      method: 'POST', tls: { ca: ca.ca }, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customer: { name: 'Ann Lee' }, pickup: { location: 'I-5 N at exit 299B' } }),
    })
    expect(created.status).toBe(201)
    expect((await created.json() as { tracking_url: string }).tracking_url).toMatch(new RegExp(`^https://localhost:${port}/t/[0-9A-Za-z]{24}$`))
    expect(s.stderr()).not.toContain('plain http')
    expect(await s.stop()).toBe(0)
  })

  test('TOWLINE_TLS_CERT and TOWLINE_TLS_KEY do the same', async () => {
    const s = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'tls-env.db'], env: { TOWLINE_TLS_CERT: join(folder.dir, 'cert.pem'), TOWLINE_TLS_KEY: join(folder.dir, 'key.pem') } })
    expect(s.url).toStartWith('https://')
    expect((await fetch(`${s.url}/healthz`, { tls: { ca: ca.ca } })).status).toBe(200)
    expect(await s.stop()).toBe(0)
  })

  test('one without the other is one line naming both settings, exit 2, nothing created', () => {
    for (const [args, env] of [[['--tls-cert', 'cert.pem'], {}], [[], { TOWLINE_TLS_KEY: 'key.pem' }]] as [string[], Record<string, string>][]) {
      const r = serveFails(['--db', 'half.db', ...args], env)
      expect({ args, code: r.code }).toEqual({ args, code: 2 })
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toContain('TOWLINE_TLS_CERT')
      expect(r.stderr).toContain('TOWLINE_TLS_KEY')
      expect(r.stderr).not.toContain('listening')
      expect(existsSync(join(folder.dir, 'half.db'))).toBe(false)
    }
  })

  test('a certificate or key file that cannot be used is one line naming it, exit non-zero, nothing created', () => {
    writeFileSync(join(folder.dir, 'not-a-cert.pem'), 'hello\n')
    const cases: [string[], string][] = [
      [['--tls-cert', 'missing-cert.pem', '--tls-key', 'key.pem'], 'missing-cert.pem'],
      [['--tls-cert', 'cert.pem', '--tls-key', 'missing-key.pem'], 'missing-key.pem'],
      [['--tls-cert', 'not-a-cert.pem', '--tls-key', 'key.pem'], 'not-a-cert.pem'],
      [['--tls-cert', 'cert.pem', '--tls-key', 'not-a-cert.pem'], 'not-a-cert.pem'],
    ]
    for (const [args, named] of cases) {
      const r = serveFails(['--db', 'badtls.db', ...args])
      expect({ args, failed: r.code !== 0 && r.code !== null }).toEqual({ args, failed: true })
      expect({ args, lines: r.stderr.trim().split('\n').length, named: r.stderr.includes(named) }).toEqual({ args, lines: 1, named: true })
      expect(r.stderr).not.toContain('listening')
      expect(existsSync(join(folder.dir, 'badtls.db'))).toBe(false)
    }
  })
})

/** The warn lines of the server's log that name a public URL. */
const warnings = (s: RunningServer) => s.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((l) => l.level === 40 && 'public_url' in l)

describe('the plain-http warning', () => {
  test('serve warns in the log and on stderr when the public URL is plain http on a host other than this machine', async () => {
    const s = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'warn.db', '--public-url', 'http://tow.example.com:8080'] })
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200)
    const line = s.stderr().split('\n').find((l) => l.includes('http://tow.example.com:8080'))
    expect(line).toBeDefined()
    expect(line).toMatch(/https/)
    expect(warnings(s)).toEqual([expect.objectContaining({ level: 40, public_url: 'http://tow.example.com:8080' })])
    expect(await s.stop()).toBe(0)
  })

  test('not for localhost (the default), loopback in disguise, or an https public URL (a TLS proxy in front)', async () => {
    for (const url of [undefined, 'http://[::ffff:127.0.0.1]:8080', 'https://tow.example.com']) {
      const s = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'nowarn.db', ...(url ? ['--public-url', url] : [])] })
      expect({ url, warned: warnings(s).length > 0 || /plain http/.test(s.stderr()) }).toEqual({ url, warned: false })
      expect(await s.stop()).toBe(0)
    }
  })
})

describe('the default public URL on --port 0', () => {
  test('names the port serve actually bound', async () => {
    const s = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'port0.db'] })
    const port = new URL(s.url).port
    const key = createKeyWithCli(folder.bin, folder.dir, 'jobs:write', ['--db', 'port0.db'])
    const created = await fetch(`${s.api}/jobs`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customer: { name: 'Ann Lee' }, pickup: { location: 'I-5 N at exit 299B' } }),
    })
    expect((await created.json() as { tracking_url: string }).tracking_url).toStartWith(`http://localhost:${port}/t/`)
    expect(await s.stop()).toBe(0)
    expect(cli(folder.bin, ['keys', 'list', '--db', 'port0.db'], { cwd: folder.dir }).code).toBe(0)
  })
})

/**
 * The service frame, end to end: the compiled binary copied alone into a temporary folder,
 * keys made with its CLI, every error path seen over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { cli, createKeyWithCli, databaseOf, freshFolder, startServer, type RunningServer } from '../binary'
import { TEST_ENGINE } from '../engine'
import { checkEveryOperationNeedsItsScope } from '../scope-checks'
import { SCOPES } from '../../src/accounts/scopes'
import { embeddedMigrations } from '../../src/db/migrate'
import { embeddedPgMigrations } from '../../src/db/pg/migrate-postgres'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
})
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

const get = (path: string, headers: Record<string, string> = {}) => fetch(server.url + path, { headers })
const auth = (k: string) => ({ authorization: `Bearer ${k}` })

async function errorOf(res: Response, status: number, code: string) {
  const body = await res.json()
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code })
  expect(body.error.details.database_message).toBe(body.error.message)
  expect(res.headers.get('request-id')).toBeTruthy()
  return body.error
}

describe('the binary', () => {
  test('first serve on an empty database creates the default account and tells how to make a key, never logging one', async () => {
    if (TEST_ENGINE === 'sqlite') expect(existsSync(join(folder.dir, 'towline.db'))).toBe(true)
    expect(server.stderr()).toContain('keys create')
    expect(server.stdout() + server.stderr()).not.toMatch(/svc_live_[0-9A-Za-z]{32}/)
    const accounts = cli(folder.bin, ['accounts', 'list', '--json'], { cwd: folder.dir })
    expect(JSON.parse(accounts.stdout).data).toHaveLength(1)
  })

  test('the banner names the dashboard at the public URL, the one origin its forms accept, not the address it listens on', async () => {
    const port = new URL(server.url).port
    expect(server.stderr()).toContain(`Dashboard: http://localhost:${port}/login\n`)
    expect(server.stderr()).toContain(`listening on http://127.0.0.1:${port} `)
    const page = await fetch(`http://127.0.0.1:${port}/login`)
    expect(page.status).toBe(200)
  })

  test('--help works on every command', () => {
    const overview = cli(folder.bin, ['--help'], { cwd: folder.dir })
    expect(overview.code).toBe(0)
    const names = [...overview.stdout.matchAll(/^ {2}([a-z]+(?: [a-z]+)?)\s{2,}/gm)].map((m) => m[1]!)
    expect(names).toEqual(expect.arrayContaining(['serve', 'migrate', 'keys create', 'keys list', 'keys revoke', 'accounts create', 'version']))
    for (const name of names) {
      const r = cli(folder.bin, [...name.split(' '), '--help'], { cwd: folder.dir })
      expect({ name, code: r.code }).toEqual({ name, code: 0 })
      expect(r.stdout).toContain('towline ' + name)
    }
  })

  test('an unknown command or option exits 2 with usage', () => {
    expect(cli(folder.bin, ['frobnicate'], { cwd: folder.dir }).code).toBe(2)
    const r = cli(folder.bin, ['keys', 'create', '--nmae', 'x'], { cwd: folder.dir })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('Usage')
  })

  test('version prints the version', () => {
    const r = cli(folder.bin, ['version', '--json'], { cwd: folder.dir })
    expect(JSON.parse(r.stdout)).toMatchObject({ version: expect.any(String), api_version: '2026-09-01', schema: { sqlite: embeddedMigrations().at(-1)!.tag, postgres: embeddedPgMigrations().at(-1)!.tag } })
    expect(cli(folder.bin, ['version'], { cwd: folder.dir }).stdout).toContain(`schema ${embeddedMigrations().at(-1)!.tag} / PostgreSQL ${embeddedPgMigrations().at(-1)!.tag}`)
  })

  test('migrate is safe to run twice', () => {
    expect(cli(folder.bin, ['migrate'], { cwd: folder.dir }).code).toBe(0)
    expect(cli(folder.bin, ['migrate'], { cwd: folder.dir }).code).toBe(0)
  })

  test('runs from any folder on the database named by TOWLINE_DB or --db', () => {
    const r = cli(folder.bin, ['keys', 'list', '--json'], { cwd: '/', env: { TOWLINE_DB: databaseOf(folder.dir), TOWLINE_LINK_KEY_FILE: join(folder.dir, TEST_ENGINE === 'sqlite' ? 'towline.db.key' : 'towline.key') } })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).data.length).toBeGreaterThan(0)
  })
})

describe('keys through the CLI', () => {
  test('a created key calls GET /me; keys list never shows it; revoke stops it on the next request', async () => {
    const made = JSON.parse(cli(folder.bin, ['keys', 'create', '--name', 'billing', '--scopes', 'jobs:read', '--json'], { cwd: folder.dir }).stdout)
    expect(made.key).toMatch(/^svc_live_[0-9A-Za-z]{32}$/)
    const me = await get('/api/v1/me', auth(made.key))
    expect(me.status).toBe(200)
    expect(await me.json()).toMatchObject({ object: 'key', id: made.id, name: 'billing', scopes: ['jobs:read'], account: { id: made.account.id } })
    const list = cli(folder.bin, ['keys', 'list', '--json'], { cwd: folder.dir })
    expect(list.stdout).not.toContain(made.key)
    expect(JSON.parse(list.stdout).data.find((k: any) => k.id === made.id)).toMatchObject({ status: 'active', prefix: made.key.slice(0, 13) })
    expect(cli(folder.bin, ['keys', 'revoke', made.id], { cwd: folder.dir }).code).toBe(0)
    await errorOf(await get('/api/v1/me', auth(made.key)), 401, 'unauthorized')
  })

  test('a key for another account sees that account', async () => {
    const accountId = cli(folder.bin, ['accounts', 'create', '--name', 'Second Towing'], { cwd: folder.dir }).stdout.trim()
    expect(accountId).toStartWith('acct_')
    const other = createKeyWithCli(folder.bin, folder.dir, 'jobs:read', ['--account', accountId])
    expect((await (await get('/api/v1/me', auth(other))).json()).account).toEqual({ id: accountId, name: 'Second Towing' })
  })

  test('an unknown scope is refused by the CLI', () => {
    const r = cli(folder.bin, ['keys', 'create', '--name', 'x', '--scopes', 'jobs:destroy'], { cwd: folder.dir })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('unknown scope')
  })
})

describe('error paths over HTTP', () => {
  test('401 without a key, with WWW-Authenticate: Bearer', async () => {
    const res = await get('/api/v1/me')
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
    await errorOf(res, 401, 'unauthorized')
  })

  test('403 insufficient_scope names the scope', async () => {
    const k = createKeyWithCli(folder.bin, folder.dir, 'roster:read')
    expect((await errorOf(await get('/api/v1/me', auth(k)), 403, 'insufficient_scope')).details.required_scope).toBe('jobs:read')
  })

  test('routes right whatever the Host header (a proxy upstream named "api", say)', async () => {
    const { port } = new URL(server.url)
    for (const host of ['x', 'api', `api:${port}`]) {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { ...auth(key), host } })
      expect({ host, status: r.status }).toEqual({ host, status: 200 })
    }
  })

  test('404 for unknown routes, in the error shape', async () => {
    await errorOf(await get('/api/v1/no/such/thing', auth(key)), 404, 'not_found')
    await errorOf(await fetch(server.url + '/api/v1/me', { method: 'DELETE', headers: auth(key) }), 404, 'not_found')
  })

  test('413 payload_too_large in the JSON shape for a body over 256 KiB', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(300 * 1024) })
    const res = await fetch(server.api + '/jobs', { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: big })
    await errorOf(res, 413, 'payload_too_large')
  })

  test('every response carries a Request-Id, and the log line has method, route, status, duration and key id but never the key', async () => {
    const res = await get('/api/v1/me', auth(key))
    const id = res.headers.get('request-id')!
    expect(id).toStartWith('req_')
    for (const end = Date.now() + 5000; !server.stdout().includes(id) && Date.now() < end;) await Bun.sleep(10)
    const line = server.stdout().split('\n').find((l) => l.includes(id))
    expect(line).toBeDefined()
    const entry = JSON.parse(line!)
    expect(entry).toMatchObject({ method: 'GET', route: '/api/v1/me', status: 200, key_id: expect.stringMatching(/^key_/) })
    expect(typeof entry.duration_ms).toBe('number')
    expect(server.stdout()).not.toContain(key)
  })

  test('a link\'s token never reaches the log, not even on a path or method no route answers', async () => {
    const made = await fetch(`${server.url}/api/v1/jobs`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: JSON.stringify({ customer: { name: 'Lee Park' }, pickup: { location: 'I-84 E' } }) })
    const token = new URL(((await made.json()) as { tracking_url: string }).tracking_url).pathname.split('/')[2]!
    expect(token).toMatch(/^[0-9A-Za-z]{24}$/)
    const tries = [['GET', `/t/${token}`], ['OPTIONS', `/t/${token}/state`], ['PUT', `/t/${token}`], ['GET', `/t/${token}/nothing`], ['GET', `/t/${encodeURIComponent(token).replace(/^./, (c) => `%${c.charCodeAt(0).toString(16)}`)}/nothing`], ['DELETE', `/d/${token}`], ['POST', `/t/${token}.`], ['POST', `/t/${token})`], ['DELETE', `/t/${token}.json`], ['DELETE', `/t/${token};x`], ['POST', `/d/${token}%20`]]
    const ids: string[] = []
    for (const [method, path] of tries) ids.push((await fetch(server.url + path!, { method, redirect: 'manual' })).headers.get('request-id')!)
    for (const end = Date.now() + 5000; !ids.every((id) => server.stdout().includes(id)) && Date.now() < end;) await Bun.sleep(10)
    const lines = server.stdout().split('\n').filter((l) => ids.some((id) => l.includes(id)))
    expect(lines).toHaveLength(tries.length)
    expect(server.stdout() + server.stderr()).not.toContain(token)
    for (const line of lines) expect(JSON.parse(line).route).toMatch(/^\/(t|d)\/:token(\/|$)/)
  })

  test('every operation needs its scope (401 without a key, 403 with the others)', async () => {
    const doc = await (await get('/api/v1/openapi.json')).json()
    const keys = new Map(SCOPES.map((s) => [s, createKeyWithCli(folder.bin, folder.dir, SCOPES.filter((x) => x !== s).join(','))]))
    await checkEveryOperationNeedsItsScope(doc,
      (method, path, k) => fetch(server.url + path, { method, headers: k ? auth(k) : {}, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' }),
      (scope) => keys.get(scope as any)!)
  })
})

describe('operators and integrators', () => {
  test('GET /healthz answers without auth', async () => {
    const res = await get('/healthz')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok', database: 'ok' })
  })

  test('the OpenAPI document is valid OpenAPI 3.1 and covers the bearer scheme and error responses', async () => {
    const doc = await (await get('/api/v1/openapi.json')).json()
    expect(doc.openapi).toStartWith('3.1')
    const result = await new Validator().validate(doc)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.components.schemas.Error).toBeDefined()
    expect(doc.servers[0].url).toEndWith('/api/v1')
    const me = doc.paths['/me'].get
    expect(Object.keys(me.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '429']))
  })

  test('the docs page works offline: it loads the reference script from this server', async () => {
    const html = await (await get('/api/v1/docs')).text()
    const src = /<script src="([^"]+)"/.exec(html)?.[1]
    expect(src).toBe('/api/v1/docs/scalar.js')
    expect(html).not.toContain('cdn.')
    const js = await get(src!)
    expect(js.status).toBe(200)
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000)
  })
})

describe('shutdown', () => {
  test('SIGTERM lets a response in flight finish before exiting 0', async () => {
    const f = freshFolder()
    try {
      const s = await startServer(f.bin, { cwd: f.dir })
      const { port } = new URL(s.url)
      // A slow reader: take the 4 MB docs script a little at a time, signal mid-way, read the rest.
      let received = 0
      let resolveDone!: () => void
      const done = new Promise<void>((r) => { resolveDone = r })
      let headerEnd = -1
      let head = ''
      let length = 0
      const socket = await Bun.connect({
        hostname: '127.0.0.1', port: Number(port),
        socket: {
          data(_sock, chunk) {
            if (headerEnd < 0) {
              head += chunk.toString('latin1')
              headerEnd = head.indexOf('\r\n\r\n')
              if (headerEnd >= 0) {
                length = Number(/content-length: (\d+)/i.exec(head)?.[1])
                received = head.length - headerEnd - 4
              }
            } else received += chunk.length
            if (length && received >= length) resolveDone()
          },
          close() { resolveDone() },
        },
      })
      socket.pause()
      socket.write(`GET /api/v1/docs/scalar.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      await Bun.sleep(200)
      s.proc.kill('SIGTERM')
      await Bun.sleep(200)
      socket.resume()
      await done
      expect(length).toBeGreaterThan(1_000_000)
      expect(received).toBe(length)
      expect(await s.proc.exited).toBe(0)
    } finally {
      f.cleanup()
    }
  })

  test.skipIf(TEST_ENGINE === 'postgres')('while the server runs, the database file itself soon holds what was written (the WAL is folded in in the background)', async () => {
    const f = freshFolder()
    try {
      const s = await startServer(f.bin, { cwd: f.dir })
      const k = createKeyWithCli(f.bin, f.dir, 'jobs:read,jobs:write')
      // Far below the 4,000 pages after which a commit would fold the WAL in itself.
      for (let i = 0; i < 60; i++) {
        const res = await fetch(s.url + '/api/v1/jobs', { method: 'POST', headers: { ...auth(k), 'content-type': 'application/json' }, body: JSON.stringify({ customer: { name: `Ann ${i}` }, pickup: { location: 'I-5 N mile 12' } }) })
        expect(res.status).toBe(201)
      }
      // A copy of the file alone (no -wal beside it), as a file-level backup tool would take it.
      const jobsInFileAlone = () => {
        const copy = join(f.dir, `copy-${Date.now()}.db`)
        copyFileSync(join(f.dir, 'towline.db'), copy)
        // Taken while a page was being written, the copy may not open: that is 0 jobs seen, and a look again.
        try {
          const db = new Database(copy, { readonly: true })
          try { return (db.query('SELECT count(*) AS n FROM jobs').get() as { n: number }).n } finally { db.close() }
        } catch { return 0 }
      }
      const deadline = Date.now() + 5_000
      while (jobsInFileAlone() < 60 && Date.now() < deadline) await Bun.sleep(50)
      expect(jobsInFileAlone()).toBe(60)
      expect(await s.stop('SIGTERM')).toBe(0)
    } finally {
      f.cleanup()
    }
  })

  test('SIGTERM checkpoints the WAL and exits 0; a restart finds every key', async () => {
    const f = freshFolder()
    try {
      const s = await startServer(f.bin, { cwd: f.dir })
      const k = createKeyWithCli(f.bin, f.dir, 'jobs:read')
      expect((await fetch(s.url + '/api/v1/me', { headers: auth(k) })).status).toBe(200)
      expect(await s.stop('SIGTERM')).toBe(0)
      // Every connection closed (the checkpointer thread's too): the last one folded the WAL in and removed it.
      expect(existsSync(join(f.dir, 'towline.db-wal'))).toBe(false)
      expect(existsSync(join(f.dir, 'towline.db-shm'))).toBe(false)
      const again = await startServer(f.bin, { cwd: f.dir })
      expect((await fetch(again.url + '/api/v1/me', { headers: auth(k) })).status).toBe(200)
      expect(await again.stop('SIGINT')).toBe(0)
    } finally {
      f.cleanup()
    }
  })
})

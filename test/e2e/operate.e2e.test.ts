/**
 * Operating the binary: mistakes an operator can make fail loudly and change nothing, files
 * are created for their owner only, and what the commands print is what exists.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { cli, databaseOf, freshFolder, startServerPerTest } from '../binary'
import { TEST_ENGINE } from '../engine'
import { describeDatabase } from '../../src/db/location'
import { closeDatabase, openDatabase } from '../../src/db/client'
import { embeddedMigrations, migrateDatabase } from '../../src/db/migrate'

let folder: ReturnType<typeof freshFolder>
beforeAll(() => { folder = freshFolder() })
afterAll(() => folder?.cleanup())

// A failed expectation must not leave a server running: every one started is stopped after its test.
const startServer = startServerPerTest()

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)
/** Every file in the folder except the binary itself. */
const filesIn = (dir: string) => readdirSync(dir).filter((f) => f !== 'towline').sort()

describe('a busy port', () => {
  test('a second serve on a port in use exits non-zero with one line naming the port, touching no database', async () => {
    const f = freshFolder()
    try {
      const first = await startServer(f.bin, { cwd: f.dir })
      const { port } = new URL(first.url)
      // Bounded: a second server that starts anyway is stopped after 10 s (and the test fails).
      const second = Bun.spawnSync([f.bin, 'serve', '--port', port, '--host', '127.0.0.1', '--db', 'second.db'], {
        cwd: f.dir, env: { ...process.env, LOG_LEVEL: 'info' }, stdout: 'pipe', stderr: 'pipe', timeout: 10_000,
      })
      const stderr = second.stderr.toString()
      expect(stderr).not.toContain('listening')
      expect(second.exitCode).not.toBe(0)
      expect(second.exitCode).not.toBeNull()
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(port)
      expect(stderr).toContain('in use')
      expect(second.stdout.toString()).toBe('')
      expect(existsSync(join(f.dir, 'second.db'))).toBe(false)
      // The first server still answers, alone.
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200)
      expect(await first.stop()).toBe(0)
    } finally {
      f.cleanup()
    }
  })
})

describe('commands that need a database never create one', () => {
  const cases: [string, string[]][] = [
    ['backup to a file with a mistyped --db', ['backup', 'copy.db', '--db', 'typo.db']],
    ['keys list', ['keys', 'list']],
    ['keys create', ['keys', 'create', '--name', 'x', '--scopes', 'jobs:read']],
    ['accounts list', ['accounts', 'list']],
    ['units add', ['units', 'add', '--name', 'Truck 1']],
    ['jobs list', ['jobs', 'list']],
    ['texts list', ['texts', 'list']],
  ]
  for (const [what, args] of cases) {
    test(`${what}: names the missing file in one line, exits non-zero, creates nothing`, () => {
      const f = freshFolder()
      try {
        const r = cli(f.bin, args, { cwd: f.dir })
        expect(r.code).not.toBe(0)
        // On PostgreSQL the folder's database exists but holds no towline tables: named the same way, left empty.
        const name = args.includes('--db') ? 'typo.db' : TEST_ENGINE === 'postgres' ? describeDatabase(databaseOf(f.dir)) : 'towline.db'
        expect(r.stderr.trim().split('\n')).toHaveLength(1)
        expect(r.stderr).toContain(name)
        expect(r.stdout).toBe('')
        expect(filesIn(f.dir)).toEqual([])
      } finally {
        f.cleanup()
      }
    })
  }
})

// A database at an older layout is made here with the migrations of the source, up to one tag.
;(TEST_ENGINE === 'sqlite' ? describe : describe.skip)('a database made by an older towline', () => {
  test('is refused by the other commands, in one line naming migrate, and left as it was; backup copies it as it is; migrate upgrades it', () => {
    const f = freshFolder()
    try {
      const path = join(f.dir, 'towline.db')
      const old = openDatabase(path, { create: true })
      migrateDatabase(old, { through: '0006_webhook_event_payloads' })
      const applied = () => (old.$client.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n
      const before = applied()
      for (const args of [['keys', 'list'], ['jobs', 'list'], ['units', 'add', '--name', 'Truck 1']]) {
        const r = cli(f.bin, args, { cwd: f.dir })
        expect({ args, code: r.code, lines: r.stderr.trim().split('\n').length, stdout: r.stdout }).toEqual({ args, code: 2, lines: 1, stdout: '' })
        expect(r.stderr).toContain('was made by an older towline')
        expect(r.stderr).toContain('migrate')
        expect(applied()).toBe(before)
      }
      expect(existsSync(join(f.dir, 'towline.db.key'))).toBe(false)
      const backup = cli(f.bin, ['backup', 'before-upgrade.db'], { cwd: f.dir })
      expect(backup.code).toBe(0)
      expect(applied()).toBe(before)
      closeDatabase(old)
      const upgraded = cli(f.bin, ['migrate'], { cwd: f.dir })
      expect(upgraded.code).toBe(0)
      // It says what it did: the migrations it applied.
      const last = embeddedMigrations().at(-1)!.tag
      expect(upgraded.stdout.split('\n')[0]).toBe(`./towline.db: applied ${embeddedMigrations().length - 7} migrations (0007_hardening_sites_leases_links to ${last}); it is at migration ${last} (${embeddedMigrations().length} embedded).`)
      expect(cli(f.bin, ['migrate'], { cwd: f.dir }).stdout).toBe(`./towline.db: nothing to apply; it is at migration ${last} (${embeddedMigrations().length} embedded).\n`)
      const listed = cli(f.bin, ['keys', 'list'], { cwd: f.dir })
      expect({ code: listed.code, stdout: listed.stdout.startsWith('No keys yet.') }).toEqual({ code: 0, stdout: true })
    } finally {
      f.cleanup()
    }
  })

  test('a database whose record names migrations no release has (a development build\'s) is refused in one line by migrate, serve and the commands, and left as it was', () => {
    const f = freshFolder()
    try {
      expect(cli(f.bin, ['migrate'], { cwd: f.dir }).code).toBe(0)
      const db = openDatabase(join(f.dir, 'towline.db'))
      // As a build of 2026-11-23 left it: its 0007 had another time (and other SQL) than the one released.
      db.$client.exec("UPDATE __drizzle_migrations SET created_at = 1795445752758, hash = 'x' WHERE created_at = (SELECT created_at FROM __drizzle_migrations ORDER BY created_at LIMIT 1 OFFSET 7)")
      closeDatabase(db)
      const before = readFileSync(join(f.dir, 'towline.db'))
      for (const args of [['migrate'], ['serve', '--port', '0', '--host', '127.0.0.1'], ['keys', 'list']]) {
        const r = cli(f.bin, args, { cwd: f.dir })
        expect({ args, code: r.code }).toEqual({ args, code: 2 })
        expect(r.stderr.trim().split('\n').filter((l) => !l.startsWith('{'))).toEqual([expect.stringContaining('was made by a development build of towline whose migrations were changed before release')])
      }
      expect(readFileSync(join(f.dir, 'towline.db')).equals(before)).toBe(true)
    } finally {
      f.cleanup()
    }
  })

  test('an empty file is no database: the commands say so and leave it empty', () => {
    const f = freshFolder()
    try {
      writeFileSync(join(f.dir, 'towline.db'), '')
      const r = cli(f.bin, ['keys', 'list'], { cwd: f.dir })
      expect(r.code).not.toBe(0)
      expect(r.stderr).toContain('no database at')
      expect(statSync(join(f.dir, 'towline.db')).size).toBe(0)
    } finally {
      f.cleanup()
    }
  })
})

;(TEST_ENGINE === 'sqlite' ? describe : describe.skip)('commands run at once', () => {
  test('six `sites add` of one name at the same moment make one site; the others are refused naming it', async () => {
    const f = freshFolder()
    try {
      expect(cli(f.bin, ['migrate'], { cwd: f.dir }).code).toBe(0)
      const runs = await Promise.all(Array.from({ length: 6 }, async () => {
        const p = Bun.spawn([f.bin, 'sites', 'add', '--name', 'Race yard'], { cwd: f.dir, stdout: 'pipe', stderr: 'pipe' })
        return { code: await p.exited, stderr: await new Response(p.stderr).text() }
      }))
      expect(runs.filter((r) => r.code === 0)).toHaveLength(1)
      for (const r of runs.filter((x) => x.code !== 0)) expect(r.stderr).toContain('already has a site named "Race yard"')
      const listed = cli(f.bin, ['sites', 'list', '--json'], { cwd: f.dir })
      expect(JSON.parse(listed.stdout).data.filter((s: { name: string }) => s.name === 'Race yard')).toHaveLength(1)
    } finally {
      f.cleanup()
    }
  })
})

// The SQLite file's mode (a PostgreSQL database's files are the server's).
;(TEST_ENGINE === 'sqlite' ? describe : describe.skip)('files are readable by their owner only', () => {
  test('migrate and demo create the database 0600', () => {
    const dir = folder.dir
    expect(cli(folder.bin, ['migrate', '--db', 'm.db'], { cwd: dir }).code).toBe(0)
    expect(mode(join(dir, 'm.db'))).toBe('600')
    expect(cli(folder.bin, ['demo', '--db', 'd.db'], { cwd: dir }).code).toBe(0)
    expect(mode(join(dir, 'd.db'))).toBe('600')
  })

  test('serve creates the database and its -wal and -shm 0600; a backup taken while serving is 0600', async () => {
    const f = freshFolder()
    try {
      const s = await startServer(f.bin, { cwd: f.dir })
      for (const name of ['towline.db', 'towline.db-wal', 'towline.db-shm']) expect({ name, mode: mode(join(f.dir, name)) }).toEqual({ name, mode: '600' })
      const r = cli(f.bin, ['backup', 'copy.db'], { cwd: f.dir })
      expect(r.code).toBe(0)
      expect(mode(join(f.dir, 'copy.db'))).toBe('600')
      expect(await s.stop()).toBe(0)
    } finally {
      f.cleanup()
    }
  })

  test('serve tightens an existing database and its link key file readable by others, and says so in the log', async () => {
    const f = freshFolder()
    try {
      expect(cli(f.bin, ['migrate'], { cwd: f.dir }).code).toBe(0)
      chmodSync(join(f.dir, 'towline.db'), 0o644)
      // The key file beside a SQLite database; PostgreSQL's is ./towline.key.
      const keyFile = [join(f.dir, 'towline.db.key'), join(f.dir, 'towline.key')].find(existsSync)!
      chmodSync(keyFile, 0o644)
      const s = await startServer(f.bin, { cwd: f.dir })
      expect(mode(join(f.dir, 'towline.db'))).toBe('600')
      expect(mode(join(f.dir, 'towline.db-wal'))).toBe('600')
      expect(mode(keyFile)).toBe('600')
      const line = s.stdout().split('\n').find((l) => l.includes('made them owner-only'))
      expect(line).toBeDefined()
      expect(JSON.parse(line!)).toMatchObject({ level: 40, files: [expect.stringContaining('towline.db')] })
      const keyLine = s.stdout().split('\n').find((l) => l.includes('link key file was readable'))
      expect(JSON.parse(keyLine!)).toMatchObject({ level: 40, file: expect.stringContaining(basename(keyFile)) })
      expect(await s.stop()).toBe(0)
    } finally {
      f.cleanup()
    }
  })

  test.skipIf(TEST_ENGINE !== 'sqlite')('serve refuses a database it cannot write, in one line, leaving it read-only; a file that is not a database keeps its mode', () => {
    const f = freshFolder()
    try {
      expect(cli(f.bin, ['migrate'], { cwd: f.dir }).code).toBe(0)
      const db = join(f.dir, 'towline.db')
      chmodSync(db, 0o444)
      // Root writes whatever the mode says: the server then runs as nobody, as a service user would.
      const asRoot = process.getuid?.() === 0
      if (asRoot) {
        chmodSync(f.dir, 0o777)
        for (const file of readdirSync(f.dir)) Bun.spawnSync(['chown', 'nobody', join(f.dir, file)])
      }
      const run = (args: string[]) => {
        const r = Bun.spawnSync([...(asRoot ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'] : []), f.bin, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], { cwd: f.dir, stdout: 'pipe', stderr: 'pipe', timeout: 10_000 })
        return { code: r.exitCode, stderr: r.stderr.toString() }
      }
      const refused = run([])
      expect(refused.code).toBe(1)
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining('cannot write to the database ./towline.db')])
      expect(mode(db)).toBe('400')
      Bun.write(join(f.dir, 'notes.txt'), 'not a database')
      chmodSync(join(f.dir, 'notes.txt'), 0o644)
      if (asRoot) Bun.spawnSync(['chown', 'nobody', join(f.dir, 'notes.txt')])
      expect(run(['--db', 'notes.txt']).code).not.toBe(0)
      expect(mode(join(f.dir, 'notes.txt'))).toBe('644')
    } finally {
      f.cleanup()
    }
  })

  test.skipIf(TEST_ENGINE !== 'sqlite')('a backup killed part way leaves nothing at the backup\'s name; the next one completes', async () => {
    const dir = folder.dir
    cli(folder.bin, ['migrate', '--db', 'cut.db'], { cwd: dir })
    // 40 MB more to copy, so the copy is still running when it is killed.
    const raw = new Database(join(dir, 'cut.db'))
    raw.run('CREATE TABLE filler (b BLOB)')
    const add = raw.prepare('INSERT INTO filler VALUES (randomblob(65536))')
    raw.transaction(() => { for (let i = 0; i < 640; i++) add.run() })()
    raw.close()
    const proc = Bun.spawn([folder.bin, 'backup', 'cut-backup.db', '--db', 'cut.db'], { cwd: dir, stdout: 'ignore', stderr: 'ignore' })
    // Killed as soon as its copy has begun (a file of its own appears).
    const started = Date.now()
    while (!readdirSync(dir).some((n) => n.startsWith('cut-backup.db')) && Date.now() - started < 10_000) await Bun.sleep(1)
    proc.kill('SIGKILL')
    await proc.exited
    expect(existsSync(join(dir, 'cut-backup.db'))).toBe(false)
    expect(cli(folder.bin, ['backup', 'cut-backup.db', '--db', 'cut.db'], { cwd: dir }).code).toBe(0)
    expect(readdirSync(dir).filter((n) => n.startsWith('cut-backup.db')).sort()).toEqual(['cut-backup.db', 'cut-backup.db.key'])
    expect(cli(folder.bin, ['keys', 'list', '--db', 'cut-backup.db'], { cwd: dir }).code).toBe(0)
  })

  test('backup refuses a file that exists, leaving it as it was', () => {
    const dir = folder.dir
    cli(folder.bin, ['migrate', '--db', 'b.db'], { cwd: dir })
    Bun.write(join(dir, 'taken.db'), 'mine')
    const r = cli(folder.bin, ['backup', 'taken.db', '--db', 'b.db'], { cwd: dir })
    expect(r.code).not.toBe(0)
    expect(r.stderr).toBe('towline backup: taken.db exists; choose a new file name\n')
    expect(readFileSync(join(dir, 'taken.db'), 'utf8')).toBe('mine')
    // Into a folder that is not there: one line naming it, nothing made.
    const lost = cli(folder.bin, ['backup', 'no-such-folder/b.db', '--db', 'b.db'], { cwd: dir })
    expect({ code: lost.code, stderr: lost.stderr }).toEqual({ code: 2, stderr: 'towline backup: the folder no-such-folder does not exist; make it first (the backup and its key go there)\n' })
    expect(existsSync(join(dir, 'no-such-folder'))).toBe(false)
  })
})

describe('what the commands print', () => {
  test('a list for an --account that does not exist is refused naming it, not shown as empty; texts templates refuses --text without --set, and both --set and --reset', () => {
    const dir = folder.dir
    cli(folder.bin, ['migrate', '--db', 'a.db'], { cwd: dir })
    for (const what of ['keys', 'users', 'units']) {
      const r = cli(folder.bin, [what, 'list', '--account', 'acct_typo', '--db', 'a.db'], { cwd: dir })
      expect({ what, code: r.code, stdout: r.stdout, says: r.stderr.includes('no account acct_typo') }).toEqual({ what, code: 2, stdout: '', says: true })
    }
    const noSet = cli(folder.bin, ['texts', 'templates', '--text', 'Hello', '--db', 'a.db'], { cwd: dir })
    expect({ code: noSet.code, says: noSet.stderr.includes('--text needs --set') }).toEqual({ code: 2, says: true })
    const both = cli(folder.bin, ['texts', 'templates', '--set', 'status_en_route', '--text', 'On the way {tracking_url}', '--reset', 'status_en_route', '--db', 'a.db'], { cwd: dir })
    expect({ code: both.code, says: both.stderr.includes('not both') }).toEqual({ code: 2, says: true })
    // Names are one line of at most 100 characters (the company's opens every text).
    const long = cli(folder.bin, ['accounts', 'create', '--name', 'N'.repeat(101), '--db', 'a.db'], { cwd: dir })
    expect({ ok: long.code === 0, says: long.stderr.includes("the account's name must be at most 100 characters") }).toEqual({ ok: false, says: true })
    const twoLines = cli(folder.bin, ['units', 'add', '--name', 'Truck\n1', '--db', 'a.db'], { cwd: dir })
    expect({ code: twoLines.code, says: twoLines.stderr.includes('must be on one line') }).toEqual({ code: 2, says: true })
    // A hand-picked device id short enough to guess is taken, with a warning.
    const weak = cli(folder.bin, ['units', 'add', '--name', 'Truck W', '--device-id', 'abc', '--db', 'a.db'], { cwd: dir, env: { TOWLINE_PUBLIC_URL: 'https://tow.example.com' } })
    expect({ code: weak.code, says: weak.stderr.includes('device id abc is short enough to guess') }).toEqual({ code: 0, says: true })
  })

  test('units add warns on stderr, still exiting 0, when phones cannot reach the public URL', () => {
    const dir = folder.dir
    cli(folder.bin, ['migrate', '--db', 'u.db'], { cwd: dir })
    const add = (url: string, name: string) => cli(folder.bin, ['units', 'add', '--name', name, '--db', 'u.db'], { cwd: dir, env: { TOWLINE_PUBLIC_URL: url } })
    for (const url of ['http://localhost:8080', 'http://192.168.1.20:8080', 'http://towline.local']) {
      const r = add(url, `Truck ${url}`)
      expect({ url, code: r.code }).toEqual({ url, code: 0 })
      expect(r.stdout).toStartWith('unit_')
      expect(r.stderr).toMatch(/phones/i)
      expect(r.stderr).toContain('TOWLINE_PUBLIC_URL')
    }
    const plain = add('http://tow.example.com', 'Truck plain')
    expect(plain.code).toBe(0)
    expect(plain.stderr).toContain('https')
    expect(plain.stderr).toContain('TOWLINE_PUBLIC_URL')
    const fine = add('https://tow.example.com', 'Truck fine')
    expect(fine.code).toBe(0)
    expect(fine.stderr).not.toContain('TOWLINE_PUBLIC_URL')
  })

  test('demo tells how to make a key in the form the operator ran it', () => {
    const r = cli(folder.bin, ['demo', '--db', 'demo2.db'], { cwd: folder.dir })
    expect(r.code).toBe(0)
    expect(r.stderr).toContain(`${folder.bin} keys create --db demo2.db --account ${r.stdout.trim()}`)
  })

  test('--help claims no pages that do not exist yet (the tracking and driver pages), and names the dashboard logins that do', () => {
    const r = cli(folder.bin, ['--help'], { cwd: folder.dir })
    expect(r.code).toBe(0)
    expect(r.stdout).not.toMatch(/tracking page|driver page|driver's page/i)
    expect(r.stdout).toMatch(/users create +Create a dashboard login/)
    expect(cli(folder.bin, ['serve', '--help'], { cwd: folder.dir }).stdout).not.toMatch(/tracking page|driver page|driver's page/i)
    expect(cli(folder.bin, ['demo', '--help'], { cwd: folder.dir }).stdout).toContain('owner login for the dashboard')
  })
})

describe('the docs page script', () => {
  test('is served compressed to clients that accept it, the same bytes once decompressed', async () => {
    const f = freshFolder()
    try {
      const s = await startServer(f.bin, { cwd: f.dir })
      const url = `${s.url}/api/v1/docs/scalar.js`
      const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' }, decompress: false })
      expect(plain.headers.get('content-encoding')).toBeNull()
      const original = new Uint8Array(await plain.arrayBuffer())
      expect(original.byteLength).toBeGreaterThan(1_000_000)
      for (const [encoding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
        const res = await fetch(url, { headers: { 'accept-encoding': encoding }, decompress: false })
        expect(res.headers.get('content-encoding')).toBe(encoding)
        expect(res.headers.get('vary')?.toLowerCase()).toContain('accept-encoding')
        const body = new Uint8Array(await res.arrayBuffer())
        expect(body.byteLength).toBeLessThan(original.byteLength / 3)
        expect(Buffer.from(decode(body)).equals(Buffer.from(original))).toBe(true)
      }
      expect(await s.stop()).toBe(0)
    } finally {
      f.cleanup()
    }
  })
})

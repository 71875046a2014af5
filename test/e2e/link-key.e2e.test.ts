/**
 * The link key end to end: the compiled binary keeps the key its job links are sealed with in
 * `<db>.key` (0600), refuses a database whose key is missing or wrong (one line naming the
 * file, every command), and `towline backup FILE` writes FILE.key so a restore keeps working links.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { cli, createKeyWithCli, freshFolder, startServer } from '../binary'
import { TEST_ENGINE } from '../engine'
import { embeddedMigrations } from '../../src/db/migrate'

/** These are checks of the SQLite file and the key file beside it (PostgreSQL's key file: copy-database.test.ts, the PostgreSQL docs). */
const onSqlite = TEST_ENGINE === 'sqlite'
const fileTest = onSqlite ? test : test.skip
const fileDescribe = onSqlite ? describe : describe.skip

let folder: ReturnType<typeof freshFolder>
let job: { id: string; tracking_url: string }
let apiKey: string

const mode = (path: string) => statSync(path).mode & 0o777
/** The lines a failed command wrote (blank ones left out). */
const lines = (s: string) => s.split('\n').filter((l) => l.trim())

beforeAll(async () => {
  if (!onSqlite) return
  folder = freshFolder()
  const server = await startServer(folder.bin, { cwd: folder.dir })
  try {
    apiKey = createKeyWithCli(folder.bin, folder.dir, 'all')
    const post = (path: string, body: unknown) => fetch(`${server.api}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const res = await post('/jobs', { customer: { name: 'Ann', phone: '503-555-0142', sms_consent: true }, pickup: { location: 'I-5 N mile 12' } })
    expect(res.status).toBe(201)
    job = await res.json() as any
    const unit = JSON.parse(cli(folder.bin, ['units', 'add', '--name', 'Truck 1', '--driver-phone', '503-555-0199', '--json'], { cwd: folder.dir }).stdout)
    expect((await post(`/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
  } finally {
    expect(await server.stop()).toBe(0)
  }
})
afterAll(() => folder?.cleanup())

fileTest('the database file holds neither the tracking nor the driver token; the operator still reads both links', () => {
  const tracking = /\/t\/([0-9A-Za-z]{24})$/.exec(job.tracking_url)![1]!
  const outbox = JSON.parse(cli(folder.bin, ['texts', 'list', '--json', '--job', job.id], { cwd: folder.dir }).stdout).data as any[]
  const driverText = outbox.find((t) => t.template === 'driver_job_link')
  const driver = /\/d\/([0-9A-Za-z]{24})\b/.exec(driverText.body)![1]!
  expect(outbox.find((t) => t.template === 'request_received').body).toContain(job.tracking_url)
  const bytes = ['towline.db', 'towline.db-wal'].map((f) => join(folder.dir, f)).filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('')
  expect(bytes.length).toBeGreaterThan(0)
  expect({ tracking: bytes.includes(tracking), driver: bytes.includes(driver) }).toEqual({ tracking: false, driver: false })
})

fileDescribe('the key file', () => {
  test('a fresh database gets <db>.key, readable by its owner only, holding no token', () => {
    const key = join(folder.dir, 'towline.db.key')
    expect(existsSync(key)).toBe(true)
    expect(mode(key)).toBe(0o600)
    expect(readFileSync(key, 'utf8')).toMatch(/^[A-Za-z0-9+/]{43}=\n$/)
    // migrate creates a database too: with its key, and says so (backups must carry it).
    const made = cli(folder.bin, ['migrate', '--db', 'other.db'], { cwd: folder.dir })
    expect(made.code).toBe(0)
    expect(made.stdout).toContain('Created its link key other.db.key: job links are sealed with it, so back it up with the database')
    expect(mode(join(folder.dir, 'other.db.key'))).toBe(0o600)
  })

  test('a database moved without its key file is refused by serve and by every command, in one line naming the file', () => {
    copyFileSync(join(folder.dir, 'towline.db'), join(folder.dir, 'moved.db'))
    for (const args of [['serve', '--port', '0', '--host', '127.0.0.1'], ['jobs', 'list'], ['keys', 'list'], ['migrate']]) {
      const r = cli(folder.bin, [...args, '--db', 'moved.db'], { cwd: folder.dir })
      expect({ args, code: r.code }).toEqual({ args, code: 2 })
      expect(lines(r.stderr)).toEqual([expect.stringContaining('moved.db.key is missing')])
      expect(r.stdout).toBe('')
    }
    // Nothing was made in its place: the database stays refused until the right key comes back.
    expect(existsSync(join(folder.dir, 'moved.db.key'))).toBe(false)
  })

  test('another database\'s key file is refused the same way', () => {
    copyFileSync(join(folder.dir, 'towline.db'), join(folder.dir, 'wrong.db'))
    copyFileSync(join(folder.dir, 'other.db.key'), join(folder.dir, 'wrong.db.key'))
    for (const args of [['serve', '--port', '0', '--host', '127.0.0.1'], ['texts', 'list']]) {
      const r = cli(folder.bin, [...args, '--db', 'wrong.db'], { cwd: folder.dir })
      expect({ args, code: r.code }).toEqual({ args, code: 2 })
      expect(lines(r.stderr)).toEqual([expect.stringContaining('wrong.db.key does not open this database')])
    }
  })

  test('a new database names its key before it holds a link: a command run with another key file (or from another folder) is refused and makes none', () => {
    const etc = join(folder.dir, 'etc.key')
    expect(cli(folder.bin, ['migrate', '--db', 'fresh.db'], { cwd: folder.dir, env: { TOWLINE_LINK_KEY_FILE: etc } }).code).toBe(0)
    expect(existsSync(etc)).toBe(true)
    // The operator forgets the variable: demo, import, users... would have made fresh.db.key and sealed the demo's links with it.
    for (const args of [['demo'], ['users', 'list'], ['migrate']]) {
      const r = cli(folder.bin, [...args, '--db', 'fresh.db'], { cwd: folder.dir })
      expect({ args, code: r.code }).toEqual({ args, code: 2 })
      expect(lines(r.stderr)).toEqual([expect.stringContaining('fresh.db.key is missing')])
    }
    expect(existsSync(join(folder.dir, 'fresh.db.key'))).toBe(false)
    copyFileSync(join(folder.dir, 'other.db.key'), join(folder.dir, 'fresh.db.key'))
    const wrong = cli(folder.bin, ['demo', '--db', 'fresh.db'], { cwd: folder.dir })
    expect(wrong.code).toBe(2)
    expect(lines(wrong.stderr)).toEqual([expect.stringContaining('fresh.db.key does not open this database')])
    const right = cli(folder.bin, ['demo', '--db', 'fresh.db'], { cwd: folder.dir, env: { TOWLINE_LINK_KEY_FILE: etc } })
    expect({ code: right.code, stderr: right.code ? right.stderr : '' }).toEqual({ code: 0, stderr: '' })
  })

  test('four commands making one new database at once with four key files: one makes it, the others are refused in one line and leave no key behind', async () => {
    const runs = await Promise.all(['a', 'b', 'c', 'd'].map(async (k) => {
      const p = Bun.spawn([folder.bin, 'migrate', '--db', 'race.db'], { cwd: folder.dir, env: { ...process.env, TOWLINE_LINK_KEY_FILE: join(folder.dir, `race-${k}.key`) }, stdout: 'pipe', stderr: 'pipe' })
      return { k, code: await p.exited, stderr: await new Response(p.stderr).text() }
    }))
    const won = runs.filter((r) => r.code === 0)
    expect(won).toHaveLength(1)
    for (const r of runs.filter((x) => x.code !== 0)) {
      // Refused as made with another key, or (opened after the winner named its key) as missing its own.
      expect({ code: r.code, lines: lines(r.stderr) }).toEqual({ code: 2, lines: [expect.stringMatching(new RegExp(`race-${r.k}\\.key (does not open this database's job links|is missing)`))] })
    }
    expect(['a', 'b', 'c', 'd'].filter((k) => existsSync(join(folder.dir, `race-${k}.key`)))).toEqual([won[0]!.k])
    const db = new Database(join(folder.dir, 'race.db'), { readonly: true })
    expect((db.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(embeddedMigrations().length)
    db.close()
  })

  test('serve given a key file of its own prints commands that carry it: run as printed, they work', async () => {
    const etc = join(folder.dir, 'etc-banner.key')
    const server = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'banner.db'], env: { TOWLINE_LINK_KEY_FILE: etc } })
    try {
      const printed = /\n {2}(TOWLINE_LINK_KEY_FILE=\S+ \S+ users create --db banner\.db --email you@example\.com --role owner)\n/.exec(server.stderr())?.[1]
      expect(printed).toBe(`TOWLINE_LINK_KEY_FILE=${etc} ${folder.bin} users create --db banner.db --email you@example.com --role owner`)
      const r = Bun.spawnSync(['sh', '-c', printed!], { cwd: folder.dir, stdout: 'pipe', stderr: 'pipe' })
      expect({ code: r.exitCode, stderr: r.exitCode ? r.stderr.toString() : '' }).toEqual({ code: 0, stderr: '' })
    } finally {
      await server.stop()
    }
  })

  test('a database from before the key was named is told by its links, and names it from then on', () => {
    // towline.db as an older towline left it: sealed links, no key named.
    copyFileSync(join(folder.dir, 'towline.db'), join(folder.dir, 'older.db'))
    const db = new Database(join(folder.dir, 'older.db'))
    db.exec('DELETE FROM installation')
    db.close()
    copyFileSync(join(folder.dir, 'other.db.key'), join(folder.dir, 'older.db.key'))
    expect(lines(cli(folder.bin, ['jobs', 'list', '--db', 'older.db'], { cwd: folder.dir }).stderr)).toEqual([expect.stringContaining('older.db.key does not open this database')])
    copyFileSync(join(folder.dir, 'towline.db.key'), join(folder.dir, 'older.db.key'))
    expect(cli(folder.bin, ['jobs', 'list', '--db', 'older.db'], { cwd: folder.dir }).code).toBe(0)
    const after = new Database(join(folder.dir, 'older.db'), { readonly: true })
    expect(after.query('SELECT count(*) AS n FROM installation').get()).toEqual({ n: 1 })
    after.close()
  })

  test('TOWLINE_LINK_KEY_FILE points a moved database at its key', async () => {
    const server = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'moved.db'], env: { TOWLINE_LINK_KEY_FILE: join(folder.dir, 'towline.db.key') } })
    try {
      const res = await fetch(`${server.api}/jobs/${job.id}`, { headers: { authorization: `Bearer ${apiKey}` } })
      expect(((await res.json()) as any).tracking_url.replace(/^http:\/\/[^/]+/, '')).toBe(job.tracking_url.replace(/^http:\/\/[^/]+/, ''))
    } finally {
      await server.stop()
    }
  })
})

fileDescribe('towline backup', () => {
  test('writes FILE.key (0600) beside FILE; serving the copy keeps every link', async () => {
    const r = cli(folder.bin, ['backup', 'copy.db'], { cwd: folder.dir })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('copy.db.key')
    expect(mode(join(folder.dir, 'copy.db.key'))).toBe(0o600)
    expect(readFileSync(join(folder.dir, 'copy.db.key'), 'utf8')).toBe(readFileSync(join(folder.dir, 'towline.db.key'), 'utf8'))
    const server = await startServer(folder.bin, { cwd: folder.dir, args: ['--db', 'copy.db'] })
    try {
      const res = await fetch(`${server.api}/jobs/${job.id}`, { headers: { authorization: `Bearer ${apiKey}` } })
      const restored = await res.json() as any
      expect(restored.tracking_url.replace(/^http:\/\/[^/]+/, '')).toBe(job.tracking_url.replace(/^http:\/\/[^/]+/, ''))
      expect(restored.tracking_url).not.toContain('link-unavailable')
    } finally {
      await server.stop()
    }
  })

  test('refuses to overwrite a key file already at FILE.key, and writes no backup then', () => {
    copyFileSync(join(folder.dir, 'other.db.key'), join(folder.dir, 'copy2.db.key'))
    const r = cli(folder.bin, ['backup', 'copy2.db'], { cwd: folder.dir })
    expect(r.code).toBe(2)
    expect(lines(r.stderr)[0]).toContain('copy2.db.key exists')
    expect(existsSync(join(folder.dir, 'copy2.db'))).toBe(false)
  })
})

test('a new database whose key file cannot be made (its folder missing, a file where a folder should be, a folder named as the file) is refused in one line, exit 2, and no database file is left', async () => {
  const dir = freshFolder()
  try {
    const file = join(dir.dir, 'plain-file')
    await Bun.write(file, 'x')
    const folderKey = join(dir.dir, 'a-folder')
    mkdirSync(folderKey)
    const cases: [string, string][] = [
      [join(dir.dir, 'no-such-folder', 'link.key'), `cannot create the link key file ${join(dir.dir, 'no-such-folder', 'link.key')}: the folder ${join(dir.dir, 'no-such-folder')} does not exist (create it, or point TOWLINE_LINK_KEY_FILE elsewhere); nothing was sealed`],
      [join(file, 'link.key'), `cannot create the link key file ${join(file, 'link.key')}: ${file} is not a folder; nothing was sealed`],
      [folderKey, `${folderKey} is a folder, not a key file (TOWLINE_LINK_KEY_FILE names the file itself)`],
    ]
    const db = join(dir.dir, 'new.db')
    for (const [keyFile, message] of cases) {
      for (const command of [['migrate'], ['demo'], ['serve', '--port', '0', '--host', '127.0.0.1']]) {
        const r = cli(dir.bin, [...command, '--db', db], { cwd: dir.dir, env: { TOWLINE_LINK_KEY_FILE: keyFile } })
        expect({ code: r.code, lines: lines(r.stderr).filter((l) => !l.startsWith('{')) }).toEqual({ code: 2, lines: [`towline ${command[0]}: ${message}`] })
        expect([db, `${db}-wal`, `${db}-shm`].filter((f) => existsSync(f))).toEqual([])
      }
    }
  } finally {
    dir.cleanup()
  }
})

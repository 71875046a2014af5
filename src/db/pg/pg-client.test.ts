/**
 * PgClient, the synchronous statement layer over PostgreSQL: it answers as bun:sqlite does (so the
 * code above runs unchanged), transactions commit or roll back whole, other connections' commits
 * are counted, and a connection the server cut is replaced for the next statement.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PgClient, PgError } from './pg-client'
import { startPgCluster, type PgCluster } from '../../../test/pg'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

let cluster: PgCluster
let c: PgClient
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'towline-pg-client-'))
  // Its own cluster: one test restarts it.
  cluster = startPgCluster()
  c = new PgClient(cluster.createDatabase({ name: 'client' }))
  c.exec('CREATE TABLE t (id text PRIMARY KEY, n bigint, x double precision, b bytea, flag bigint)')
})
afterAll(() => { c?.close(); cluster?.stop(); if (dir) rmSync(dir, { recursive: true, force: true }) })

describe('a database the role does not own', () => {
  test('migrate and serve refuse it in one line naming the fix (PostgreSQL 15 and later: only the owner creates in public), and change nothing, leaving no key file', () => {
    const db = cluster.createDatabase({ name: 'not_owned' })
    cluster.psql("CREATE ROLE visitor LOGIN; GRANT CONNECT ON DATABASE not_owned TO visitor; REVOKE CREATE ON SCHEMA public FROM PUBLIC", 'not_owned')
    const url = db.replace('towline_test@', 'visitor@')
    for (const args of [['migrate'], ['serve', '--port', '0', '--host', '127.0.0.1']]) {
      const r = Bun.spawnSync(['bun', join(import.meta.dir, '../../main.ts'), ...args, '--db', url], { cwd: dir, env: { ...process.env, TOWLINE_LINK_KEY_FILE: join(dir, 'link.key') }, stdout: 'pipe', stderr: 'pipe' })
      const err = r.stderr.toString().trim().split('\n').filter((l) => !l.startsWith('{'))
      expect({ args, code: r.exitCode }).toEqual({ args, code: 2 })
      expect(err).toEqual([expect.stringContaining('permission denied for schema public: towline makes its tables in the database\'s public schema')])
      expect(err[0]).toContain('createdb -O ROLE DBNAME')
    }
    expect(cluster.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", 'not_owned').trim()).toBe('0')
    // Nor is a key file left for a database that was never made: the next start makes the one it keeps.
    expect(existsSync(join(dir, 'link.key'))).toBe(false)
  })
})

describe('answers as bun:sqlite does', () => {
  test('numbers for bigint, count() and sum(); bytes as Uint8Array; get() of nothing is null; run() counts changes', () => {
    c.query('INSERT INTO t (id, n, x, b, flag) VALUES (?, ?, ?, ?, ?)').run('a', 1_795_000_000_123, 1.5, new Uint8Array([1, 2, 255]), true)
    expect(c.query('SELECT * FROM t WHERE id = ?').get('a')).toEqual({ id: 'a', n: 1_795_000_000_123, x: 1.5, b: new Uint8Array([1, 2, 255]), flag: 1 })
    expect(c.query('SELECT count(*) AS n, sum(n) AS s, avg(x) AS m FROM t').get()).toEqual({ n: 1, s: 1_795_000_000_123, m: 1.5 })
    expect(c.query('SELECT * FROM t WHERE id = ?').get('none')).toBeNull()
    expect(c.query('UPDATE t SET x = x + 1 WHERE id IN (?, ?)').run('a', 'none').changes).toBe(1)
    expect(c.query('SELECT id, n FROM t').values()).toEqual([['a', 1_795_000_000_123]])
  })

  test("a refused statement is a PgError with PostgreSQL's SQLSTATE and constraint", () => {
    let err: unknown
    try { c.query('INSERT INTO t (id) VALUES (?)').run('a') } catch (e) { err = e }
    expect(err).toBeInstanceOf(PgError)
    expect({ state: (err as PgError).sqlstate, constraint: (err as PgError).constraint }).toEqual({ state: '23505', constraint: 't_pkey' })
  })
})

describe('answers', () => {
  test('each statement gets its own answer even when the answer reaches this thread after its signal (a busy machine)', () => {
    // The thread signals each answer 5 ms before posting it: the client waits for the answer,
    // never reads on without it (it did: a TypeError, then every statement got the one before's answer).
    const lagging = new PgClient(cluster.url('client'), { answerLagMs: 5 })
    try {
      const got: unknown[] = []
      for (let i = 0; i < 20; i++) got.push(lagging.query('SELECT ?::int AS n').get(i))
      expect(got).toEqual(Array.from({ length: 20 }, (_, n) => ({ n })))
      expect(lagging.query('SELECT count(*) AS n FROM t WHERE id = ?').get('a')).toEqual({ n: 1 })
    } finally {
      lagging.close()
    }
  })
})

describe('transactions', () => {
  test('a throw rolls the whole transaction back; a nested one is a savepoint', () => {
    expect(() => c.transaction(() => {
      c.query('INSERT INTO t (id) VALUES (?)').run('gone')
      throw new Error('boom')
    }).immediate()).toThrow('boom')
    expect(c.query('SELECT id FROM t WHERE id = ?').get('gone')).toBeNull()
    c.transaction(() => {
      c.query('INSERT INTO t (id) VALUES (?)').run('kept')
      expect(() => c.transaction(() => { c.query('INSERT INTO t (id) VALUES (?)').run('inner'); throw new Error('inner') })()).toThrow('inner')
      expect(c.inTransaction).toBe(true)
    }).immediate()
    expect(c.inTransaction).toBe(false)
    expect(c.query('SELECT id FROM t WHERE id IN (?, ?) ORDER BY id').all('kept', 'inner')).toEqual([{ id: 'kept' }])
  })
})

describe('other connections', () => {
  test("another connection's commit moves the data version; this client's own writes do not", async () => {
    const other = new PgClient(cluster.url('client'))
    try {
      const before = c.dataVersion()
      c.transaction(() => { c.query('INSERT INTO t (id) VALUES (?)').run('own') }).immediate()
      c.query('UPDATE t SET n = 1 WHERE id = ?').run('own')
      await Bun.sleep(100)
      expect(c.dataVersion()).toBe(before)
      other.query('UPDATE t SET n = 2 WHERE id = ?').run('own')
      const end = Date.now() + 5000
      while (c.dataVersion() === before && Date.now() < end) await Bun.sleep(5)
      expect(c.dataVersion()).toBeGreaterThan(before)
    } finally {
      other.close()
    }
  })

  test('row locks are not announced: a claim that takes nothing wakes no other instance', async () => {
    const other = new PgClient(cluster.url('client'))
    try {
      const before = c.dataVersion()
      other.query('SELECT id FROM t WHERE id = ? FOR UPDATE SKIP LOCKED').get('own')
      other.transaction(() => { other.query('SELECT id FROM t WHERE id = ? FOR NO KEY UPDATE').get('own') }, { writeLock: false })()
      other.query('UPDATE t SET n = 3 WHERE id = ?').run('own')
      const end = Date.now() + 5000
      while (c.dataVersion() === before && Date.now() < end) await Bun.sleep(5)
      await Bun.sleep(100)
      // Announcements arrive in order: had the locks been announced, the count would be past 1.
      expect(c.dataVersion() - before).toBe(1)
    } finally {
      other.close()
    }
  })

  test('a connection the server cut fails its statement and is replaced for the next one', () => {
    cluster.restart()
    let first: unknown
    try { c.query('SELECT 1 AS one').get() } catch (e) { first = e }
    // Whether the cut is noticed by this statement or was already: the next one is answered.
    if (first) expect(first).toBeInstanceOf(PgError)
    expect(c.query('SELECT 1 AS one').get()).toEqual({ one: 1 })
    expect(c.query('SELECT count(*) AS n FROM t WHERE id = ?').get('a')).toEqual({ n: 1 })
  })

  test('an address where no PostgreSQL answers is refused in one line', () => {
    const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = s.port
    s.stop(true)
    expect(() => new PgClient(`postgres://nobody@127.0.0.1:${port}/x`, { connectTimeoutMs: 5000 })).toThrow('could not connect to PostgreSQL')
  })
})

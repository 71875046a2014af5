/**
 * `towline db copy` and `towline backup` across engines, as an operator runs them: a company's
 * SQLite database (jobs through their life, notes, a photo, a webhook endpoint with its
 * deliveries, texts, a login) copied to PostgreSQL and back, verified by counts and checksums,
 * and read through the API on the copy exactly as on the original.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, makeJob, NO_LIMITS } from '../../test/jobs-helpers'
import { databaseFingerprint } from '../../test/fingerprint'
import { pgCluster } from '../../test/pg'
import { addPhoto } from '../jobs/add-photo'
import { createUser } from '../users/create-user'

const ROOT = join(import.meta.dir, '../..')
/** A real 2×1 JPEG (Chromium's canvas). */
const JPEG = Uint8Array.from(atob('/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADb/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAABAAIDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAX/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFQEBAQAAAAAAAAAAAAAAAAAABAb/xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oADAMBAAIRAxEAPwCeAGpH/9k='), (c) => c.charCodeAt(0))

function towline(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync(['bun', join(ROOT, 'src/main.ts'), ...args], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
}

let dir: string
let source: TestApi
let key: string
let jobIds: string[]
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'towline-copy-'))
  source = startTestApi({ ...NO_LIMITS, TOWLINE_DB: join(dir, 'company.db') })
  key = source.key('all')
  const { job: done } = await bringTo(source, key, 'completed', { withUnit: true })
  const open = await makeJob(source, key, { external_ref: 'MC-77' })
  await call(source, key, 'POST', `/jobs/${open.id}/notes`, { text: 'Gate code 4411', customer_visible: false })
  addPhoto(source.contexts.forOperator(source.accountId), done.id, JPEG)
  await call(source, key, 'POST', '/webhooks', { url: 'https://hooks.example.com/towline', events: ['*'] })
  await createUser(source.contexts.forOperator(source.accountId), { email: 'disp@example.com', role: 'dispatcher' })
  jobIds = [done.id, open.id]
  // Every write reaches the file before another process reads it.
  source.db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)')
})
afterAll(() => {
  source?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** What the API shows of the copied jobs: each job and its timeline, and the job list. */
async function apiView(api: TestApi, apiKey: string) {
  const out: unknown[] = []
  for (const id of jobIds) {
    out.push((await call(api, apiKey, 'GET', `/jobs/${id}`)).body)
    out.push((await call(api, apiKey, 'GET', `/jobs/${id}/events`)).body)
  }
  out.push((await call(api, apiKey, 'GET', '/jobs?limit=100')).body)
  out.push((await call(api, apiKey, 'GET', '/webhooks')).body.data.map((w: any) => ({ ...w, secret: undefined })))
  return out
}

describe('db copy', () => {
  test('SQLite to PostgreSQL: every table copied and verified; the API reads the same jobs, timelines and endpoints there; back to SQLite the rows are identical', async () => {
    const url = pgCluster().createDatabase()
    const pgKey = join(dir, 'pg.key')
    const r = towline(['db', 'copy', '--from', join(dir, 'company.db'), '--to', url, '--to-key', pgKey, '--json'])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    const report = JSON.parse(r.stdout)
    expect(report.verified).toBe(true)
    const rows = Object.fromEntries(report.tables.map((t: any) => [t.table, t.rows]))
    expect(rows).toMatchObject({ jobs: 2, job_notes: 1, job_photos: 1, webhook_endpoints: 1, users: 1 })
    expect(rows.job_events).toBeGreaterThan(5)
    expect(rows.texts).toBeGreaterThan(0)
    // The key went along, readable by its owner only.
    expect(readFileSync(pgKey, 'utf8')).toBe(readFileSync(join(dir, 'company.db.key'), 'utf8'))
    expect(statSync(pgKey).mode & 0o777).toBe(0o600)

    const copy = startTestApi({ ...NO_LIMITS, TOWLINE_DB: url, TOWLINE_LINK_KEY_FILE: pgKey })
    try {
      // The original's key works on the copy (api_keys came along), and what it reads is the same.
      copy.clock.ms = source.clock.ms
      expect(await apiView(copy, key)).toEqual(await apiView(source, key))

      // And back: the PostgreSQL database copied into a new SQLite file holds exactly the original's rows.
      const back = join(dir, 'back.db')
      const again = towline(['db', 'copy', '--from', url, '--from-key', pgKey, '--to', back])
      expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' })
      expect(again.stdout).toContain("every table's count and SHA-256 match")
      const restored = startTestApi({ TOWLINE_DB: back })
      try {
        expect(databaseFingerprint(restored.db)).toEqual(databaseFingerprint(source.db))
      } finally {
        restored.close()
      }

      // The copy goes on from where the original was: a new job and its event take the next numbers.
      const made = await makeJob(copy, key)
      const events = (await call(copy, key, 'GET', `/jobs/${made.id}/events`)).body.data
      expect(events.map((e: any) => e.type)).toEqual(['job.created'])
      expect((await call(copy, key, 'GET', '/jobs?limit=100')).body.data).toHaveLength(3)
    } finally {
      copy.close()
    }
  }, 60_000)

  test('a target that holds data is refused and left as it was; so is a SQLite file that exists, and a key file holding another key', () => {
    const url = pgCluster().createDatabase()
    const pgKey = join(dir, 'first.key')
    expect(towline(['db', 'copy', '--from', join(dir, 'company.db'), '--to', url, '--to-key', pgKey]).code).toBe(0)
    const twice = towline(['db', 'copy', '--from', join(dir, 'company.db'), '--to', url, '--to-key', pgKey])
    expect(twice.code).not.toBe(0)
    expect(twice.stderr).toContain('already holds data')
    expect(twice.stderr.trim().split('\n')).toEqual([expect.stringContaining('already holds data')])
    expect(pgCluster().psql('SELECT count(*) FROM jobs', url.split('/').pop()).trim()).toBe('2')

    const exists = towline(['db', 'copy', '--from', join(dir, 'company.db'), '--to', join(dir, 'company.db')])
    expect(exists.code).not.toBe(0)

    const otherKey = join(dir, 'other.key')
    Bun.write(otherKey, `${Buffer.alloc(32, 9).toString('base64')}\n`)
    const wrongKey = towline(['db', 'copy', '--from', join(dir, 'company.db'), '--to', join(dir, 'fresh.db'), '--to-key', otherKey])
    expect(wrongKey.code).not.toBe(0)
    expect(wrongKey.stderr).toContain('holds another link key')
    expect(existsSync(join(dir, 'fresh.db'))).toBe(false)
  }, 60_000)
})

describe('backup on PostgreSQL', () => {
  test('writes a verified SQLite copy and its key; the copy opens and reads the same jobs', async () => {
    const url = pgCluster().createDatabase()
    const pgKey = join(dir, 'backup-src.key')
    expect(towline(['db', 'copy', '--from', join(dir, 'company.db'), '--to', url, '--to-key', pgKey]).code).toBe(0)
    const file = join(dir, 'nightly.db')
    // A password in the URL (the test cluster trusts loopback and ignores it) is never printed.
    const withPassword = url.replace('towline_test@', 'towline_test:S3cretPw@')
    const r = towline(['backup', file, '--db', withPassword], { TOWLINE_LINK_KEY_FILE: pgKey })
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    expect(r.stdout).toContain('every table verified')
    expect(r.stdout + r.stderr).not.toContain('S3cretPw')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(`${file}.key`, 'utf8')).toBe(readFileSync(pgKey, 'utf8'))
    const restored = startTestApi({ TOWLINE_DB: file })
    try {
      restored.clock.ms = source.clock.ms
      expect(await apiView(restored, key)).toEqual(await apiView(source, key))
    } finally {
      restored.close()
    }
  }, 60_000)
})

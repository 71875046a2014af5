import { describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from './client'
import { DatabaseTooNewError, embeddedMigrations, migrateDatabase } from './migrate'

const fresh = () => openDatabase(join(mkdtempSync(join(tmpdir(), 'towline-mig-')), 'm.db'))

describe('migrations', () => {
  test('the journal only moves forward: each migration is newer than the one before', () => {
    const entries = embeddedMigrations()
    expect(entries.length).toBeGreaterThan(0)
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.when).toBeGreaterThan(entries[i - 1]!.when)
  })

  test('every embedded migration is applied once, and a second run applies nothing', () => {
    const db = fresh()
    expect(migrateDatabase(db)).toEqual(embeddedMigrations().map((e) => e.tag))
    expect(migrateDatabase(db)).toEqual([])
    const { n } = db.$client.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }
    expect(n).toBe(embeddedMigrations().length)
  })

  test('the database file is in WAL mode with foreign keys on', () => {
    const db = fresh()
    expect((db.$client.query('PRAGMA journal_mode').get() as any).journal_mode).toBe('wal')
    expect((db.$client.query('PRAGMA foreign_keys').get() as any).foreign_keys).toBe(1)
  })

  test('refuses a database migrated by a newer towline', () => {
    const db = fresh()
    migrateDatabase(db)
    db.$client.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 99999999999999)")
    expect(() => migrateDatabase(db)).toThrow(DatabaseTooNewError)
  })

  test('0006 moves each job event\'s webhook data to one payload row, keeping pings\' data on the delivery', () => {
    const db = fresh()
    migrateDatabase(db, { through: '0005_texts_consent_templates_country' })
    const insert = db.$client.query(`INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, data, status, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, 'acct_1', ?, ?, ?, ?, 'pending', 0, 5, ?, 5)`)
    insert.run('dlv_1', 'whk_1', 'evt_1', 'job.created', '{"job":{"id":"job_1"},"event":{"type":"job.created"}}', 3)
    insert.run('dlv_2', 'whk_2', 'evt_1', 'job.created', '{"job":{"id":"job_1"},"event":{"type":"job.created"}}', 4)
    insert.run('dlv_3', 'whk_1', null, 'ping', '{"job":null,"event":{"type":"ping"}}', 6)
    expect(migrateDatabase(db, { through: '0006_webhook_event_payloads' })).toEqual(['0006_webhook_event_payloads'])
    expect(db.$client.query('SELECT * FROM webhook_event_payloads').all()).toEqual([
      { event_id: 'evt_1', account_id: 'acct_1', data: '{"job":{"id":"job_1"},"event":{"type":"job.created"}}', created_at: 3 },
    ])
    expect(db.$client.query('SELECT id, data, status, next_attempt_at FROM webhook_deliveries ORDER BY id').all()).toEqual([
      { id: 'dlv_1', data: null, status: 'pending', next_attempt_at: 5 },
      { id: 'dlv_2', data: null, status: 'pending', next_attempt_at: 5 },
      { id: 'dlv_3', data: '{"job":null,"event":{"type":"ping"}}', status: 'pending', next_attempt_at: 5 },
    ])
  })
})

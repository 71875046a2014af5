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
})

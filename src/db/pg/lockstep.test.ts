/**
 * SQLite's migrations (drizzle-kit's, migrations/) and PostgreSQL's (migrations/postgres/) must
 * build the same schema: the same tables, columns (type, NOT NULL, key), indexes (unique or not,
 * over the same columns) and foreign keys. A schema change that reaches one engine only fails here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { closeDatabase, openDatabase, type Db } from '../client'
import { migrateDatabase } from '../migrate'
import { pgCluster } from '../../../test/pg'
import { POSTGRES_ONLY_TABLES, ROWID_TABLES } from './pg-ddl'

interface Shape {
  columns: Record<string, string[]>
  indexes: Record<string, string>
  foreignKeys: Record<string, string[]>
}


const SQLITE_TYPES: Record<string, string> = { integer: 'bigint', text: 'text', real: 'double precision', blob: 'bytea', numeric: 'numeric' }

function sqliteShape(db: Db): Shape {
  const c = db.$client
  const tables = c.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name").all().map((r) => r.name)
  const shape: Shape = { columns: {}, indexes: {}, foreignKeys: {} }
  for (const t of tables) {
    const cols = c.query<{ name: string; type: string; notnull: number; pk: number }, []>(`SELECT name, type, "notnull", pk FROM pragma_table_info('${t}')`).all()
    shape.columns[t] = cols.map((col) => `${col.name} ${SQLITE_TYPES[col.type.toLowerCase()] ?? col.type}${col.notnull || col.pk ? ' not null' : ''}${col.pk ? ` pk${col.pk}` : ''}`).sort()
    for (const ix of c.query<{ name: string; unique: number; origin: string }, []>(`SELECT name, "unique", origin FROM pragma_index_list('${t}')`).all()) {
      if (ix.origin !== 'c') continue
      const cols = c.query<{ name: string | null }, []>(`SELECT name FROM pragma_index_info('${ix.name}') ORDER BY seqno`).all().map((r) => r.name ?? '(expression)')
      shape.indexes[ix.name] = `${t}${ix.unique ? ' unique' : ''} (${cols.join(', ')})`
    }
    shape.foreignKeys[t] = c.query<{ from: string; table: string; to: string }, []>(`SELECT "from", "table", "to" FROM pragma_foreign_key_list('${t}')`).all().map((f) => `${f.from} -> ${f.table}.${f.to}`).sort()
  }
  return shape
}

function pgShape(db: Db): Shape {
  const c = db.$client
  const shape: Shape = { columns: {}, indexes: {}, foreignKeys: {} }
  const pks = c.query<{ table_name: string; column_name: string; ordinal_position: number }, []>(
    `SELECT k.table_name, k.column_name, k.ordinal_position FROM information_schema.table_constraints t
       JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema
      WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = current_schema()`,
  ).all()
  const cols = c.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }, []>(
    "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> '__drizzle_migrations'",
  ).all()
  for (const col of cols) {
    if (POSTGRES_ONLY_TABLES.has(col.table_name)) continue
    if (col.column_name === 'rowid' && ROWID_TABLES.has(col.table_name)) continue
    const pk = pks.find((p) => p.table_name === col.table_name && p.column_name === col.column_name)
    ;(shape.columns[col.table_name] ??= []).push(`${col.column_name} ${col.data_type}${col.is_nullable === 'NO' ? ' not null' : ''}${pk ? ` pk${pk.ordinal_position}` : ''}`)
  }
  for (const t of Object.keys(shape.columns)) shape.columns[t]!.sort()
  const indexes = c.query<{ table: string; name: string; unique: boolean; cols: string }, []>(
    `SELECT t.relname AS "table", i.relname AS name, x.indisunique AS "unique",
            (SELECT string_agg(CASE WHEN k.n = 0 THEN '(expression)' ELSE a.attname END, ', ' ORDER BY k.o)
               FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(n, o) LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n) AS cols
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace s ON s.oid = t.relnamespace
      WHERE s.nspname = current_schema() AND NOT x.indisprimary AND t.relname <> '__drizzle_migrations' AND i.relname NOT LIKE '%_rowid_key'`,
  ).all()
  for (const ix of indexes) if (!POSTGRES_ONLY_TABLES.has(ix.table)) shape.indexes[ix.name] = `${ix.table}${ix.unique ? ' unique' : ''} (${ix.cols})`
  for (const t of Object.keys(shape.columns)) shape.foreignKeys[t] = []
  const fks = c.query<{ table_name: string; column_name: string; foreign_table: string; foreign_column: string }, []>(
    `SELECT k.table_name, k.column_name, u.table_name AS foreign_table, u.column_name AS foreign_column
       FROM information_schema.table_constraints t
       JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema
       JOIN information_schema.constraint_column_usage u ON u.constraint_name = t.constraint_name AND u.table_schema = t.table_schema
      WHERE t.constraint_type = 'FOREIGN KEY' AND t.table_schema = current_schema()`,
  ).all()
  for (const f of fks) shape.foreignKeys[f.table_name]!.push(`${f.column_name} -> ${f.foreign_table}.${f.foreign_column}`)
  for (const t of Object.keys(shape.foreignKeys)) shape.foreignKeys[t]!.sort()
  return shape
}

let sqlite: Db
let pg: Db
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'towline-lockstep-'))
  sqlite = openDatabase(join(dir, 'l.db'))
  migrateDatabase(sqlite, { linkKey: () => Buffer.alloc(32) })
  pg = openDatabase(pgCluster().createDatabase())
  migrateDatabase(pg)
})
afterAll(() => {
  closeDatabase(sqlite)
  closeDatabase(pg)
  rmSync(dir, { recursive: true, force: true })
})

describe('both engines migrate to the same schema', () => {
  test('the same tables and columns: type, NOT NULL and primary key', () => {
    const expected = sqliteShape(sqlite)
    expect(Object.keys(expected.columns).length).toBeGreaterThanOrEqual(27)
    expect(Object.keys(expected.indexes).length).toBeGreaterThanOrEqual(50)
    expect(pgShape(pg).columns).toEqual(expected.columns)
  })
  test('the same indexes, unique or not, over the same columns', () => {
    expect(pgShape(pg).indexes).toEqual(sqliteShape(sqlite).indexes)
  })
  test('the same foreign keys', () => {
    expect(pgShape(pg).foreignKeys).toEqual(sqliteShape(sqlite).foreignKeys)
  })
  test('a column only one engine has is found', () => {
    // The check itself can fail: a column added on PostgreSQL alone makes the shapes differ.
    pg.$client.exec('ALTER TABLE jobs ADD COLUMN only_here bigint')
    try {
      expect(pgShape(pg).columns).not.toEqual(sqliteShape(sqlite).columns)
    } finally {
      pg.$client.exec('ALTER TABLE jobs DROP COLUMN only_here')
    }
  })
})

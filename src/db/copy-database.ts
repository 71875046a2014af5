/**
 * Copies every row of one towline database into another, on either engine (SQLite to
 * PostgreSQL to move a company to scale-out, PostgreSQL to SQLite for `towline backup`), then
 * proves the copy: each table's row count and a SHA-256 of its rows, read back from the target
 * in key order, must equal the source's. Both databases are migrated to the same schema first
 * (the caller's withDb does it); the target must hold no towline data yet.
 */
import { createHash } from 'node:crypto'
import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { Db, SqlClient } from './client'
import { ROWID_TABLES, tablesInOrder } from './pg/pg-ddl'
import * as schema from './schema'

export interface TableCopy { table: string; rows: number; sha256: string }

/** The target already holds data, or the copy read back differs from its source. */
export class CopyError extends Error {}

/** Rows read and written per statement (and a bound on the parameters of one insert). */
const BATCH = 200
const MAX_PARAMS = 30_000

interface TablePlan {
  name: string
  /** Columns copied, in order: rowid first where the table keeps SQLite's insertion order. */
  columns: string[]
  /** The columns rows are read in order of (the primary key, or rowid). */
  key: string[]
  /** An identity column whose sequence must continue after the copied values (PostgreSQL). */
  identity: string | null
}

function planOf(table: SQLiteTable): TablePlan {
  const c = getTableConfig(table)
  const integerKey = c.columns.find((col) => col.primary && col.getSQLType().toLowerCase().startsWith('integer'))
  const rowid = ROWID_TABLES.has(c.name) && !integerKey
  const columns = [...(rowid ? ['rowid'] : []), ...c.columns.map((col) => col.name)]
  const pk = c.columns.filter((col) => col.primary).map((col) => col.name)
  const key = rowid ? ['rowid'] : pk.length ? pk : c.primaryKeys[0]!.columns.map((col) => col.name)
  return { name: c.name, columns, key, identity: rowid ? 'rowid' : integerKey?.name ?? null }
}

/** Every table of the schema, in an order the foreign keys allow. */
export function copyPlans(): TablePlan[] {
  return tablesInOrder(schema).map(planOf)
}

const q = (name: string) => `"${name}"`

/** A row as the checksum reads it: its values in column order, bytes as hex. */
function canonical(row: unknown[]): string {
  return JSON.stringify(row, (_k, v) => (v instanceof Uint8Array ? `x${Buffer.from(v).toString('hex')}` : v))
}

/** Reads a table's rows in key order, a batch at a time (keyset paging: no OFFSET walk). */
function* rowsOf(client: SqlClient, plan: TablePlan): Generator<unknown[][]> {
  const cols = plan.columns.map(q).join(', ')
  const order = plan.key.map(q).join(', ')
  const keyAt = plan.key.map((k) => plan.columns.indexOf(k))
  const first = client.query<unknown, [number]>(`SELECT ${cols} FROM ${q(plan.name)} ORDER BY ${order} LIMIT ?`)
  const after = client.query<unknown, unknown[]>(
    `SELECT ${cols} FROM ${q(plan.name)} WHERE (${order}) > (${plan.key.map(() => '?').join(', ')}) ORDER BY ${order} LIMIT ?`,
  )
  let batch = first.values(BATCH)
  while (batch.length) {
    yield batch
    if (batch.length < BATCH) return
    const last = batch.at(-1)!
    batch = after.values(...keyAt.map((i) => last[i]), BATCH)
  }
}

/** A running SHA-256 of a table's rows. */
function digest(): { add(rows: unknown[][]): void; hex(): string } {
  const h = createHash('sha256')
  return { add: (rows) => { for (const r of rows) h.update(canonical(r)).update('\n') }, hex: () => h.digest('hex') }
}

/** Counts the rows of every table; the target of a copy must hold none. */
function rowsHeld(db: Db, plans: TablePlan[]): { table: string; rows: number }[] {
  return plans
    .map((p) => ({ table: p.name, rows: Number(db.$client.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${q(p.name)}`).get()!.n) }))
    .filter((t) => t.rows > 0)
}

/**
 * Runs `fn` reading one consistent snapshot of `db` while writers go on: SQLite's read
 * transaction (WAL), PostgreSQL's REPEATABLE READ READ ONLY transaction.
 */
function inSnapshot<T>(db: Db, fn: () => T): T {
  db.$client.exec(db.engine === 'postgres' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN DEFERRED')
  try {
    return fn()
  } finally {
    db.$client.exec(db.engine === 'postgres' ? 'ROLLBACK' : 'COMMIT')
  }
}

/**
 * Copies every row of `from` into `to` in one transaction on `to` (all or nothing), then reads
 * the target back and compares each table's count and SHA-256 with the source's. Throws
 * CopyError when the target holds data or the copy differs. `onTable` hears of each table done.
 */
export function copyDatabase(from: Db, to: Db, opts: { onTable?: (t: TableCopy) => void } = {}): TableCopy[] {
  const plans = copyPlans()
  const held = rowsHeld(to, plans)
  if (held.length) throw new CopyError(`the target already holds data (${held.map((t) => `${t.table}: ${t.rows}`).join(', ')}); copy into a new database`)
  const copied: TableCopy[] = []
  inSnapshot(from, () => {
    to.$client.transaction(() => {
      for (const plan of plans) {
        const sum = digest()
        let rows = 0
        for (const batch of rowsOf(from.$client, plan)) {
          writeRows(to, plan, batch)
          sum.add(batch)
          rows += batch.length
        }
        if (to.engine === 'postgres' && plan.identity) {
          // The next row made on the target takes the number after the copied ones.
          to.$client.query(`SELECT setval(pg_get_serial_sequence('${q(plan.name)}', '${plan.identity}'), COALESCE((SELECT max(${q(plan.identity)}) FROM ${q(plan.name)}), 0) + 1, false)`).get()
        }
        copied.push({ table: plan.name, rows, sha256: sum.hex() })
      }
    }).immediate()
  })
  // The proof: the target's rows, read back in the same order, count and hash the same.
  for (const [i, plan] of plans.entries()) {
    const sum = digest()
    let rows = 0
    for (const batch of rowsOf(to.$client, plan)) { sum.add(batch); rows += batch.length }
    const want = copied[i]!
    if (rows !== want.rows || sum.hex() !== want.sha256) {
      throw new CopyError(`${plan.name}: the copy holds ${rows} rows (sha256 ${sum.hex().slice(0, 12)}) where the source has ${want.rows} (sha256 ${want.sha256.slice(0, 12)})`)
    }
    opts.onTable?.(want)
  }
  return copied
}

/** Inserts a batch of rows (values in plan.columns order), several rows per statement. */
function writeRows(to: Db, plan: TablePlan, batch: unknown[][]): void {
  const perStatement = Math.max(1, Math.min(batch.length, Math.floor(MAX_PARAMS / plan.columns.length)))
  // PostgreSQL's rowid is GENERATED ALWAYS: the copied numbers go in only when asked for.
  const overriding = to.engine === 'postgres' && plan.columns[0] === 'rowid' ? ' OVERRIDING SYSTEM VALUE' : ''
  const row = `(${plan.columns.map(() => '?').join(', ')})`
  for (let i = 0; i < batch.length; i += perStatement) {
    const part = batch.slice(i, i + perStatement)
    to.$client.query(`INSERT INTO ${q(plan.name)} (${plan.columns.map(q).join(', ')})${overriding} VALUES ${part.map(() => row).join(', ')}`).run(...part.flat())
  }
}

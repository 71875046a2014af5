/**
 * Seeds a database with many jobs for the list benchmark of scripts/bench (jobs section), fast:
 * a file migrated by the binary itself (`towline keys create` creates the default account and
 * site), the jobs table's secondary indexes dropped, rows inserted with one prepared statement
 * in big transactions, then the indexes re-created from their own migration SQL (a sort per
 * index instead of a million random B-tree inserts). The result is cached under .tmp/ keyed by
 * the migration count and SEED_VERSION, so reruns only copy it.
 *
 * What is seeded: `count` jobs of one account and site, created evenly over `years` years up to
 * the seed time (with jitter), ids time-sortable like the service's, updated a few minutes to
 * hours after creation (1% updated weeks later: ratings, archives, reopens), a realistic status
 * mix (finished for everything older than a day), valid JSON in customer/vehicle/pickup/
 * milestones, a unique tracking link (stored as the service stores it: hash and sealed copy),
 * units on every job that needs one (20 units seeded).
 * Not seeded: job_events, texts, notes (the list query does not read them).
 */
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { BenchContext } from './lib'
import { createBenchKey } from './frame'
import { hashToken, loadKeyFile, seal } from '../../src/platform/sealed'
import { searchTextOf } from '../../src/jobs/commit-job-change'

/** Bump when the seeded data changes shape, so cached files from older versions are not used. */
const SEED_VERSION = 4
const DAY = 86_400_000
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** A seeded database: its cached path and the ids/time it was built around. */
export interface SeededDb {
  path: string
  accountId: string
  siteId: string
  jobs: number
  /** The seed's "now": the newest created_at/updated_at is at or just before it. */
  anchorMs: number
  /** Seconds spent seeding in this run (0 when the cache was used). */
  seedSeconds: number
  cached: boolean
}

/** Small fast deterministic PRNG (mulberry32): seeded data is the same from run to run. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Returns the cached seeded file for this migration count, building it first if needed. */
export async function seededJobsDb(ctx: BenchContext, count: number, years: number): Promise<SeededDb> {
  const migrations = readdirSync(join(ctx.root, 'migrations')).filter((f) => f.endsWith('.sql')).length
  const dir = join(ctx.root, '.tmp')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `bench-jobs-${count}-m${migrations}-v${SEED_VERSION}.db`)
  if (existsSync(path)) {
    const info = readSeedInfo(path)
    if (info) return { path, ...info, seedSeconds: 0, cached: true }
    rmSync(path, { force: true })
  }

  // Older seeds (other migration counts or seed versions) are 1 GB each: remove them.
  for (const f of readdirSync(dir)) if (f.startsWith(`bench-jobs-${count}-`) && join(dir, f) !== path) rmSync(join(dir, f), { force: true })
  const started = performance.now()
  const building = `${path}.building`
  for (const f of [building, `${building}-wal`, `${building}-shm`]) rmSync(f, { force: true })
  // The binary migrates the file and creates the default account and site (the key is thrown away).
  await createBenchKey(ctx, building)
  const db = new Database(building, { strict: true })
  try {
    db.exec('PRAGMA journal_mode = DELETE') // a self-contained file to copy; the service turns WAL back on
    const account = db.query<{ id: string }, []>('SELECT id FROM accounts WHERE is_default = 1 ORDER BY created_at LIMIT 1').get()
    if (!account) throw new Error('seed: the migrated database has no default account')
    const site = db.query<{ id: string }, [string]>('SELECT id FROM sites WHERE account_id = ? ORDER BY created_at, id LIMIT 1').get(account.id)
    if (!site) throw new Error('seed: the default account has no site')
    const anchorMs = Date.now()
    // Links are stored as the service stores them: a hash and a copy sealed with the file's link key.
    const { key } = loadKeyFile(`${building}.key`, { create: false })
    insertJobs(db, { accountId: account.id, siteId: site.id, count, years, anchorMs, log: ctx.log, key })
  } finally {
    db.close()
  }
  renameSync(building, path)
  renameSync(`${building}.key`, `${path}.key`)
  const info = readSeedInfo(path)
  if (!info) throw new Error(`seed: ${path} has no jobs after seeding`)
  return { path, ...info, seedSeconds: (performance.now() - started) / 1000, cached: false }
}

/** Reads account, site, count and anchor from a seeded file; null if it is not a complete seed. */
function readSeedInfo(path: string): Omit<SeededDb, 'path' | 'seedSeconds' | 'cached'> | null {
  const db = new Database(path, { readonly: true, strict: true })
  try {
    const row = db.query<{ accountId: string; siteId: string; jobs: number; anchorMs: number }, []>(
      'SELECT account_id AS accountId, site_id AS siteId, COUNT(*) AS jobs, MAX(updated_at) AS anchorMs FROM jobs').get()
    return row && row.jobs > 0 ? row : null
  } catch {
    return null
  } finally {
    db.close()
  }
}

/** Copies a seeded file (main file only: it is checkpointed, no WAL) and its link key to `dest`. */
export function copySeeded(seed: SeededDb, dest: string): void {
  copyFileSync(seed.path, dest)
  copyFileSync(`${seed.path}.key`, `${dest}.key`)
}

/** The size of a file in MB. */
export function fileMb(path: string): number {
  return statSync(path).size / 1024 / 1024
}

interface InsertPlan {
  accountId: string
  siteId: string
  count: number
  years: number
  anchorMs: number
  log: (message: string) => void
  /** The link key tokens are sealed with. */
  key: Buffer
}

const FIRST = ['Ann', 'Bob', 'Carla', 'Dev', 'Elena', 'Frank', 'Grace', 'Hiro', 'Ines', 'Jamal', 'Kim', 'Luis', 'Maya', 'Noor', 'Omar', 'Priya']
const LAST = ['Lee', 'Smith', 'Garcia', 'Nguyen', 'Patel', 'Brown', 'Kowalski', 'Okafor', 'Rossi', 'Haddad', 'Johnson', 'Silva']
const CARS: [string, string, string][] = [['Honda', 'Civic', 'fwd'], ['Toyota', 'Camry', 'fwd'], ['Ford', 'F-150', '4wd'], ['Chevrolet', 'Silverado', '4wd'], ['Subaru', 'Outback', 'awd'], ['BMW', '330i', 'rwd'], ['Tesla', 'Model 3', 'awd'], ['Nissan', 'Altima', 'fwd']]
const COLORS = ['black', 'white', 'silver', 'red', 'blue', 'grey', null]
const PLACES = ['I-5 N mile 12', '1200 Main St, Springfield', 'Walmart parking lot, 44 Oak Ave', 'Hwy 99 S near exit 31', '550 Pine St garage level 2', 'Shell station, 9th and Elm']
const GARAGES = ["Joe's Garage", 'Springfield Honda service', 'Home: 18 Maple Ct', 'Pep Boys, 300 Market St', null]
const SOURCES: [string, string][] = [['motor_club', 'motor_club'], ['phone', 'cash'], ['police', 'police'], ['web', 'card']]
const SERVICES = ['flatbed', 'wheel_lift', 'jump_start', 'lockout', 'tire_change', 'winch_out']
const ROAD = ['confirmed', 'dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed']
const NEEDS_UNIT = new Set(['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed'])

/** Inserts the units, then the jobs with the jobs table's secondary indexes dropped and re-created. */
function insertJobs(db: Database, plan: InsertPlan): void {
  const rnd = prng(20261121)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!
  const token = (n: number, alphabet: string) => { let s = ''; for (let i = 0; i < n; i++) s += alphabet[Math.floor(rnd() * alphabet.length)]; return s }
  const idAt = (prefix: string, ms: number) => {
    let time = ''
    for (let i = 0, m = ms; i < 10; i++) { time = BASE32[m % 32] + time; m = Math.floor(m / 32) }
    return `${prefix}_${time}${token(16, BASE32)}`
  }

  db.exec('PRAGMA synchronous = OFF')
  db.exec('PRAGMA cache_size = -262144') // 256 MB for the index builds
  db.exec('PRAGMA temp_store = MEMORY')

  // Units (20), so jobs that need one have one and the list's unit lookup does real work.
  const unitIds: string[] = []
  const start = plan.anchorMs - plan.years * 365 * DAY
  const insertUnit = db.prepare('INSERT INTO units (id, account_id, site_ids, name, driver_name, driver_phone, device_id, off_duty, created_at, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?, 0, ?, ?)')
  db.transaction(() => {
    for (let u = 1; u <= 20; u++) {
      const id = idAt('unit', start - DAY + u)
      unitIds.push(id)
      insertUnit.run(id, plan.accountId, `Truck ${u}`, `${pick(FIRST)} ${pick(LAST)}`, `+1555300${String(1000 + u)}`, `dev-${u}-${token(8, BASE62)}`, start - DAY, start - DAY)
    }
  })()

  const indexes = db.query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' AND sql IS NOT NULL").all()
  for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`)

  const insert = db.prepare(`INSERT INTO jobs (id, account_id, site_id, external_ref, source, payer_type, service_type, urgency, customer, vehicle, pickup,
    destination, status, cancel_reason, rating, rating_comment, rated_at, reopen_count, eta_at, quote_cents, final_price_cents, payment_method, unit_id,
    tracking_token_hash, tracking_token_sealed, driver_token_hash, driver_token_sealed, milestones, event_seq, imported, archived_at, created_at, updated_at, search_text)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const link = (t: string | null) => (t === null ? [null, null] : [hashToken(t), seal(plan.key, t)])
  const span = plan.anchorMs - start
  const step = span / plan.count
  const batch = 100_000
  let t0 = performance.now()
  for (let from = 0; from < plan.count; from += batch) {
    db.transaction(() => {
      for (let i = from; i < Math.min(from + batch, plan.count); i++) {
        // Evenly spread with jitter inside the slot, so created_at stays increasing and ids sort with it.
        const createdAt = Math.floor(start + i * step + rnd() * step * 0.9)
        const age = plan.anchorMs - createdAt
        // Walk the job down the road from its creation; it stops wherever the seed's "now" finds it.
        const r = rnd()
        const outcome = r < 0.85 ? 'completed' : r < 0.95 ? 'cancelled' : 'goa'
        const road: string[] = rnd() < 0.05 ? ['pending', ...ROAD] : [...ROAD]
        if (outcome !== 'completed') road.splice(2 + Math.floor(rnd() * 3), road.length, outcome)
        const milestones: Record<string, number> = {}
        let status = road[0]!
        let at = createdAt
        let last = createdAt
        for (const step of road) {
          if (at > plan.anchorMs) break
          milestones[`${step}_at`] = at
          status = step
          last = at
          at += 60_000 + Math.floor(rnd() * 25 * 60_000)
        }
        const finished = status === 'completed' || status === 'cancelled' || status === 'goa'
        if (finished) milestones.closed_at = last
        // Updated with its last move; some touched again later (rating, archive).
        let updatedAt = last
        let rating: number | null = null
        let ratedAt: number | null = null
        if (status === 'completed' && rnd() < 0.05) {
          const when = updatedAt + Math.floor(rnd() * 3 * DAY)
          if (when <= plan.anchorMs) { ratedAt = when; rating = 1 + Math.floor(rnd() * 5); updatedAt = when }
        }
        let archivedAt: number | null = null
        if (finished && age > 90 * DAY && rnd() < 0.3) archivedAt = updatedAt = updatedAt + 30 * DAY + Math.floor(rnd() * 30 * DAY)
        const [source, payer] = pick(SOURCES)
        const [make, model, drive] = pick(CARS)
        const unitId = NEEDS_UNIT.has(status) ? pick(unitIds) : null
        const consent = rnd() < 0.8
        const name = `${pick(FIRST)} ${pick(LAST)}`
        const customer = JSON.stringify({ name, phone: `+1555${String(2000000 + Math.floor(rnd() * 7999999))}`, sms_consent: consent })
        const vehicle = JSON.stringify({ year: String(2005 + Math.floor(rnd() * 21)), make, model, drive_type: drive, color: pick(COLORS), plate: null, vin: null })
        const pickup = JSON.stringify({ location: pick(PLACES), lat: 37 + rnd(), lng: -122 + rnd() })
        const ref = source === 'motor_club' ? `MC-${100000 + i}` : null
        insert.run(
          idAt('job', createdAt), plan.accountId, plan.siteId, ref, source, payer, pick(SERVICES),
          rnd() < 0.3 ? 'urgent' : 'normal', customer, vehicle, pickup, pick(GARAGES), status,
          status === 'cancelled' ? 'Customer found another ride' : null, rating, null, ratedAt, 0, null,
          rnd() < 0.6 ? 5000 + Math.floor(rnd() * 30000) : null, status === 'completed' ? 7500 + Math.floor(rnd() * 30000) : null,
          status === 'completed' ? (payer === 'cash' ? 'cash' : 'card') : null, unitId,
          ...link(token(24, BASE62)), ...link(unitId ? token(24, BASE62) : null), JSON.stringify(milestones), 1 + Object.keys(milestones).length, 0, archivedAt, createdAt, updatedAt,
          searchTextOf({ customer: { name, phone: null, sms_consent: consent }, externalRef: ref }),
        )
      }
    })()
    if ((from / batch) % 2 === 1) plan.log(`seeded ${Math.min(from + batch, plan.count).toLocaleString('en-US')} jobs`)
  }
  plan.log(`inserted ${plan.count.toLocaleString('en-US')} jobs in ${((performance.now() - t0) / 1000).toFixed(1)} s; re-creating ${indexes.length} indexes`)
  t0 = performance.now()
  for (const ix of indexes) db.exec(ix.sql)
  plan.log(`indexes in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}

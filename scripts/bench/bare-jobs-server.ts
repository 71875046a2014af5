/**
 * The baseline for the jobs section of scripts/bench: a bare Bun.serve over bun:sqlite doing the
 * same row writes and reads as towline, with nothing else (no auth, validation, framework,
 * idempotency, response shaping). It opens DB_PATH (a file migrated by the binary, so the same
 * tables, columns and indexes) with the pragmas of src/db/client.ts.
 *
 * - POST /api/v1/jobs: parses the JSON body and, in one IMMEDIATE transaction, inserts a job
 *   row, its job.created event row and its text outbox row with prepared statements; answers
 *   201 with the job row as JSON.
 * - GET /api/v1/jobs/:id: SELECT * by primary key, JSON.stringify the row (404 when missing).
 *
 * Runs in its own process and prints the same "listening on" line as towline.
 */
import { Database } from 'bun:sqlite'

const path = process.env.DB_PATH
if (!path) throw new Error('DB_PATH is required')

const db = new Database(path, { strict: true })
db.exec('PRAGMA journal_mode = WAL')
db.exec('PRAGMA synchronous = NORMAL')
db.exec('PRAGMA busy_timeout = 5000')
db.exec('PRAGMA foreign_keys = ON')
db.exec('PRAGMA temp_store = MEMORY')

const account = db.query<{ id: string; name: string }, []>('SELECT id, name FROM accounts WHERE is_default = 1 ORDER BY created_at LIMIT 1').get()
if (!account) throw new Error(`${path} has no default account (create a key first)`)
const site = db.query<{ id: string }, [string]>('SELECT id FROM sites WHERE account_id = ? ORDER BY created_at, id LIMIT 1').get(account.id)
if (!site) throw new Error(`${path}: the default account has no site`)

const insertJob = db.prepare(`INSERT INTO jobs (id, account_id, site_id, external_ref, source, payer_type, service_type, urgency, customer, vehicle, pickup,
  destination, status, tracking_token_hash, milestones, event_seq, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
const insertEvent = db.prepare(`INSERT INTO job_events (id, account_id, job_id, seq, type, from_status, to_status, actor, detail, created_at, position)
  VALUES (?, ?, ?, 1, 'job.created', NULL, ?, 'system', ?, ?, (SELECT IFNULL(MAX(position), 0) + 1 FROM job_events))`)
const insertText = db.prepare(`INSERT INTO texts (id, account_id, job_id, event_id, recipient, to_phone, template, body, status, skip_reason, next_attempt_at, created_at, updated_at)
  VALUES (?, ?, ?, ?, 'customer', ?, 'request_received', ?, ?, ?, ?, ?, ?)`)
const getJob = db.prepare<Record<string, unknown>, [string]>('SELECT * FROM jobs WHERE id = ?')

const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const random = (n: number, alphabet: string) => { let s = ''; for (let i = 0; i < n; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)]; return s }
/** Same shape and length as the service's ids: prefix, 10 time characters, 16 random. */
const newId = (prefix: string, ms: number) => {
  let time = ''
  for (let i = 0, m = ms; i < 10; i++) { time = BASE32[m % 32] + time; m = Math.floor(m / 32) }
  return `${prefix}_${time}${random(16, BASE32)}`
}

interface Body {
  external_ref?: string | null; source?: string | null; payer_type?: string | null; service_type?: string | null; urgency?: string | null
  customer: { name: string; phone?: string | null; sms_consent?: boolean }
  vehicle?: Record<string, unknown>; pickup: { location: string; lat?: number | null; lng?: number | null }; destination?: string | null
}

const create = db.transaction((b: Body, now: number) => {
  const id = newId('job', now)
  const token = random(24, BASE62)
  const customer = { name: b.customer.name, phone: b.customer.phone ?? null, sms_consent: b.customer.sms_consent ?? false }
  const row = {
    id, account_id: account.id, site_id: site.id, external_ref: b.external_ref ?? null, source: b.source ?? null, payer_type: b.payer_type ?? null,
    service_type: b.service_type ?? null, urgency: b.urgency ?? null, customer: JSON.stringify(customer), vehicle: JSON.stringify(b.vehicle ?? {}),
    pickup: JSON.stringify({ location: b.pickup.location, lat: b.pickup.lat ?? null, lng: b.pickup.lng ?? null }), destination: b.destination ?? null,
    status: 'confirmed', tracking_token: token, milestones: JSON.stringify({ confirmed_at: now }), event_seq: 1, created_at: now, updated_at: now,
  }
  insertJob.run(row.id, row.account_id, row.site_id, row.external_ref, row.source, row.payer_type, row.service_type, row.urgency, row.customer,
    row.vehicle, row.pickup, row.destination, row.status, row.tracking_token, row.milestones, row.event_seq, row.created_at, row.updated_at)
  const eventId = newId('evt', now)
  insertEvent.run(eventId, account.id, id, 'confirmed', JSON.stringify({ status: 'confirmed', imported: false, external_ref: row.external_ref }), now)
  const skip = customer.sms_consent && customer.phone ? null : 'no_consent'
  const text = `${account.name}: we got your request for help at ${b.pickup.location}. Follow it here: http://127.0.0.1/t/${token}`
  insertText.run(newId('txt', now), account.id, id, eventId, customer.phone, text, skip ? 'skipped' : 'queued', skip, skip ? null : now, now, now)
  return row
})

const json = { 'content-type': 'application/json' }
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false,
  routes: {
    '/api/v1/jobs': {
      POST: async (req) => {
        const body = (await req.json()) as Body
        // IMMEDIATE, as the service's writes (src/db/client.ts inTransaction).
        return new Response(JSON.stringify(create.immediate(body, Date.now())), { status: 201, headers: json })
      },
    },
    '/api/v1/jobs/:id': {
      GET: (req) => {
        const row = getJob.get(req.params.id)
        return row ? new Response(JSON.stringify(row), { headers: json }) : new Response('{"error":"not_found"}', { status: 404, headers: json })
      },
    },
  },
  fetch: () => new Response('{"error":"not_found"}', { status: 404, headers: json }),
})
process.stderr.write(`bare jobs listening on http://127.0.0.1:${server.port} (${path})\n`)
process.on('SIGTERM', () => { server.stop(true); db.close(); process.exit(0) })

/**
 * Tracking and driver links are capabilities: the database keeps each token's SHA-256 and a
 * copy sealed with the key file beside it, never the token in clear: not in the jobs table,
 * not in the texts that carry the links, the webhook payloads or the stored idempotent
 * responses, and not in the file's free pages after an old database is migrated.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestApi, type TestApi } from '../../test/kit'
import { call, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { closeDatabase, openDatabase, type Db } from '../db/client'
import { migrateDatabase } from '../db/migrate'
import { driverUrlOf, openLinksIn } from './job-links'
import { hashApiKey, mintApiKey } from '../accounts/api-key'
import { SCOPES } from '../accounts/scopes'
import { listOutbox } from '../texts/list-texts'
import { seal } from '../platform/sealed'
import { jobView, type JobRow } from './job.view'
import { tableNames } from '../../test/fingerprint'
import { isPostgresUrl } from '../db/location'

let api: TestApi | undefined
const dirs: string[] = []
afterEach(() => {
  api?.close()
  api = undefined
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')
const tokenOf = (url: string) => /\/[td]\/([0-9A-Za-z]{24})$/.exec(url)![1]!

/** Every row of every table, as text. */
function everyTable(db: Db): Record<string, string> {
  return Object.fromEntries(tableNames(db).map((name) => [name, JSON.stringify(db.$client.query(`SELECT * FROM "${name}"`).all())]))
}

/** The bytes of the database file and its WAL as a copy taken now would hold them, as latin1 text (none for a PostgreSQL URL). */
function fileBytes(path: string): string {
  if (isPostgresUrl(path)) return ''
  return [path, `${path}-wal`].filter(existsSync).map((p) => readFileSync(p).toString('latin1')).join('')
}

/** Asserts that no table and no byte of the file holds any of the tokens. */
function expectNowhere(db: Db, path: string, tokens: string[]) {
  const tables = everyTable(db)
  const bytes = fileBytes(path)
  for (const token of tokens) {
    expect({ token, tables: Object.keys(tables).filter((t) => tables[t]!.includes(token)) }).toEqual({ token, tables: [] })
    expect({ token, inFile: bytes.includes(token) }).toEqual({ token, inFile: false })
  }
}

describe('a job\'s links in the database', () => {
  test('neither the tracking nor the driver token is stored in clear anywhere; their hashes are', async () => {
    api = startTestApi({ ...NO_LIMITS, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    // An endpoint (payloads carry the job), an Idempotency-Key (the response is kept), texts (they carry the links).
    expect((await call(api, key, 'POST', '/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['*'] })).status).toBe(201)
    const created = await call(api, key, 'POST', '/jobs', { customer: { name: 'Ann', phone: '503-555-0142', sms_consent: true }, pickup: { location: 'I-5 N mile 12' } }, { 'Idempotency-Key': 'create-1' })
    expect(created.status).toBe(201)
    const unit = makeUnit(api, { driverPhone: '+15035550199' })
    const assigned = await call(api, key, 'POST', `/jobs/${created.body.id}/assign`, { unit_id: unit.id })
    expect(assigned.status).toBe(200)
    const job = api.db.$client.query<Record<string, any>, [string]>('SELECT * FROM jobs WHERE id = ?').get(created.body.id)!
    const driverUrl = driverUrlOf(api.links, { driverTokenSealed: job.driver_token_sealed })!
    const tracking = tokenOf(created.body.tracking_url)
    const driver = tokenOf(driverUrl)
    expect(assigned.body.tracking_url).toBe(created.body.tracking_url)
    expect({ tracking: job.tracking_token_hash, driver: job.driver_token_hash }).toEqual({ tracking: sha256(tracking), driver: sha256(driver) })
    expectNowhere(api.db, api.db.location, [tracking, driver])
  })

  test('whoever is shown a stored copy still gets the links in full', async () => {
    api = startTestApi({ ...NO_LIMITS, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const key = api.key('all')
    const body = { customer: { name: 'Bo', phone: '503-555-0143', sms_consent: true }, pickup: { location: 'Exit 12' } }
    const created = await call(api, key, 'POST', '/jobs', body, { 'Idempotency-Key': 'create-2' })
    const replayed = await call(api, key, 'POST', '/jobs', body, { 'Idempotency-Key': 'create-2' })
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    expect(replayed.body).toEqual(created.body)
    await call(api, key, 'POST', `/jobs/${created.body.id}/assign`, { unit_id: makeUnit(api, { driverPhone: '+15035550198' }).id })
    const texts = (await call(api, key, 'GET', `/jobs/${created.body.id}/texts`)).body.data as any[]
    expect(texts.map((t) => t.template)).toEqual(['request_received', 'driver_job_link', 'status_dispatched'])
    expect(texts[0].body).toEndWith(`Follow it here: ${created.body.tracking_url}`)
    expect(texts[1].body).toContain('[driver link]')
    // The operator's outbox (towline texts list) shows the driver's link itself.
    const job = api.db.$client.query<Record<string, any>, [string]>('SELECT * FROM jobs WHERE id = ?').get(created.body.id)!
    const outbox = listOutbox(api.db, api.links, { jobId: created.body.id, limit: 10 })
    expect(outbox.find((t) => t.template === 'driver_job_link')!.body).toContain(driverUrlOf(api.links, { driverTokenSealed: job.driver_token_sealed })!)
  })
})

/** job_old2 as the API of the time answered it (the view has not changed since, but for how the token was kept). */
const then = randomBytes(32)
function oldJob2(token: string, at: number): JobRow {
  return {
    id: 'job_old2', accountId: 'acct_old', siteId: 'site_old', externalRef: null, source: null, payerType: null, serviceType: null, urgency: null,
    customer: { name: 'Bo', phone: null, sms_consent: false }, vehicle: {}, pickup: { location: 'x', lat: null, lng: null }, destination: null,
    status: 'confirmed', cancelReason: null, rating: null, ratingComment: null, ratedAt: null, reopenCount: 0, etaAt: null, quoteCents: null,
    finalPriceCents: null, paymentMethod: null, unitId: null, commercialAccountId: null, trackingTokenHash: null, trackingTokenSealed: seal(then, token), driverTokenHash: null,
    driverTokenSealed: null, milestones: {}, eventSeq: 1, imported: false, archivedAt: null, createdAt: at, updatedAt: at,
  }
}

describe('a database from before sealed links (migration 0006)', () => {
  /** Builds a 0006 database the way towline of that time wrote it: tokens in clear in jobs, texts, payloads and kept responses. */
  function oldDatabase() {
    const dir = mkdtempSync(join(tmpdir(), 'towline-links-'))
    dirs.push(dir)
    const path = join(dir, 'towline.db')
    const db = openDatabase(path)
    migrateDatabase(db, { through: '0006_webhook_event_payloads' })
    const tracking = 'Tr4ck1ngT0kenOfAnOldJob1'
    const driver = 'Dr1verT0kenOfAnOldJob123'
    const other = 'AnotherTrackingToken0002'
    const secret = mintApiKey()
    const at = Date.parse('2026-11-21T08:00:00.000Z') // an hour before the test clock: the kept response is still fresh
    const run = (sql: string, ...params: (string | number | null)[]) => db.$client.query(sql).run(...params)
    run('INSERT INTO accounts (id, name, is_default, created_at, default_country) VALUES (?, ?, 1, ?, ?)', 'acct_old', 'Old Towing', at, 'US')
    run('INSERT INTO sites (id, account_id, name, created_at) VALUES (?, ?, ?, ?)', 'site_old', 'acct_old', 'Main yard', at)
    run('INSERT INTO units (id, account_id, site_id, name, driver_phone, device_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', 'unit_old', 'acct_old', 'site_old', 'Truck 1', '+15035550199', 'dev-old', at, at)
    run('INSERT INTO api_keys (id, account_id, name, prefix, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', 'key_old', 'acct_old', 'old', secret.slice(0, 13), hashApiKey(secret), JSON.stringify(SCOPES), at)
    const insertJob = db.$client.query(`INSERT INTO jobs (id, account_id, site_id, customer, vehicle, pickup, status, unit_id, tracking_token, driver_token, milestones, event_seq, created_at, updated_at)
      VALUES (?, 'acct_old', 'site_old', '{"name":"Ann","phone":"+15035550142","sms_consent":true}', '{}', '{"location":"I-5 N mile 12","lat":null,"lng":null}', ?, ?, ?, ?, '{}', 1, ?, ?)`)
    insertJob.run('job_old1', 'dispatched', 'unit_old', tracking, driver, at, at)
    insertJob.run('job_old2', 'confirmed', null, other, null, at, at)
    const insertText = db.$client.query(`INSERT INTO texts (id, account_id, job_id, unit_id, recipient, to_phone, template, body, status, attempts, created_at, updated_at)
      VALUES (?, 'acct_old', 'job_old1', ?, ?, ?, ?, ?, 'sent', 1, ?, ?)`)
    insertText.run('txt_old1', null, 'customer', '+15035550142', 'request_received', `Old Towing: we got your request. Follow it here: http://towline.test/t/${tracking}`, at, at)
    insertText.run('txt_old2', 'unit_old', 'driver', '+15035550199', 'driver_job_link', `Old Towing: job 1 at I-5. Open: http://towline.test/d/${driver}`, at, at)
    run('INSERT INTO webhook_event_payloads (event_id, account_id, data, created_at) VALUES (?, ?, ?, ?)', 'evt_old', 'acct_old',
      `{"job":{"id":"job_old1","tracking_url":"http://towline.test/t/${tracking}"},"event":{"type":"job.created"}}`, at)
    // A kept response, as withIdempotency kept it: the hash covers the method, path and the body with keys sorted.
    const body = { customer: { name: 'Bo' }, pickup: { location: 'x' } }
    const requestHash = createHash('sha256').update(`POST /jobs\n${JSON.stringify(body)}`).digest('hex')
    run('INSERT INTO idempotency_keys (key_id, idem_key, request_hash, status_code, response_body, created_at) VALUES (?, ?, ?, ?, ?, ?)', 'key_old', 'idem-old', requestHash, 201,
      JSON.stringify(jobView(oldJob2(other, at), { publicUrl: 'http://towline.test', key: then }, { unit: null, commercialAccount: null })), at)
    closeDatabase(db)
    return { path, tracking, driver, other, secret, body }
  }

  test('migrates with its links unchanged, the clear columns gone, and no token left in clear in any table or byte of the file', async () => {
    const old = oldDatabase()
    // The kit opens the file as serve does: a key file is made for it, then it is migrated.
    api = startTestApi({ TOWLINE_DB: old.path })
    expect(existsSync(`${old.path}.key`)).toBe(true)
    const columns = api.db.$client.query<{ name: string }, []>("SELECT name FROM pragma_table_info('jobs')").all().map((c) => c.name)
    expect(columns).not.toContain('tracking_token')
    expect(columns).not.toContain('driver_token')
    expect(columns).toEqual(expect.arrayContaining(['tracking_token_hash', 'tracking_token_sealed', 'driver_token_hash', 'driver_token_sealed']))
    const job = await call(api, old.secret, 'GET', '/jobs/job_old1')
    expect(job.body.tracking_url).toBe(`http://towline.test/t/${old.tracking}`)
    expect((await call(api, old.secret, 'GET', '/jobs/job_old2')).body.tracking_url).toBe(`http://towline.test/t/${old.other}`)
    const row = api.db.$client.query<Record<string, any>, []>("SELECT * FROM jobs WHERE id = 'job_old1'").get()!
    expect(driverUrlOf(api.links, { driverTokenSealed: row.driver_token_sealed })).toBe(`http://towline.test/d/${old.driver}`)
    expect({ tracking: row.tracking_token_hash, driver: row.driver_token_hash }).toEqual({ tracking: sha256(old.tracking), driver: sha256(old.driver) })
    // The stored copies still read as they did.
    expect(listOutbox(api.db, api.links, { jobId: 'job_old1', limit: 10 }).map((t) => t.body)).toEqual([
      `Old Towing: job 1 at I-5. Open: http://towline.test/d/${old.driver}`, `Old Towing: we got your request. Follow it here: http://towline.test/t/${old.tracking}`,
    ])
    const replay = await call(api, old.secret, 'POST', '/jobs', old.body, { 'Idempotency-Key': 'idem-old' })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body.tracking_url).toBe(`http://towline.test/t/${old.other}`)
    const payload = api.db.$client.query<{ data: string }, []>("SELECT data FROM webhook_events WHERE event_id = 'evt_old'").get()!.data
    expect(JSON.parse(openLinksIn(api.links, payload)).job.tracking_url).toBe(`http://towline.test/t/${old.tracking}`)
    expectNowhere(api.db, old.path, [old.tracking, old.driver, old.other])
  })
})

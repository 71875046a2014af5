/**
 * The text sender in process, on a real SQLite file, against the local Twilio stand-in, with a
 * clock the test moves: per-number order, leases left by other processes settled while running,
 * and what the log provider writes.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createLogger } from '../platform/log'
import { startTestApi, TEST_ENGINE, until, type TestApi } from '../../test/kit'
import { holdPgLocks } from '../../test/pg-lock-holder'
import { WRITE_LOCK } from '../db/pg/pg-client'
import { startTwilioStandin, TWILIO_FROM, TWILIO_SID, TWILIO_TOKEN, type Answer } from '../../test/twilio-standin'
import { logProvider, twilioProvider } from './providers'
import { TextSender, type TextSenderDeps } from './text-sender'
import { onTextsQueued } from './queue-text'
import { replaceTrackingLink } from '../jobs/replace-tracking-link'

const answers: ((to: string, body: string) => Answer | undefined)[] = []
const twilio = startTwilioStandin({ answer: (to, body) => answers.map((a) => a(to, body)).find((x) => x) ?? 'ok' })
afterAll(() => twilio.stop())

const logger = createLogger('silent')
let api: TestApi
const senders: TextSender[] = []
afterEach(async () => {
  onTextsQueued(() => {})
  for (const s of senders.splice(0)) await s.stop(1000)
  answers.length = 0
  api?.close()
})

function sender(over: Partial<TextSenderDeps> = {}, twilioTimeoutMs?: number) {
  const provider = twilioProvider({ accountSid: TWILIO_SID, authToken: TWILIO_TOKEN, from: TWILIO_FROM, apiBase: twilio.apiBase, statusCallbackUrl: 'http://towline.test/sms/twilio/status', timeoutMs: twilioTimeoutMs })
  const s = new TextSender({ db: api.db, clock: api.clock, logger, provider, retryMs: [60_000, 120_000], owner: 'test-host:1', links: api.links, ...over })
  senders.push(s)
  onTextsQueued(() => s.wake())
  return s
}
async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await api.request(method, `/api/v1${path}`, { key, body })
  return { status: res.status, body: await res.json() as any }
}
const textRows = (jobId: string) => api.db.$client.query('SELECT template, status, provider_message_id, attempts FROM texts WHERE job_id = ? ORDER BY created_at, id').all(jobId) as any[]
const creates = (to: string) => twilio.creates.filter((c) => c.to === to)
/** A text's attempts so far and who holds it (null: nobody is sending it now). */
const leaseOf = (jobId: string) => api.db.$client.query('SELECT attempts, lease_owner AS owner FROM texts WHERE job_id = ?').get(jobId) as { attempts: number; owner: string | null }

/**
 * A running sender (Twilio's timeout `twilioTimeoutMs`) and a new job whose customer, at
 * 503-555-`line`, consented: Twilio answers its creates to that number as `answer` says from
 * how many came before (undefined: as usual).
 */
async function jobTexted(line: string, answer: (before: number) => Answer | undefined, twilioTimeoutMs?: number) {
  api = startTestApi()
  const key = api.key('all')
  const to = `+1503555${line}`
  answers.push((number) => (number === to ? answer(creates(to).length) : undefined))
  const s = sender({}, twilioTimeoutMs)
  s.start()
  const job = (await call(key, 'POST', '/jobs', { customer: { name: 'Ro', phone: `503-555-${line}`, sms_consent: true }, pickup: { location: 'x' } })).body
  return { key, s, job, to }
}

describe('order', () => {
  test('texts to one number go out in the order they were written: a later one waits while an earlier one is retried', async () => {
    api = startTestApi()
    const key = api.key('all')
    let failures = 1
    answers.push((to, body) => (to === '+15035550181' && /got your request/.test(body) && failures-- > 0 ? 'error500' : undefined))
    const job = (await call(key, 'POST', '/jobs', { customer: { name: 'Lu', phone: '503-555-0181', sms_consent: true }, pickup: { location: 'x' } })).body
    await call(key, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: 'customer got a ride' })
    const s = sender()
    s.start()
    await until(() => creates('+15035550181').length === 1)
    await until(() => textRows(job.id)[0].status === 'queued' && textRows(job.id)[0].attempts === 1)
    // The cancellation text is due now, but the earlier text to that number is waiting for its
    // retry. A text to another number written after it goes out: the pass that sent it held this one back.
    const other = (await call(key, 'POST', '/jobs', { customer: { name: 'Al', phone: '503-555-0186', sms_consent: true }, pickup: { location: 'x' } })).body
    await until(() => textRows(other.id)[0].status === 'sent')
    expect(creates('+15035550181').map((c) => c.answer)).toEqual(['error500'])
    expect(textRows(job.id).map((t) => t.status)).toEqual(['queued', 'queued'])
    // Meanwhile the sender sleeps until the retry is due: the held-back text, due already, does
    // not have it look again and again (it did: a pass after a pass, until the retry).
    const retryAt = (api.db.$client.query('SELECT next_attempt_at AS at FROM texts WHERE job_id = ? ORDER BY created_at, id LIMIT 1').get(job.id) as { at: number }).at
    expect(retryAt).toBeGreaterThan(api.clock.now())
    await until(() => s.nextPassAt === retryAt)
    api.clock.advance(60_000)
    s.wake()
    await until(() => textRows(job.id).every((t) => t.status === 'sent'))
    expect(creates('+15035550181').map((c) => /got your request/.test(c.body) ? 'received' : 'cancelled')).toEqual(['received', 'received', 'cancelled'])
  })
})

describe('sending numbers', () => {
  test("texts of two accounts to one number, sent in one run, each go out from their own account's number", async () => {
    api = startTestApi()
    const bay = api.account('Bay Towing')
    api.db.$client.run("UPDATE accounts SET sms_from = '+15035550777' WHERE id = ?", [bay])
    const mine = (await call(api.key('all'), 'POST', '/jobs', { customer: { name: 'Ro', phone: '503-555-0188', sms_consent: true }, pickup: { location: 'x' } })).body
    const theirs = (await call(api.key('all', { accountId: bay }), 'POST', '/jobs', { customer: { name: 'Ro', phone: '503-555-0188', sms_consent: true }, pickup: { location: 'y' } })).body
    // Both are queued before the sender starts: one pass takes them as one run of that number.
    sender().start()
    await until(() => textRows(mine.id)[0].status === 'sent' && textRows(theirs.id)[0].status === 'sent')
    expect(twilio.messages.filter((m) => m.to === '+15035550188').map((m) => [m.body.split(':')[0], m.from])).toEqual([['My towing company', TWILIO_FROM], ['Bay Towing', '+15035550777']])
  })
})

describe('claims on PostgreSQL: row locks, not the write lock', () => {
  const onPostgres = TEST_ENGINE === 'postgres' ? test : test.skip
  const job = async (key: string, phone: string) =>
    (await call(key, 'POST', '/jobs', { customer: { name: 'Jo', phone, sms_consent: true }, pickup: { location: 'x' } })).body as { id: string }

  onPostgres('a text is claimed and sent while another instance holds the write lock', async () => {
    api = startTestApi()
    const j = await job(api.key('all'), '503-555-0191')
    // Another instance in a long write transaction holds the one write lock.
    const locks = holdPgLocks(api.db.location, `SELECT pg_advisory_xact_lock(${WRITE_LOCK})`, `SELECT 1 FROM texts WHERE job_id = '${j.id}' AND status = 'sending'`, 5_000)
    await locks.held
    sender().start()
    expect(await locks.released).toBe('condition')
    await until(() => textRows(j.id)[0].status === 'sent')
    expect(creates('+15035550191')).toHaveLength(1)
  }, 20_000)

  onPostgres("a number whose next text another transaction holds waits; other numbers' texts go out meanwhile, and it right after", async () => {
    api = startTestApi()
    const key = api.key('all')
    const heldJob = await job(key, '503-555-0192')
    const freeJob = await job(key, '503-555-0193')
    const locks = holdPgLocks(api.db.location, `SELECT id FROM texts WHERE job_id = '${heldJob.id}' FOR UPDATE`, `SELECT 1 FROM texts WHERE job_id = '${freeJob.id}' AND status = 'sent'`, 5_000)
    await locks.held
    const s = sender()
    s.start()
    expect(await locks.released).toBe('condition')
    // The holder's commit wakes a running service (background.ts); here the test does.
    s.wake()
    await until(() => textRows(heldJob.id)[0].status === 'sent')
    expect([creates('+15035550192').length, creates('+15035550193').length]).toEqual([1, 1])
  }, 20_000)
})

describe('leases', () => {
  test('a text another process was sending when it died is settled while the sender runs: found at Twilio, or sent once', async () => {
    api = startTestApi()
    const key = api.key('all')
    const s = sender()
    s.start()
    const took = (await call(key, 'POST', '/jobs', { customer: { name: 'Mo', phone: '503-555-0182', sms_consent: true }, pickup: { location: 'x' } })).body
    const lost = (await call(key, 'POST', '/jobs', { customer: { name: 'Ny', phone: '503-555-0183', sms_consent: true }, pickup: { location: 'y' } })).body
    await until(() => textRows(took.id)[0].status === 'sent' && textRows(lost.id)[0].status === 'sent')
    // Rewind both to what a process on another machine left when it died mid-send: one that Twilio
    // took (its message is there, unknown to us), one that never reached Twilio.
    const now = api.clock.now()
    for (const id of [took.id, lost.id]) {
      api.db.$client.run("UPDATE texts SET status = 'sending', provider_message_id = NULL, sending_at = ?, next_attempt_at = ?, lease_owner = 'another-machine:7' WHERE job_id = ?", [now, now + 30_000, id])
    }
    const tookSid = creates('+15035550182')[0] && twilio.messages.find((m) => m.to === '+15035550182')!.sid
    twilio.messages.splice(twilio.messages.findIndex((m) => m.to === '+15035550183'), 1)
    const before = twilio.creates.length
    // While the leases run, nothing is asked or resent: a text written later goes out meanwhile.
    const later = (await call(key, 'POST', '/jobs', { customer: { name: 'Pi', phone: '503-555-0187', sms_consent: true }, pickup: { location: 'z' } })).body
    await until(() => textRows(later.id)[0].status === 'sent')
    expect([textRows(took.id)[0].status, textRows(lost.id)[0].status]).toEqual(['sending', 'sending'])
    api.clock.advance(30_001)
    s.wake()
    await until(() => textRows(took.id)[0].status === 'sent' && textRows(lost.id)[0].status === 'sent')
    expect(textRows(took.id)[0].provider_message_id).toBe(tookSid)
    expect(twilio.creates.slice(before).map((c) => c.to)).toEqual(['+15035550187', '+15035550183'])
  })
})

describe('ambiguous sends', () => {
  test('Twilio takes a text but answers after the timeout: it is asked about before any second send, and the customer gets it once', async () => {
    const { s, job } = await jobTexted('0171', (before) => (before === 0 ? 'hang' : undefined), 200)
    // Timed out: still `sending` (perhaps taken), its next look at the retry's time.
    await until(() => leaseOf(job.id).attempts === 1 && leaseOf(job.id).owner === null)
    expect(textRows(job.id)[0].status).toBe('sending')
    api.clock.advance(60_000)
    s.wake()
    await until(() => textRows(job.id)[0].status === 'sent')
    expect(creates('+15035550171')).toHaveLength(1)
    expect(textRows(job.id)[0].provider_message_id).toBe(twilio.messages.find((m) => m.to === '+15035550171')!.sid)
  })

  test('a Twilio that never answers and never takes the text: each attempt is asked about, then retried on the schedule; after the last, failed, and nothing more is sent', async () => {
    const { s, job } = await jobTexted('0175', () => 'stall', 200)
    for (const [attempts, wait] of [[1, 60_000], [2, 120_000]] as const) {
      await until(() => creates('+15035550175').length === attempts && leaseOf(job.id).owner === null)
      api.clock.advance(wait)
      s.wake()
    }
    await until(() => textRows(job.id)[0].status === 'failed', 8000)
    expect(creates('+15035550175')).toHaveLength(3)
    api.clock.advance(3_600_000)
    s.wake()
    await Bun.sleep(300)
    expect({ creates: creates('+15035550175').length, status: textRows(job.id)[0].status }).toEqual({ creates: 3, status: 'failed' })
  })
})

describe('what a waiting text meets when it goes out', () => {
  test('texts allowed turned off while a text waits for its retry: it is skipped (no_consent), never sent', async () => {
    const { key, s, job } = await jobTexted('0172', () => 'error500')
    await until(() => textRows(job.id)[0].status === 'queued' && textRows(job.id)[0].attempts === 1)
    answers.length = 0
    expect((await call(key, 'PATCH', `/jobs/${job.id}`, { customer: { sms_consent: false } })).status).toBe(200)
    api.clock.advance(60_000)
    s.wake()
    await until(() => textRows(job.id)[0].status === 'skipped')
    expect((api.db.$client.query('SELECT skip_reason AS r FROM texts WHERE job_id = ?').get(job.id) as any).r).toBe('no_consent')
    expect(creates('+15035550172')).toHaveLength(1)
  })

  test("a number corrected while a text waits: it goes to the new number; a new tracking link meanwhile: it carries the new one", async () => {
    const { key, s, job } = await jobTexted('0173', () => 'error500')
    await until(() => textRows(job.id)[0].status === 'queued' && textRows(job.id)[0].attempts === 1)
    expect((await call(key, 'PATCH', `/jobs/${job.id}`, { customer: { phone: '503-555-0174' } })).status).toBe(200)
    replaceTrackingLink(api.contexts.forOperator(api.accountId), job.id)
    const fresh = (await call(key, 'GET', `/jobs/${job.id}`)).body
    expect(fresh.tracking_url).not.toBe(job.tracking_url)
    api.clock.advance(60_000)
    s.wake()
    await until(() => creates('+15035550174').length === 1)
    await until(() => textRows(job.id)[0].status === 'sent')
    expect(creates('+15035550173')).toHaveLength(1)
    expect(creates('+15035550174')[0]!.body).toContain(fresh.tracking_url)
    expect(creates('+15035550174')[0]!.body).not.toContain(job.tracking_url)
  })
})

describe('texts written too long ago', () => {
  test('a backlog older than the max age (the service was down, or an outbox from a version without a sender) is skipped as expired, never sent; what is new goes out', async () => {
    api = startTestApi()
    const key = api.key('all')
    // Written while no sender ran: a job's texts, then seven hours pass.
    const old = (await call(key, 'POST', '/jobs', { customer: { name: 'Old', phone: '503-555-0194', sms_consent: true }, pickup: { location: 'x' } })).body
    expect((await call(key, 'PATCH', `/jobs/${old.id}`, { status: 'cancelled', cancel_reason: 'Found another ride' })).status).toBe(200)
    api.clock.advance(7 * 3_600_000)
    const fresh = (await call(key, 'POST', '/jobs', { customer: { name: 'New', phone: '503-555-0194', sms_consent: true }, pickup: { location: 'y' } })).body
    const lines: string[] = []
    const s = sender({ logger: { ...logger, warn: (o: object, m: string) => { lines.push(`${m} ${JSON.stringify(o)}`) } } as any, maxAgeMs: 6 * 3_600_000 })
    s.start()
    await until(() => textRows(fresh.id)[0].status === 'sent')
    expect(textRows(old.id).map((t) => t.status)).toEqual(['skipped', 'skipped'])
    expect(api.db.$client.query('SELECT DISTINCT skip_reason AS r FROM texts WHERE job_id = ?').all(old.id)).toEqual([{ r: 'expired' }])
    // One text reached the number: the new job's.
    expect(creates('+15035550194').map((c) => c.body)).toEqual([expect.stringContaining(fresh.tracking_url)])
    expect(lines).toEqual([expect.stringContaining('texts written too long ago to be sent were skipped as expired {"texts":2,"max_age_hours":6}')])
    // Through the API, as integrators read the outbox.
    expect((await call(key, 'GET', `/jobs/${old.id}/texts`)).body.data.map((t: any) => [t.status, t.skip_reason])).toEqual([['skipped', 'expired'], ['skipped', 'expired']])
  })
})

describe('the log provider', () => {
  test('logs neither the whole number nor any link of a text (the driver link acts as the driver)', async () => {
    api = startTestApi()
    const key = api.key('all')
    const file = join(api.dir, 'log.jsonl')
    const fd = openSync(file, 'w')
    const fileLogger = createLogger('info', fd)
    const s = sender({ provider: logProvider(fileLogger), logger: fileLogger })
    s.start()
    const unit = (await call(key, 'GET', '/units')).body
    expect(unit.data).toEqual([])
    api.db.$client.run("INSERT INTO units (id, account_id, name, driver_name, driver_phone, device_id, off_duty, created_at, updated_at) VALUES ('unit_log', ?, 'T1', 'Di', '+15035550185', 'dev-log', 0, 0, 0)", [api.accountId])
    const job = (await call(key, 'POST', '/jobs', { customer: { name: 'Oz', phone: '503-555-0184', sms_consent: true }, pickup: { location: 'x' } })).body
    await call(key, 'POST', `/jobs/${job.id}/assign`, { unit_id: 'unit_log' })
    await until(() => textRows(job.id).length === 3 && textRows(job.id).every((t) => t.status === 'sent'))
    fileLogger.flush()
    await until(() => (readFileSync(file, 'utf8').match(/log provider: not sent/g) ?? []).length === 3)
    closeSync(fd)
    const log = readFileSync(file, 'utf8')
    expect(log).toContain('text (log provider: not sent)')
    expect(log).not.toContain('5035550184')
    expect(log).not.toContain('5035550185')
    expect(log).not.toContain(job.tracking_url)
    expect(log).not.toMatch(/\/d\/[A-Za-z0-9]{10,}/)
    expect(log).toContain('+1******0184')
  })
})

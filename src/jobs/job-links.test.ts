/**
 * Tracking and driver links are capabilities: the database keeps each token's SHA-256 and a
 * copy sealed with the key file beside it, never the token in clear: not in the jobs table,
 * not in the texts that carry the links, the webhook payloads or the stored idempotent
 * responses.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startTestApi, type TestApi } from '../../test/kit'
import { call, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import type { Db } from '../db/client'
import { driverUrlOf } from './job-links'
import { listOutbox } from '../texts/list-texts'

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
  const tables = db.$client.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all()
  return Object.fromEntries(tables.map(({ name }) => [name, JSON.stringify(db.$client.query(`SELECT * FROM "${name}"`).all())]))
}

/** The bytes of the database file and its WAL as a copy taken now would hold them, as latin1 text. */
function fileBytes(path: string): string {
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
    expectNowhere(api.db, join(api.dir, 'towline.db'), [tracking, driver])
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

import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { expectError, startTestApi, type TestApi } from '../../test/kit'
import { databaseFingerprint } from '../../test/fingerprint'
import { SCOPES } from '../accounts/scopes'
import { addSite } from '../accounts/add-site'
import { AppError } from '../platform/errors'
import type { CommercialAccountInput } from './commercial-account.model'
import { createCommercialAccount } from './create-commercial-account'
import { findCommercialAccountByName } from './find-commercial-account-by-name'
import { updateCommercialAccount } from './update-commercial-account'
import { readDirectory } from './directory.data'

let api: TestApi
let key: string
beforeEach(() => { api = startTestApi(); key = api.key('all') })
afterEach(() => api.close())

const operator = (accountId = api.accountId) => api.contexts.forOperator(accountId)
const make = (input: Partial<CommercialAccountInput> & { name: string }, accountId = api.accountId) =>
  createCommercialAccount(operator(accountId), { kind: 'motor_club', contacts: [], ...input })
const get = async (path: string, k: string | null = key) => {
  const res = await api.request('GET', path, { key: k })
  return { status: res.status, body: (await res.json()) as any }
}
const newJob = async (extra: Record<string, unknown> = {}, k = key) => {
  const res = await api.request('POST', '/api/v1/jobs', { key: k, body: { customer: { name: 'Ann Lee' }, pickup: { location: 'I-5 exit 12' }, ...extra } })
  return { status: res.status, body: (await res.clone().json()) as any, res }
}
/** The error an operation throws, for checking refusals of the dashboard's operations. */
const refusal = (fn: () => unknown): AppError => {
  try { fn() } catch (err) { if (err instanceof AppError) return err; throw err }
  throw new Error('expected a refusal')
}

describe('GET /api/v1/accounts', () => {
  test('lists the directory newest first, paged like GET /jobs, with names, kinds and contacts only', async () => {
    expect((await get('/api/v1/accounts')).body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null })
    const aaa = make({ name: 'AAA Oregon', contacts: [{ name: 'Dispatch desk', role: 'dispatch', phone: '(503) 555-0150', email: 'desk@aaa.example' }], rates: 'hook 95', billing_address: 'PO Box 1', internal_notes: 'slow payer' })
    api.clock.advance(1000)
    const police = make({ name: 'Portland Police Bureau', kind: 'police' })
    api.clock.advance(1000)
    const fleet = make({ name: 'City Fleet', kind: 'fleet' })
    make({ name: 'Not yours', kind: 'dealer' }, api.account('Rival Towing'))

    const first = await get('/api/v1/accounts?limit=2')
    expect(first.status).toBe(200)
    expect(first.body.data.map((a: any) => a.id)).toEqual([fleet.id, police.id])
    expect(first.body.has_more).toBe(true)
    const second = await get(`/api/v1/accounts?limit=2&cursor=${first.body.next_cursor}`)
    expect(second.body).toEqual({
      object: 'list', has_more: false, next_cursor: null,
      data: [{
        object: 'commercial_account', id: aaa.id, name: 'AAA Oregon', kind: 'motor_club',
        contacts: [{ name: 'Dispatch desk', role: 'dispatch', phone: '+15035550150', email: 'desk@aaa.example' }],
        created_at: '2026-11-21T09:00:00.000Z', updated_at: '2026-11-21T09:00:00.000Z',
      }],
    })
    expect(aaa.id).toMatch(/^cac_/)
  })

  test('a bad limit or cursor is 422 naming it', async () => {
    expect((await expectError(await api.request('GET', '/api/v1/accounts?limit=101', { key }), 422, 'validation_failed')).details.fields[0].path).toBe('limit')
    expect((await expectError(await api.request('GET', '/api/v1/accounts?cursor=nope', { key }), 422, 'validation_failed')).details.fields[0].path).toBe('cursor')
  })

  test('needs the accounts:read scope: 403 insufficient_scope without it, 401 without a key', async () => {
    const jobsOnly = api.key(SCOPES.filter((s) => s !== 'accounts:read'))
    for (const path of ['/api/v1/accounts', `/api/v1/accounts/${make({ name: 'AAA' }).id}`]) {
      const err = await expectError(await api.request('GET', path, { key: jobsOnly }), 403, 'insufficient_scope')
      expect(err.details.required_scope).toBe('accounts:read')
      await expectError(await api.request('GET', path), 401, 'unauthorized')
    }
    expect((await get('/api/v1/accounts', api.key(['accounts:read']))).status).toBe(200)
  })

  test('a key limited to one site reads the whole directory: it belongs to the account', async () => {
    const south = addSite(api.db, api.clock, { accountId: api.accountId, name: 'South yard' }).id
    const aaa = make({ name: 'AAA' })
    const limited = api.key(['accounts:read'], { sites: [south] })
    expect((await get('/api/v1/accounts', limited)).body.data.map((a: any) => a.id)).toEqual([aaa.id])
    expect((await get(`/api/v1/accounts/${aaa.id}`, limited)).status).toBe(200)
  })
})

describe('GET /api/v1/accounts/{id}', () => {
  test('answers one commercial account; another account\'s id answers exactly as an unknown one', async () => {
    const aaa = make({ name: 'AAA', contacts: [{ name: 'Jo', phone: '+15035550111' }] })
    expect((await get(`/api/v1/accounts/${aaa.id}`)).body).toEqual({
      object: 'commercial_account', id: aaa.id, name: 'AAA', kind: 'motor_club', contacts: [{ name: 'Jo', role: null, phone: '+15035550111', email: null }],
      created_at: '2026-11-21T09:00:00.000Z', updated_at: '2026-11-21T09:00:00.000Z',
    })
    const theirs = make({ name: 'Theirs' }, api.account('Rival Towing'))
    const unknown = 'cac_01ZZZZZZZZZZZZZZZZZZZZZZZZ'
    const a = await expectError(await api.request('GET', `/api/v1/accounts/${theirs.id}`, { key }), 404, 'not_found')
    const b = await expectError(await api.request('GET', `/api/v1/accounts/${unknown}`, { key }), 404, 'not_found')
    expect(a.message.replace(theirs.id, '<id>')).toBe(b.message.replace(unknown, '<id>'))
  })

  test('shows a rename and new contacts at once; updated_at moves, created_at stays', async () => {
    const aaa = make({ name: 'AAA' })
    api.clock.advance(60_000)
    updateCommercialAccount(operator(), aaa.id, { name: 'AAA Oregon/Idaho', kind: 'motor_club', contacts: [{ name: 'Night desk', email: 'night@aaa.example' }] })
    const { body } = await get(`/api/v1/accounts/${aaa.id}`)
    expect(body).toMatchObject({ name: 'AAA Oregon/Idaho', contacts: [{ name: 'Night desk', role: null, phone: null, email: 'night@aaa.example' }], created_at: '2026-11-21T09:00:00.000Z', updated_at: '2026-11-21T09:01:00.000Z' })
  })
})

describe('the directory\'s operations check every field', () => {
  test('name, kind, contacts and private fields are refused in plain words at their paths, all at once, and nothing is written', () => {
    const before = databaseFingerprint(api.db)
    const err = refusal(() => make({
      name: '   ', kind: 'tow_club',
      contacts: [{ name: '', phone: '12' }, { name: 'Jo', phone: 'call me', email: 'jo@' }],
      rates: 'x'.repeat(2001),
    }))
    expect(err.errorCode).toBe('validation_failed')
    expect(err.details.fields).toEqual([
      { path: 'name', message: 'must not be blank' },
      { path: 'kind', message: 'must be one of the kinds listed: Motor club, Police, Fleet, Body shop, Dealer, Insurance, Municipality, Private property, Other' },
      { path: 'contacts.0.name', message: 'must not be blank (every contact has a name)' },
      { path: 'contacts.0.phone', message: 'is not a phone number (use the +country form, e.g. +15552013344)' },
      { path: 'contacts.1.phone', message: 'is not a phone number (use the +country form, e.g. +15552013344)' },
      { path: 'contacts.1.email', message: 'must be an email address such as dispatch@example.com' },
      { path: 'rates', message: 'must be at most 2000 characters' },
    ])
    expect(refusal(() => make({ name: 'x'.repeat(201) })).details.fields).toEqual([{ path: 'name', message: 'must be at most 200 characters' }])
    expect(refusal(() => make({ name: 'Big', contacts: Array.from({ length: 21 }, (_, i) => ({ name: `C${i}` })) })).details.fields).toEqual([{ path: 'contacts', message: 'may hold at most 20 contacts' }])
    expect((refusal(() => make({ name: 'Notes', billing_address: 'b'.repeat(2001), internal_notes: 'n'.repeat(2001) })).details.fields as any[]).map((f: any) => f.path)).toEqual(['billing_address', 'internal_notes'])
    expect(databaseFingerprint(api.db)).toEqual(before)
    // The limits themselves pass.
    expect(make({ name: 'y'.repeat(200), contacts: Array.from({ length: 20 }, (_, i) => ({ name: `C${i}` })), rates: 'r'.repeat(2000), billing_address: 'b'.repeat(2000), internal_notes: 'n'.repeat(2000) }).contacts).toHaveLength(20)
  })

  test('a name is unique in the account without regard to case: 409 conflict naming the holder; another account may use it', () => {
    const aaa = make({ name: 'AAA Oregon' })
    const err = refusal(() => make({ name: '  aaa oregon ' }))
    expect(err.errorCode).toBe('conflict')
    expect(err.status).toBe(409)
    expect(err.details).toMatchObject({ existing_commercial_account_id: aaa.id, fields: [{ path: 'name' }] })
    const other = make({ name: 'Police' })
    expect(refusal(() => updateCommercialAccount(operator(), other.id, { name: 'AAA OREGON', kind: 'police', contacts: [] })).errorCode).toBe('conflict')
    // Saving an account under its own name (in another case) is no conflict.
    expect(updateCommercialAccount(operator(), aaa.id, { name: 'AAA OREGON', kind: 'motor_club', contacts: [] }).name).toBe('AAA OREGON')
    expect(make({ name: 'AAA Oregon' }, api.account('Rival Towing')).name).toBe('AAA Oregon')
  })

  test('names beyond A-Z are compared without case too (ÉCLAIR is éclair, on SQLite as on PostgreSQL), and listed by the alphabet, É beside E', () => {
    const eclair = make({ name: 'éclair Towing Club' })
    expect(refusal(() => make({ name: 'ÉCLAIR TOWING CLUB' })).details).toMatchObject({ existing_commercial_account_id: eclair.id })
    // The same letter written decomposed (E + combining acute) is the same name.
    expect(refusal(() => make({ name: 'E\u0301clair towing club' })).errorCode).toBe('conflict')
    for (const name of ['Zeta Fleet', 'Apex Motor Club', 'Ödland Police', 'Omega Body Shop']) make({ name })
    expect(readDirectory(operator()).map((r) => r.name)).toEqual(['Apex Motor Club', 'éclair Towing Club', 'Ödland Police', 'Omega Body Shop', 'Zeta Fleet'])
    expect(findCommercialAccountByName(api.db, api.accountId, 'ödland police')?.name).toBe('Ödland Police')
  })

  test('an API key cannot write the directory (it is edited in the dashboard); owners and dispatchers can', async () => {
    const err = refusal(() => createCommercialAccount(api.contextOfKey(key), { name: 'AAA', kind: 'motor_club', contacts: [] }))
    expect(err.errorCode).toBe('insufficient_scope')
    const dispatcher = api.contexts.forDispatcher({ userId: 'usr_1', role: 'dispatcher', accountId: api.accountId })
    const made = createCommercialAccount(dispatcher, { name: 'AAA', kind: 'motor_club', contacts: [] })
    expect(updateCommercialAccount(dispatcher, made.id, { name: 'AAA 2', kind: 'fleet', contacts: [] }).kind).toBe('fleet')
  })

  test('saving another account\'s entry is 404 and changes nothing', () => {
    const theirs = make({ name: 'Theirs' }, api.account('Rival Towing'))
    const before = databaseFingerprint(api.db)
    expect(refusal(() => updateCommercialAccount(operator(), theirs.id, { name: 'Mine now', kind: 'other', contacts: [] })).errorCode).toBe('not_found')
    expect(databaseFingerprint(api.db)).toEqual(before)
  })

  test('findCommercialAccountByName finds a name without regard to case, only within its account', () => {
    const aaa = make({ name: 'AAA Oregon' })
    const rival = api.account('Rival Towing')
    make({ name: 'Police' }, rival)
    expect(findCommercialAccountByName(api.db, api.accountId, 'aaa OREGON')).toEqual({ id: aaa.id, name: 'AAA Oregon' })
    expect(findCommercialAccountByName(api.db, api.accountId, ' AAA Oregon ')).toEqual({ id: aaa.id, name: 'AAA Oregon' })
    expect(findCommercialAccountByName(api.db, api.accountId, 'Police')).toBeUndefined()
    expect(findCommercialAccountByName(api.db, rival, 'AAA Oregon')).toBeUndefined()
  })
})

describe('jobs and their commercial account', () => {
  test('POST /jobs takes commercial_account_id; every representation of the job shows commercial_account', async () => {
    const aaa = make({ name: 'AAA Oregon' })
    const created = await newJob({ commercial_account_id: aaa.id })
    expect(created.status).toBe(201)
    expect(created.body.commercial_account).toEqual({ id: aaa.id, name: 'AAA Oregon' })
    expect((await get(`/api/v1/jobs/${created.body.id}`)).body.commercial_account).toEqual({ id: aaa.id, name: 'AAA Oregon' })
    const plain = await newJob()
    expect(plain.body.commercial_account).toBeNull()
    const list = (await get('/api/v1/jobs')).body.data
    expect(list.map((j: any) => [j.id, j.commercial_account])).toEqual([[plain.body.id, null], [created.body.id, { id: aaa.id, name: 'AAA Oregon' }]])
    // A rename shows on the job at once.
    updateCommercialAccount(operator(), aaa.id, { name: 'AAA Oregon & Idaho', kind: 'motor_club', contacts: [] })
    expect((await get(`/api/v1/jobs/${created.body.id}`)).body.commercial_account.name).toBe('AAA Oregon & Idaho')
  })

  test('PATCH sets, changes and clears it (null), each a job.updated naming commercial_account_id; the same value writes nothing', async () => {
    const aaa = make({ name: 'AAA' })
    const police = make({ name: 'Police', kind: 'police' })
    const { body: job } = await newJob()
    const patch = async (body: unknown) => {
      const res = await api.request('PATCH', `/api/v1/jobs/${job.id}`, { key, body })
      expect(res.status).toBe(200)
      return (await res.json()) as any
    }
    expect((await patch({ commercial_account_id: aaa.id })).commercial_account).toEqual({ id: aaa.id, name: 'AAA' })
    expect((await patch({ commercial_account_id: police.id, urgency: 'urgent' })).commercial_account).toEqual({ id: police.id, name: 'Police' })
    expect((await get(`/api/v1/jobs/${job.id}`)).body.commercial_account).toEqual({ id: police.id, name: 'Police' })
    expect((await patch({ commercial_account_id: police.id })).commercial_account.id).toBe(police.id)
    expect((await patch({ commercial_account_id: null })).commercial_account).toBeNull()
    const events = (await get(`/api/v1/jobs/${job.id}/events`)).body.data.filter((e: any) => e.type === 'job.updated').map((e: any) => e.detail.fields)
    expect(events).toEqual([['commercial_account_id'], ['urgency', 'commercial_account_id'], ['commercial_account_id']])
  })

  test('an id that names no commercial account of this account is 422 on commercial_account_id, in POST and PATCH, and writes nothing', async () => {
    const theirs = make({ name: 'Theirs' }, api.account('Rival Towing'))
    const { body: job } = await newJob()
    const before = databaseFingerprint(api.db)
    for (const id of ['cac_01ZZZZZZZZZZZZZZZZZZZZZZZZ', theirs.id, '', job.id]) {
      const post = await expectError((await newJob({ commercial_account_id: id })).res, 422, 'validation_failed')
      expect(post.details.fields).toEqual([{ path: 'commercial_account_id', message: "names no commercial account in this account's directory (GET /accounts lists them)" }])
      const patch = await expectError(await api.request('PATCH', `/api/v1/jobs/${job.id}`, { key, body: { commercial_account_id: id, urgency: 'urgent' } }), 422, 'validation_failed')
      expect(patch.details.fields.map((f: any) => f.path)).toEqual(['commercial_account_id'])
    }
    await expectError((await newJob({ commercial_account_id: 42 })).res, 422, 'validation_failed')
    expect(databaseFingerprint(api.db)).toEqual(before)
  })

  test('a key limited to one site may name any entry of the account\'s directory', async () => {
    const south = addSite(api.db, api.clock, { accountId: api.accountId, name: 'South yard' }).id
    const aaa = make({ name: 'AAA' })
    const created = await newJob({ commercial_account_id: aaa.id }, api.key(['jobs:write', 'jobs:read'], { sites: [south] }))
    expect(created.status).toBe(201)
    expect(created.body.commercial_account).toEqual({ id: aaa.id, name: 'AAA' })
  })
})

import { afterEach, describe, expect, test } from 'bun:test'
import { expectError, startTestApi, TEST_ENGINE, whileWriteLockHeld, type TestApi } from '../../test/kit'
import { createAccount } from './create-account'
import { revokeKey } from './revoke-key'
import { listSites } from './account.queries'
import { hashApiKey } from './api-key'
import { updateAccount } from './update-account'
import { addSite } from './add-site'

let api: TestApi
afterEach(() => api?.close())

describe('GET /api/v1/me', () => {
  test('describes the key: account, sites and scopes', async () => {
    api = startTestApi()
    const key = api.key(['jobs:read', 'roster:read'])
    const res = await api.request('GET', '/api/v1/me', { key })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ object: 'key', account: { id: api.accountId, name: 'My towing company' }, scopes: ['jobs:read', 'roster:read'], site_restricted: false })
    expect(body.id).toStartWith('key_')
    expect(body.sites).toEqual([{ id: expect.stringMatching(/^site_/), name: 'Main yard' }])
    expect(res.headers.get('request-id')).toStartWith('req_')
  })

  test('a site-limited key sees only its sites', async () => {
    api = startTestApi()
    const sites = listSites(api.db, api.accountId)
    const key = api.key(['jobs:read'], { sites: [sites[0]!.id] })
    const body = await (await api.request('GET', '/api/v1/me', { key })).json()
    expect(body.site_restricted).toBe(true)
    expect(body.sites.map((s: any) => s.id)).toEqual([sites[0]!.id])
  })

  test('a key of another account answers for that account only', async () => {
    api = startTestApi()
    const other = createAccount(api.db, api.clock, { name: 'Other Towing' }).account.id
    const body = await (await api.request('GET', '/api/v1/me', { key: api.key(['jobs:read'], { accountId: other }) })).json()
    expect(body.account).toEqual({ id: other, name: 'Other Towing' })
  })

  test('a change to the account or its sites made in this process shows from the next request', async () => {
    api = startTestApi()
    const key = api.key(['jobs:read'])
    expect((await (await api.request('GET', '/api/v1/me', { key })).json()).account.name).toBe('My towing company')
    updateAccount(api.contexts.forOperator(api.accountId), { name: 'Ann Lee Towing' })
    addSite(api.db, api.clock, { accountId: api.accountId, name: 'North yard' })
    const body = await (await api.request('GET', '/api/v1/me', { key })).json()
    expect({ name: body.account.name, sites: body.sites.map((s: any) => s.name) }).toEqual({ name: 'Ann Lee Towing', sites: ['Main yard', 'North yard'] })
  })

  test('keys are stored as a SHA-256 hash and a short prefix, never in clear', async () => {
    api = startTestApi()
    const key = api.key(['jobs:read'])
    const rows = api.db.$client.query('SELECT * FROM api_keys').all() as any[]
    expect(JSON.stringify(rows)).not.toContain(key)
    expect(rows[0].hash).toBe(hashApiKey(key))
    expect(key).toStartWith(rows[0].prefix)
    expect(rows[0].prefix.length).toBeLessThan(16)
  })
})

describe('authentication', () => {
  test('no key: 401 unauthorized with WWW-Authenticate: Bearer', async () => {
    api = startTestApi()
    const res = await api.request('GET', '/api/v1/me')
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
    await expectError(res, 401, 'unauthorized')
  })

  test.each([
    ['a non-bearer scheme', 'Basic dXNlcjpwYXNz'],
    ['a malformed key', 'Bearer not-a-key'],
    ['an unknown key', 'Bearer svc_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('%s: 401 unauthorized', async (_, header) => {
    api = startTestApi()
    const res = await api.request('GET', '/api/v1/me', { headers: { authorization: header } })
    expect(res.headers.get('www-authenticate')).toContain('Bearer')
    await expectError(res, 401, 'unauthorized')
  })

  test('revocation holds from the next request', async () => {
    api = startTestApi()
    const key = api.key(['jobs:read'])
    expect((await api.request('GET', '/api/v1/me', { key })).status).toBe(200)
    const { id } = api.db.$client.query('SELECT id FROM api_keys').get() as { id: string }
    expect(revokeKey(api.contexts.forOperator(api.accountId), id).alreadyRevoked).toBe(false)
    await expectError(await api.request('GET', '/api/v1/me', { key }), 401, 'unauthorized')
  })

  test('a key without the scope: 403 insufficient_scope naming the scope', async () => {
    api = startTestApi()
    const err = await expectError(await api.request('GET', '/api/v1/me', { key: api.key(['roster:read']) }), 403, 'insufficient_scope')
    expect(err.details.required_scope).toBe('jobs:read')
  })
})

describe('last used', () => {
  // SQLite: another connection's long write (an import) holds the one write lock.
  test.skipIf(TEST_ENGINE === 'postgres')("a key's last-used time never waits for another connection's write: the request is answered, the time written a second later", async () => {
    api = startTestApi()
    const key = api.key(['jobs:read'])
    const lastUsed = () => (api.db.$client.query('SELECT last_used_at AS t FROM api_keys').get() as { t: number | null }).t
    await whileWriteLockHeld(api.db, async () => {
      const started = performance.now()
      expect((await api.request('GET', '/api/v1/me', { key })).status).toBe(200)
      // Waiting for the lock would have been the busy timeout (5 s), then a 500.
      expect(performance.now() - started).toBeLessThan(2_000)
    })
    expect(lastUsed()).toBeNull()
    api.clock.advance(1_000)
    expect((await api.request('GET', '/api/v1/me', { key })).status).toBe(200)
    expect(lastUsed()).toBe(api.clock.now())
  })
})

describe('rate limits', () => {
  test('reads over the per-minute limit get 429 with Retry-After, and the quota refills', async () => {
    api = startTestApi({ TOWLINE_RATE_LIMIT_READS: '3' })
    const key = api.key(['jobs:read'])
    const remaining: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await api.request('GET', '/api/v1/me', { key })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-limit')).toBe('3')
      remaining.push(res.headers.get('x-ratelimit-remaining')!)
    }
    expect(remaining).toEqual(['2', '1', '0'])
    const limited = await api.request('GET', '/api/v1/me', { key })
    expect(limited.headers.get('retry-after')).toBe('20')
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0')
    const err = await expectError(limited, 429, 'rate_limited')
    expect(err.details.retry_after_seconds).toBe(20)
    api.clock.advance(20_000)
    expect((await api.request('GET', '/api/v1/me', { key })).status).toBe(200)
  })

  test('HEAD is a read like GET: authenticated, counted against the read quota, answered with the same headers and no body', async () => {
    api = startTestApi({ TOWLINE_RATE_LIMIT_READS: '2' })
    const key = api.key(['jobs:read'])
    const head = (k?: string) => api.raw(new Request('http://localhost/api/v1/me', { method: 'HEAD', headers: k ? { authorization: `Bearer ${k}` } : {} }))
    const anonymous = await head()
    expect({ status: anonymous.status, challenge: anonymous.headers.get('www-authenticate') }).toEqual({ status: 401, challenge: 'Bearer realm="towline"' })
    const res = await head(key)
    expect({ status: res.status, body: await res.text(), remaining: res.headers.get('x-ratelimit-remaining'), type: res.headers.get('content-type') })
      .toEqual({ status: 200, body: '', remaining: '1', type: 'application/json;charset=utf-8' })
    expect(res.headers.get('request-id')).toStartWith('req_')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect((await api.request('GET', '/api/v1/me', { key })).headers.get('x-ratelimit-remaining')).toBe('0')
    expect((await head(key)).status).toBe(429)
  })

  test('each key has its own quota', async () => {
    api = startTestApi({ TOWLINE_RATE_LIMIT_READS: '1' })
    const a = api.key(['jobs:read'])
    const b = api.key(['jobs:read'])
    expect((await api.request('GET', '/api/v1/me', { key: a })).status).toBe(200)
    expect((await api.request('GET', '/api/v1/me', { key: a })).status).toBe(429)
    expect((await api.request('GET', '/api/v1/me', { key: b })).status).toBe(200)
  })
})

describe('every response', () => {
  test('unknown routes answer 404 not_found in the error shape, with a Request-Id', async () => {
    api = startTestApi()
    const res = await api.request('GET', '/api/v1/nothing-here')
    expect(res.headers.get('request-id')).toBeTruthy()
    await expectError(res, 404, 'not_found')
  })

  test('a caller-supplied Request-Id is echoed back', async () => {
    api = startTestApi()
    const res = await api.request('GET', '/healthz', { headers: { 'request-id': 'trace-123' } })
    expect(res.headers.get('request-id')).toBe('trace-123')
  })
})

describe('crashes', () => {
  test('an internal failure answers 500 internal_error without internal text', async () => {
    api = startTestApi()
    const key = api.key(['jobs:read'])
    expect((await api.request('GET', '/api/v1/jobs', { key })).status).toBe(200)
    api.db.$client.exec('DROP TABLE job_events')
    api.db.$client.exec('ALTER TABLE jobs RENAME TO jobs_gone')
    const res = await api.request('GET', '/api/v1/jobs', { key })
    const err = await expectError(res, 500, 'internal_error')
    expect(err.message).not.toMatch(/jobs|sqlite|table|SQL/i)
    expect(JSON.stringify(err.details)).not.toMatch(/jobs_gone|no such table/i)
  })
})

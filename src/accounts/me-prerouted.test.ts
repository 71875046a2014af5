/**
 * GET /api/v1/me without a query is answered before Elysia routes it (the fetch handler's
 * pre-routed table); with a query (`?`) it goes through the router like every other route.
 * Both must answer alike in every case: the same body, the same headers, the same errors, one
 * count against the key's limit, one access-log line naming the route.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { createLogger } from '../platform/log'

let api: TestApi
let lines: string[]
beforeEach(() => {
  lines = []
  api = startTestApi({ TOWLINE_RATE_LIMIT_READS: '5' }, { logger: createLogger('info', { write: (line: string) => { lines.push(line) } }) })
})
afterEach(() => api.close())

const PRE = '/api/v1/me'
const ROUTED = '/api/v1/me?'
async function get(path: string, authorization?: string, method = 'GET') {
  const res = await api.raw(new Request(`http://towline.test${path}`, { method, headers: authorization ? { authorization } : {} }))
  const headers = Object.fromEntries([...res.headers.entries()].filter(([k]) => !['request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset'].includes(k)))
  return { status: res.status, headers, body: await res.text(), requestId: res.headers.get('request-id'), remaining: res.headers.get('x-ratelimit-remaining') }
}

test('the pre-routed answer and the routed one are the same, for a key and for every refusal', async () => {
  const key = `Bearer ${api.key('all')}`
  const unscoped = `Bearer ${api.key(['webhooks:manage'])}`
  for (const auth of [key, undefined, 'Bearer svc_live_notakeyatall', 'Basic Zm9vOmJhcg==', unscoped]) {
    const a = await get(PRE, auth)
    const b = await get(ROUTED, auth)
    expect({ status: a.status, headers: a.headers, body: a.body }).toEqual({ status: b.status, headers: b.headers, body: b.body })
    expect(a.requestId).toMatch(/^req_/)
  }
  expect((await get(PRE, key)).status).toBe(200)
  expect(JSON.parse((await get(PRE, key)).body)).toMatchObject({ object: 'key', scopes: expect.any(Array) })
})

test('each pre-routed request counts once against the key\'s reads, and the limit refuses it as the route does (429)', async () => {
  const key = `Bearer ${api.key('all')}`
  const seen = []
  for (let i = 0; i < 5; i++) seen.push((await get(i % 2 ? ROUTED : PRE, key)).remaining)
  expect(seen).toEqual(['4', '3', '2', '1', '0'])
  const a = await get(PRE, key)
  const b = await get(ROUTED, key)
  expect(a.status).toBe(429)
  expect({ status: a.status, headers: a.headers, body: a.body }).toEqual({ status: b.status, headers: b.headers, body: b.body })
})

test('a pre-routed request writes one access-log line with its route, key and request id; HEAD still goes through the router', async () => {
  const key = `Bearer ${api.key('all')}`
  const a = await get(PRE, key)
  const line = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.request_id === a.requestId)
  expect(line).toHaveLength(1)
  expect(line[0]).toMatchObject({ method: 'GET', route: '/api/v1/me', status: 200, key_id: expect.stringMatching(/^key_/) })
  const head = await get(PRE, key, 'HEAD')
  expect({ status: head.status, body: head.body }).toEqual({ status: 200, body: '' })
})

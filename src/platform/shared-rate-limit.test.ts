/**
 * Two instances on one PostgreSQL database share each API key's limit: requests spread over
 * both are counted together, and the minute refills the same bucket for both.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { call, NEW_JOB } from '../../test/jobs-helpers'
import { pgCluster } from '../../test/pg'
import { UNKNOWN_DEVICES_PER_MINUTE } from '../units/unit.routes'

let a: TestApi
let b: TestApi
beforeAll(() => {
  const url = pgCluster().createDatabase()
  const limits = { TOWLINE_RATE_LIMIT_WRITES: '4', TOWLINE_RATE_LIMIT_READS: '1000' }
  a = startTestApi({ ...limits, TOWLINE_DB: url })
  // The second instance: the same database and link key, its own process state.
  b = startTestApi({ ...limits, TOWLINE_DB: url, TOWLINE_LINK_KEY_FILE: a.dbEnv.TOWLINE_LINK_KEY_FILE })
})
afterAll(() => { a?.close(); b?.close() })

describe('rate limits across instances (PostgreSQL)', () => {
  test("a key's writes through two instances count against one limit; 429 on both once it is spent, both refill together", async () => {
    const key = a.key(['jobs:read', 'jobs:write'])
    const statuses: number[] = []
    for (const api of [a, b, a, b]) statuses.push((await call(api, key, 'POST', '/jobs', NEW_JOB)).status)
    expect(statuses).toEqual([201, 201, 201, 201])
    for (const api of [a, b]) {
      const res = await call(api, key, 'POST', '/jobs', NEW_JOB)
      expect({ status: res.status, code: res.body.error?.code, limit: res.headers.get('x-ratelimit-limit'), remaining: res.headers.get('x-ratelimit-remaining') })
        .toEqual({ status: 429, code: 'rate_limited', limit: '4', remaining: '0' })
      expect(Number(res.headers.get('retry-after'))).toBe(15)
    }
    // Four jobs, not six: the refused writes wrote nothing.
    expect((await call(a, key, 'GET', '/jobs?limit=100')).body.data).toHaveLength(4)
    // 15 s later one write fits again, on either instance (their clocks moved together).
    a.clock.advance(15_000)
    b.clock.ms = a.clock.ms
    expect((await call(b, key, 'POST', '/jobs', NEW_JOB)).status).toBe(201)
    expect((await call(a, key, 'POST', '/jobs', NEW_JOB)).status).toBe(429)
  })

  test('another key has its own limit', async () => {
    const key = a.key(['jobs:read', 'jobs:write'])
    expect((await call(b, key, 'POST', '/jobs', NEW_JOB)).status).toBe(201)
  })

  test("an address guessing device ids is counted across instances too: past the minute's limit both answer 429", async () => {
    const from = { address: '203.0.113.9' }
    const ping = (api: TestApi, i: number) => api.raw(new Request(`http://localhost/osmand?id=guess-${i}&lat=1&lon=1`), from)
    const statuses: number[] = []
    for (let i = 0; i < UNKNOWN_DEVICES_PER_MINUTE; i++) statuses.push((await ping(i % 2 ? b : a, i)).status)
    expect(statuses.every((s) => s === 404)).toBe(true)
    expect((await ping(a, 100)).status).toBe(429)
    expect((await ping(b, 101)).status).toBe(429)
  })
})

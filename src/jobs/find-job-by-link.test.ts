/**
 * What a tracking or driver link leads to: its job while it is live; "gone" with the reason once
 * it was replaced, taken back (reassign, unassign) or expired after the job finished; nothing for
 * a token that never was one. Driver links taken back are recorded in the same transaction.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, makeJob, makeUnit, NO_LIMITS, REASON } from '../../test/jobs-helpers'
import { closeDatabase, openDatabase } from '../db/client'
import { randomBase62 } from '../platform/ids'
import { findJobByLink, type GoneReason } from './find-job-by-link'
import { driverUrlOf } from './job-links'
import { replaceTrackingLink } from './replace-tracking-link'

let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterAll(() => api.close())

const DAY = 86_400_000
const WEEK = 7 * DAY
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')
const trackingToken = (url: string) => /\/t\/([0-9A-Za-z]{24})$/.exec(url)![1]!
/** The driver's token the job holds now, as the texted link carries it. */
function driverToken(jobId: string): string {
  const row = api.db.$client.query('SELECT driver_token_sealed FROM jobs WHERE id = ?').get(jobId) as { driver_token_sealed: string | null }
  const url = driverUrlOf(api.links, { driverTokenSealed: row.driver_token_sealed })
  return /\/d\/([0-9A-Za-z]{24})$/.exec(url!)![1]!
}
const find = (kind: 'tracking' | 'driver', token: string, trackingLinkMs = WEEK) => {
  const found = findJobByLink(api.db, kind, token, { nowMs: api.clock.now(), trackingLinkMs })
  if (found && 'job' in found) return { job: found.job.id }
  return found
}
const retiredOf = (jobId: string) => api.db.$client.query('SELECT kind, reason, token_hash, retired_at FROM retired_links WHERE job_id = ? ORDER BY retired_at').all(jobId) as any[]
const gone = (reason: GoneReason, jobId: string) => ({ gone: reason, jobId, accountId: api.accountId })

describe('findJobByLink', () => {
  test('a live tracking or driver link leads to its job; each kind only by its own kind', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const t = trackingToken(job.tracking_url)
    const d = driverToken(job.id)
    expect(find('tracking', t)).toEqual({ job: job.id })
    expect(find('driver', d)).toEqual({ job: job.id })
    expect(find('driver', t)).toBeNull()
    expect(find('tracking', d)).toBeNull()
  })

  test('a well-formed token that was never minted is null', () => {
    for (let i = 0; i < 5; i++) {
      const token = randomBase62(24)
      expect(find('tracking', token)).toBeNull()
      expect(find('driver', token)).toBeNull()
    }
  })

  test('a malformed token is null without touching the database (a closed one answers it)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'towline-closed-'))
    try {
      const closed = openDatabase(join(dir, 'closed.db'))
      closeDatabase(closed)
      const malformed = ['', 'abc', 'x'.repeat(23), 'x'.repeat(25), `${'a'.repeat(23)}-`, `${'a'.repeat(23)}é`, `${'a'.repeat(24)}\n`, '../../etc/passwd', `${'A'.repeat(22)}%2F`]
      for (const token of malformed) {
        expect({ token, found: findJobByLink(closed, 'tracking', token, { nowMs: 0, trackingLinkMs: WEEK }) }).toEqual({ token, found: null })
        expect({ token, found: findJobByLink(closed, 'driver', token, { nowMs: 0, trackingLinkMs: WEEK }) }).toEqual({ token, found: null })
      }
      // A well-formed one does go to the database, which proves the check above never reached it.
      expect(() => findJobByLink(closed, 'tracking', randomBase62(24), { nowMs: 0, trackingLinkMs: WEEK })).toThrow()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a replaced tracking link is gone (replaced); the new one leads to the job', async () => {
    const job = await makeJob(api, key)
    const old = trackingToken(job.tracking_url)
    replaceTrackingLink(api.contexts.forDispatcher({ userId: 'usr_d', role: 'dispatcher', accountId: api.accountId }), job.id)
    const fresh = trackingToken((await call(api, key, 'GET', `/jobs/${job.id}`)).body.tracking_url)
    expect(find('tracking', old)).toEqual(gone('replaced', job.id))
    expect(find('tracking', fresh)).toEqual({ job: job.id })
    expect(find('driver', old)).toBeNull()
  })
})

describe('driver links taken back', () => {
  test('reassigning retires the previous driver\'s link (reassigned) in the same change; the new driver\'s is live', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const first = driverToken(job.id)
    api.clock.advance(1000)
    const other = makeUnit(api)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: other.id })).status).toBe(200)
    const second = driverToken(job.id)
    expect(second).not.toBe(first)
    expect(retiredOf(job.id)).toEqual([{ kind: 'driver', reason: 'reassigned', token_hash: sha256(first), retired_at: api.clock.now() }])
    expect(find('driver', first)).toEqual(gone('reassigned', job.id))
    expect(find('driver', second)).toEqual({ job: job.id })
    // The customer's link is untouched.
    expect(find('tracking', trackingToken(job.tracking_url))).toEqual({ job: job.id })
  })

  test('unassigning retires the driver\'s link (unassigned)', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const d = driverToken(job.id)
    expect((await call(api, key, 'DELETE', `/jobs/${job.id}/assign`)).status).toBe(200)
    expect(retiredOf(job.id)).toEqual([{ kind: 'driver', reason: 'unassigned', token_hash: sha256(d), retired_at: api.clock.now() }])
    expect(find('driver', d)).toEqual(gone('unassigned', job.id))
    // Unassigning again (no unit) is a no-op and records nothing more.
    expect((await call(api, key, 'DELETE', `/jobs/${job.id}/assign`)).status).toBe(200)
    expect(retiredOf(job.id)).toHaveLength(1)
  })

  test('a reopened job dispatched again to the unit that kept it gets a fresh link; the old one is gone (replaced)', async () => {
    const { job } = await bringTo(api, key, 'confirmed', { withUnit: true })
    const before = retiredOf(job.id).length
    const kept = driverToken(job.id)
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: job.unit.id })).status).toBe(200)
    const fresh = driverToken(job.id)
    expect(fresh).not.toBe(kept)
    expect(retiredOf(job.id).slice(before)).toEqual([expect.objectContaining({ kind: 'driver', reason: 'replaced', token_hash: sha256(kept) })])
    expect(find('driver', kept)).toEqual(gone('replaced', job.id))
  })

  test('a refused unassign (a finished job keeps its unit) retires nothing', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const d = driverToken(job.id)
    expect((await call(api, key, 'DELETE', `/jobs/${job.id}/assign`)).status).toBe(409)
    expect(retiredOf(job.id)).toEqual([])
    expect(find('driver', d)).toEqual({ job: job.id })
  })
})

describe('links of finished jobs expire', () => {
  test('the driver link 24 hours after the job finished, the tracking link after 7 days (or the setting)', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const t = trackingToken(job.tracking_url)
    const d = driverToken(job.id)
    api.clock.advance(DAY)
    expect(find('driver', d)).toEqual({ job: job.id })
    api.clock.advance(1)
    expect(find('driver', d)).toEqual(gone('expired', job.id))
    expect(find('tracking', t)).toEqual({ job: job.id })
    expect(find('tracking', t, 2 * DAY)).toEqual({ job: job.id })
    api.clock.advance(DAY)
    expect(find('tracking', t, 2 * DAY)).toEqual(gone('expired', job.id))
    api.clock.advance(WEEK - 2 * DAY - 1)
    expect(find('tracking', t)).toEqual({ job: job.id })
    api.clock.advance(1)
    expect(find('tracking', t)).toEqual(gone('expired', job.id))
  })

  test('cancelled and goa jobs finish too; an unfinished job\'s links never expire', async () => {
    const { job: cancelled } = await bringTo(api, key, 'cancelled')
    const { job: running } = await bringTo(api, key, 'en_route')
    api.clock.advance(WEEK + 1)
    expect(find('tracking', trackingToken(cancelled.tracking_url))).toEqual(gone('expired', cancelled.id))
    expect(find('tracking', trackingToken(running.tracking_url))).toEqual({ job: running.id })
    expect(find('driver', driverToken(running.id))).toEqual({ job: running.id })
  })

  test('a reopened job counts from its latest finish, not the first run\'s (write-once) milestones', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const d = driverToken(job.id)
    api.clock.advance(3 * DAY)
    expect(find('driver', d)).toEqual(gone('expired', job.id))
    expect((await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' })).status).toBe(200)
    // Reopened: live again, whatever the time since the first finish.
    expect(find('driver', d)).toEqual({ job: job.id })
    api.clock.advance(DAY)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'cancelled', cancel_reason: REASON })).status).toBe(200)
    api.clock.advance(DAY - 1)
    expect(find('driver', d)).toEqual({ job: job.id })
    api.clock.advance(2)
    expect(find('driver', d)).toEqual(gone('expired', job.id))
  })
})

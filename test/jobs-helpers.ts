/**
 * Shared helpers of the jobs tests: make a job through the API, bring it to a status through
 * the API, and take "nothing was written" snapshots (the job, its timeline and the outbox).
 */
import { expect } from 'bun:test'
import type { TestApi } from './kit'
import { addUnit } from '../src/units/add-unit'
import { archiveJob } from '../src/jobs/archive-job'

/** Generous limits for files that make hundreds of requests with one key. */
export const NO_LIMITS = { TOWLINE_RATE_LIMIT_READS: '1000000', TOWLINE_RATE_LIMIT_WRITES: '1000000' }

export const NEW_JOB = {
  source: 'motor_club', payer_type: 'motor_club', service_type: 'flatbed', urgency: 'urgent',
  customer: { name: 'Ann Lee', phone: '(503) 555-0142', sms_consent: true },
  vehicle: { year: '2019', make: 'Honda', model: 'Civic', drive_type: 'fwd' },
  pickup: { location: 'I-5 N at exit 299B, right shoulder' },
  destination: "Joe's Garage, 1200 SE Grand Ave",
}

/** Sends a request and returns status, parsed body and headers. */
export async function call(api: TestApi, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await api.request(method, `/api/v1${path}`, { key, body, headers })
  const text = await res.text()
  return { status: res.status, body: (text ? JSON.parse(text) : null) as any, headers: res.headers }
}

/** Creates a job through POST /jobs (201 expected) and returns its body. */
export async function makeJob(api: TestApi, key: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await call(api, key, 'POST', '/jobs', { ...NEW_JOB, ...overrides })
  expect({ create: res.status, error: res.body?.error?.code }).toEqual({ create: 201, error: undefined })
  return res.body
}

let units = 0
/** Adds a unit (truck and driver) to the account; `phone` is the driver's. */
export function makeUnit(api: TestApi, opts: { name?: string; driverPhone?: string; accountId?: string } = {}) {
  units++
  return addUnit(api.db, api.clock, {
    accountId: opts.accountId ?? api.accountId,
    name: opts.name ?? `Truck ${units}`,
    driverName: `Driver ${units}`,
    driverPhone: opts.driverPhone ?? `+1503555${String(1000 + units).slice(-4)}`,
  })
}

/** Sends a write that must succeed and returns the job it answers with. */
async function ok(api: TestApi, key: string, method: string, path: string, body?: unknown) {
  const res = await call(api, key, method, path, body)
  expect({ step: `${method} ${path} ${JSON.stringify(body ?? null)}`, status: res.status, error: res.body?.error })
    .toEqual({ step: `${method} ${path} ${JSON.stringify(body ?? null)}`, status: 200, error: undefined })
  return res.body
}

export const REASON = 'Customer found another ride'

/**
 * Brings a fresh job to `status` through the API only: POST /jobs (pending or confirmed),
 * POST assign (dispatched), PATCH forward, PATCH cancelled/goa. With `withUnit`, a confirmed
 * job is brought there the only way the API allows a confirmed job to hold a unit: assigned,
 * cancelled, then reopened. The unit belongs to `accountId` (the default account unless given). Returns the job as the last step answered, and the unit if any.
 */
export async function bringTo(api: TestApi, key: string, status: string, opts: { withUnit?: boolean; job?: Record<string, unknown>; accountId?: string } = {}) {
  const job = await makeJob(api, key, { ...opts.job, ...(status === 'pending' ? { status: 'pending' } : {}) })
  const path = `/jobs/${job.id}`
  if (status === 'pending') return { job, unit: null }
  if (status === 'confirmed' && !opts.withUnit) return { job, unit: null }
  if (status === 'cancelled' && !opts.withUnit) return { job: await ok(api, key, 'PATCH', path, { status: 'cancelled', cancel_reason: REASON }), unit: null }
  if (status === 'goa' && !opts.withUnit) return { job: await ok(api, key, 'PATCH', path, { status: 'goa' }), unit: null }
  const unit = makeUnit(api, { accountId: opts.accountId })
  let current = await ok(api, key, 'POST', `${path}/assign`, { unit_id: unit.id })
  if (status === 'confirmed') {
    await ok(api, key, 'PATCH', path, { status: 'cancelled', cancel_reason: REASON })
    current = await ok(api, key, 'POST', `${path}/reopen`, { reason: 'Customer called back' })
  } else if (status !== 'dispatched') {
    current = await ok(api, key, 'PATCH', path, status === 'cancelled' ? { status, cancel_reason: REASON } : { status })
  }
  expect(current.status).toBe(status)
  return { job: current, unit }
}

/** Rows of the texts outbox for a job, oldest first. */
export function textsOf(api: TestApi, jobId: string): any[] {
  return api.db.$client.query('SELECT * FROM texts WHERE job_id = ? ORDER BY id').all(jobId) as any[]
}

/** Rows written to the texts outbox after the first `countBefore` (insertion order). */
export function textsSince(api: TestApi, countBefore: number): any[] {
  return api.db.$client.query('SELECT * FROM texts ORDER BY rowid LIMIT -1 OFFSET ?').all(countBefore) as any[]
}

/** Number of rows in a table (for "nothing written"). */
export function countRows(api: TestApi, table: 'texts' | 'jobs' | 'job_events' | 'job_notes' | 'idempotency_keys'): number {
  return (api.db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
}

/** Everything a write could change, read back through the API (and the outbox count). */
export async function snapshot(api: TestApi, key: string, jobId: string) {
  const job = await call(api, key, 'GET', `/jobs/${jobId}`)
  const events = await call(api, key, 'GET', `/jobs/${jobId}/events?limit=100`)
  expect(job.status).toBe(200)
  expect(events.status).toBe(200)
  return { job: job.body, events: events.body.data as any[], texts: countRows(api, 'texts'), jobs: countRows(api, 'jobs'), notes: countRows(api, 'job_notes') }
}

/** Asserts that nothing was written since `before`: same job (updated_at included), same timeline, same outbox. */
export async function expectNothingWritten(api: TestApi, key: string, before: Awaited<ReturnType<typeof snapshot>>) {
  const after = await snapshot(api, key, before.job.id)
  expect(after).toEqual(before)
}

/** Asserts the error shape (status, code, database_message) of a `call` result and returns the error. */
export function expectCallError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code })
  expect(typeof res.body.error.message).toBe('string')
  expect(res.body.error.details.database_message).toBe(res.body.error.message)
  return res.body.error as { code: string; message: string; details: Record<string, any> }
}

/** Events appended since a snapshot's timeline. */
export async function newEvents(api: TestApi, key: string, jobId: string, before: any[]): Promise<any[]> {
  const events = (await call(api, key, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data as any[]
  expect(events.slice(0, before.length)).toEqual(before)
  return events.slice(before.length)
}

/** Archives a job the way the dashboard does (archiving is not in the API). */
export function archive(api: TestApi, jobId: string, accountId = api.accountId) {
  return archiveJob(api.contexts.forDispatcher({ userId: 'usr_test', role: 'dispatcher', accountId }), jobId)
}

/** The clock's "now" as the API prints it. */
export const nowIso = (api: TestApi) => new Date(api.clock.now()).toISOString()

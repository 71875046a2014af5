/**
 * A job's whole life against the compiled binary: created, assigned, driven to completion,
 * reopened, completed again; with the operator commands an integrator's ops team would use.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string
let unit: { id: string; device_id: string }

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  unit = JSON.parse(cli(folder.bin, ['units', 'add', '--name', 'Truck 7', '--driver-name', 'Sam', '--driver-phone', '503-555-0107', '--json'], { cwd: folder.dir }).stdout)
})
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(server.api + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() as any, headers: res.headers }
}

const NEW_JOB = {
  external_ref: 'AAA-778812', source: 'motor_club', payer_type: 'motor_club', service_type: 'flatbed', urgency: 'urgent',
  customer: { name: 'Ann Lee', phone: '(503) 555-0142', sms_consent: true },
  vehicle: { year: '2019', make: 'Honda', model: 'Civic', drive_type: 'fwd' },
  pickup: { location: 'I-5 N at exit 299B, right shoulder' }, destination: "Joe's Garage, 1200 SE Grand Ave",
}

describe('a job from create to completed, reopened and completed again', () => {
  test('runs the whole lifecycle through the API', async () => {
    const created = await call('POST', '/jobs', NEW_JOB, { 'idempotency-key': 'create-1' })
    expect(created.status).toBe(201)
    const job = created.body
    expect(job).toMatchObject({ object: 'job', status: 'confirmed', external_ref: 'AAA-778812', customer: { phone: '+15035550142', sms_consent: true }, reopen_count: 0, unit: null })
    expect(job.tracking_url).toMatch(/^http:\/\/[^/]+\/t\/[0-9A-Za-z]{20,}$/)

    const replay = await call('POST', '/jobs', NEW_JOB, { 'idempotency-key': 'create-1' })
    expect(replay.status).toBe(201)
    expect(replay.body.id).toBe(job.id)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')

    const assigned = await call('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
    expect(assigned.status).toBe(200)
    expect(assigned.body).toMatchObject({ status: 'dispatched', unit: { id: unit.id, name: 'Truck 7' } })

    for (const status of ['en_route', 'on_scene', 'towing', 'at_destination', 'completed']) {
      const r = await call('PATCH', `/jobs/${job.id}`, { status })
      expect({ status, code: r.status }).toEqual({ status, code: 200 })
    }
    const done = (await call('GET', `/jobs/${job.id}`)).body
    expect(done.status).toBe('completed')
    const first = done.timestamps
    expect(first.completed_at).toBeTruthy()
    expect(first.closed_at).toBe(first.completed_at)

    const refused = await call('PATCH', `/jobs/${job.id}`, { status: 'en_route' })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: 'job_transition_refused', details: { from: 'completed', to: 'en_route' } })

    const reopened = await call('POST', `/jobs/${job.id}/reopen`, { reason: 'Car died again at the garage' })
    expect(reopened.status).toBe(200)
    expect(reopened.body).toMatchObject({ status: 'confirmed', reopen_count: 1, cancel_reason: null, rating: null })
    expect(reopened.body.timestamps.reopened_at).toBeTruthy()

    for (const status of ['dispatched', 'en_route', 'on_scene', 'completed']) {
      const r = await call('PATCH', `/jobs/${job.id}`, { status })
      expect({ status, code: r.status, err: r.body.error?.code }).toEqual({ status, code: 200, err: undefined })
    }
    const again = (await call('GET', `/jobs/${job.id}`)).body
    expect(again).toMatchObject({ status: 'completed', reopen_count: 1 })
    expect(again.timestamps.completed_at).toBe(first.completed_at)
    expect(again.timestamps.closed_at).toBe(first.closed_at)
    expect(again.timestamps.dispatched_at).toBe(first.dispatched_at)

    const events = (await call('GET', `/jobs/${job.id}/events?limit=100`)).body.data
    const types = events.map((e: any) => e.type)
    expect(types[0]).toBe('job.created')
    const reopenAt = types.indexOf('job.reopened')
    expect(events[reopenAt]).toMatchObject({ from: 'completed', to: 'confirmed', actor: 'system', detail: { reason: 'Car died again at the garage', reopen_count: 1 } })
    expect(events[reopenAt + 1]).toMatchObject({ type: 'job.status_changed', from: 'completed', to: 'confirmed' })
    expect(events.map((e: any) => e.sequence)).toEqual(events.map((_: unknown, i: number) => i + 1))
    expect(types.filter((t: string) => t === 'job.status_changed')).toHaveLength(11)
  })

  test('the unit position shared from the driver phone (OsmAnd) shows on the job', async () => {
    const job = (await call('POST', '/jobs', { ...NEW_JOB, external_ref: 'AAA-2' })).body
    await call('POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })
    const ts = Math.floor(Date.now() / 1000)
    const ping = await fetch(`${server.url}/osmand?id=${unit.device_id}&lat=45.5231&lon=-122.6765&timestamp=${ts}&speed=10&bearing=270&accuracy=6`)
    expect(ping.status).toBe(200)
    const got = (await call('GET', `/jobs/${job.id}`)).body
    expect(got.position).toEqual({ lat: 45.5231, lng: -122.6765, accuracy_m: 6, heading: 270, speed_kph: 18.5, recorded_at: new Date(ts * 1000).toISOString() })
    const units = (await call('GET', '/units')).body
    expect(units.data[0]).toMatchObject({ object: 'unit', id: unit.id, status: 'busy', position: { lat: 45.5231 } })
    expect((await fetch(`${server.url}/osmand?id=unknown-device&lat=1&lon=2`)).status).toBe(404)
  })
})

describe('bad requests change nothing', () => {
  test('malformed JSON is 400 invalid_json; a non-object body too', async () => {
    for (const body of ['{"customer":', '[1,2]', '"text"']) {
      const r = await call('POST', '/jobs', body)
      expect({ body, status: r.status, code: r.body.error.code }).toEqual({ body, status: 400, code: 'invalid_json' })
      expect(r.body.error.details.database_message).toBe(r.body.error.message)
    }
  })

  test('schema violations are 422 validation_failed naming each field; unknown fields are refused', async () => {
    const r = await call('POST', '/jobs', { customer: { name: 'X', shoe_size: 9 }, pickup: {}, colour: 'red' })
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('validation_failed')
    const paths = r.body.error.details.fields.map((f: any) => f.path)
    expect(paths).toEqual(expect.arrayContaining(['colour', 'customer.shoe_size', 'pickup.location']))
  })

  test('a body over 256 KiB is 413 payload_too_large in the JSON shape', async () => {
    const r = await call('POST', '/jobs', { ...NEW_JOB, destination: 'x'.repeat(300 * 1024) })
    expect(r.status).toBe(413)
    expect(r.body.error.code).toBe('payload_too_large')
  })

  test('unknown job ids are 404 not_found', async () => {
    const r = await call('GET', '/jobs/job_01ZZZZZZZZZZZZZZZZZZZZZZZZ')
    expect(r.status).toBe(404)
    expect(r.body.error.code).toBe('not_found')
  })

  test('none of those bad requests created a job', async () => {
    const list = (await call('GET', '/jobs?limit=100')).body
    expect(list.data.map((j: any) => j.external_ref).sort()).toEqual(['AAA-2', 'AAA-778812'])
  })
})

describe('operator commands', () => {
  test('an archived job refuses writes until restored', async () => {
    const job = (await call('POST', '/jobs', { ...NEW_JOB, external_ref: 'AAA-3' })).body
    expect(cli(folder.bin, ['jobs', 'archive', job.id], { cwd: folder.dir }).code).toBe(0)
    const refused = await call('PATCH', `/jobs/${job.id}`, { urgency: 'normal' })
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('invalid_state')
    expect((await call('GET', `/jobs/${job.id}`)).body.archived).toBe(true)
    expect(cli(folder.bin, ['jobs', 'restore', job.id], { cwd: folder.dir }).code).toBe(0)
    expect((await call('PATCH', `/jobs/${job.id}`, { urgency: 'normal' })).status).toBe(200)
  })

  test('demo loads an account with units, services, a commercial accounts directory and jobs in every status', async () => {
    const demo = JSON.parse(cli(folder.bin, ['demo', '--json'], { cwd: folder.dir }).stdout)
    const demoKey = createKeyWithCli(folder.bin, folder.dir, 'all', ['--account', demo.account_id])
    const get = async (path: string) => (await fetch(server.api + path, { headers: { authorization: `Bearer ${demoKey}` } })).json() as any
    const loadedBy = Date.now()
    const jobs = (await get('/jobs?limit=100')).data
    // A day of work that is over by now: no job, milestone or timeline event in the future.
    for (const j of jobs) {
      const times = [j.created_at, j.updated_at, ...Object.values(j.timestamps ?? {}).filter((v) => typeof v === 'string')].map((v: any) => Date.parse(v))
      expect({ ref: j.external_ref, future: times.filter((t) => t > loadedBy).length }).toEqual({ ref: j.external_ref, future: 0 })
      const events = (await get(`/jobs/${j.id}/events?limit=100`)).data
      expect({ ref: j.external_ref, future: events.filter((e: any) => Date.parse(e.created_at) > loadedBy).length }).toEqual({ ref: j.external_ref, future: 0 })
    }
    expect(new Set(jobs.map((j: any) => j.status))).toEqual(new Set(['pending', 'confirmed', 'dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed', 'cancelled', 'goa']))
    expect(jobs.some((j: any) => j.reopen_count === 1)).toBe(true)
    expect((await get('/units')).data).toHaveLength(5)
    const services = (await get('/services')).data
    expect(services.length).toBeGreaterThan(5)
    expect(services[0]).toMatchObject({ object: 'service', rates: expect.arrayContaining([expect.objectContaining({ kind: expect.any(String), amount_cents: expect.any(Number), unit: expect.any(String) })]) })
    const directory = (await get('/accounts')).data
    expect(directory.map((a: any) => a.kind).sort()).toEqual(['fleet', 'motor_club', 'police'])
    expect(demo.commercial_accounts).toBe(3)
    expect(directory.every((a: any) => a.contacts.length > 0)).toBe(true)
    const linked = jobs.filter((j: any) => j.commercial_account !== null)
    expect(new Set(linked.map((j: any) => j.commercial_account.id))).toEqual(new Set(directory.map((a: any) => a.id)))
    expect(jobs.some((j: any) => j.commercial_account === null)).toBe(true)
    // Its numbers are made up: the texts are on the jobs, none was or will be sent.
    const dispatched = jobs.find((j: any) => j.status === 'dispatched')
    const texts = (await get(`/jobs/${dispatched.id}/texts`)).data
    expect(texts.map((t: any) => t.template)).toContain('driver_job_link')
    expect(new Set(texts.map((t: any) => `${t.status} ${t.skip_reason}`))).toEqual(new Set(['skipped demo', 'skipped no_consent']))
  })

  test('backup writes a consistent copy while the service runs', () => {
    const target = join(folder.dir, 'copy.db')
    expect(cli(folder.bin, ['backup', target], { cwd: folder.dir }).code).toBe(0)
    const copy = new Database(target, { readonly: true })
    expect((copy.query('SELECT count(*) AS n FROM jobs').get() as any).n).toBeGreaterThan(3)
    copy.close()
  })
})

/** The `/import` page, the template, the jobs list's Export CSV, and the export → import round trip, through HTTP. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, until, type TestApi } from '../../test/kit'
import { bringTo, call, makeJob, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { BASIC_HEADER, completedRow, csvText, utf8 } from '../../test/csv-files'
import { createUser } from '../users/create-user'
import { archiveJob } from '../jobs/archive-job'
import { rateJob } from '../jobs/rate-job'
import { IMPORT_MAX_BYTES, importJobs } from './import-jobs'
import { readRecords } from './csv-text'
import { dataVersionOf } from '../db/data-version'

let api: TestApi
let key: string
let cookie: string
const ORIGIN = 'http://towline.test'

async function signIn(email: string, accountId: string, role: 'owner' | 'dispatcher' = 'dispatcher'): Promise<string> {
  await createUser(api.contexts.forOperator(accountId), { email, role, password: 'correct horse battery' })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=correct+horse+battery` }))
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie')!.split(';')[0]!
}

beforeEach(async () => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
  cookie = await signIn('disp@example.com', api.accountId)
})
afterEach(() => api.close())

const count = (table: string) => (api.db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n

/** Posts a file to /import as the form does (multipart, the button's action). */
async function post(bytes: Uint8Array | string, action: 'check' | 'import', opts: { origin?: string; key?: string; as?: string } = {}) {
  const form = new FormData()
  form.set('idempotency_key', opts.key ?? 'A'.repeat(24))
  form.set('file', new File([(typeof bytes === 'string' ? utf8(bytes) : bytes) as Uint8Array<ArrayBuffer>], 'history.csv', { type: 'text/csv' }))
  form.set('action', action)
  const res = await api.raw(new Request(`${ORIGIN}/import`, { method: 'POST', headers: { origin: opts.origin ?? ORIGIN, cookie: opts.as ?? cookie }, body: form }))
  return { status: res.status, html: await res.text(), location: res.headers.get('location') }
}
const get = async (path: string, as = cookie) => api.raw(new Request(`${ORIGIN}${path}`, { headers: { cookie: as } }))
/** The error table's rows as `row|column|message`. */
const tableRows = (html: string) => [...html.matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((m) => `${m[1]}|${m[2]}|${m[3]!.replaceAll('&#39;', "'").replaceAll('&quot;', '"')}`)

describe('the import page', () => {
  test('has the CSV file input, Check file and Import, the template link, and Import in the navigation for dispatchers and owners', async () => {
    const res = await get('/import')
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<label for="f-file">CSV file</label>')
    expect(html).toContain('<input type="file" id="f-file" name="file"')
    expect(html).toContain('enctype="multipart/form-data"')
    expect(html).toContain('<button type="submit" name="action" value="check">Check file</button>')
    expect(html).toContain('<button type="submit" name="action" value="import">Import</button>')
    expect(html).toContain('<a href="/import/template.csv">Download the template</a>')
    expect(html).toContain('<a href="/import" aria-current="page">Import</a>')
    const owner = await signIn('owner@example.com', api.accountId, 'owner')
    expect(await (await get('/jobs', owner)).text()).toContain('<a href="/import">Import</a>')
    const out = await api.raw(new Request(`${ORIGIN}/import`))
    expect(out.status).toBe(303)
  })

  test('the import is written by another connection than the server\'s (the import thread), and the board hears of it at once', async () => {
    // The data version changes when ANOTHER connection commits (SQLite's PRAGMA data_version, at
    // once; PostgreSQL's announced commits, a moment later): the server's own writes leave it alone.
    const version = dataVersionOf(api.db)
    const own = version()
    expect((await call(api, key, 'POST', '/jobs', { customer: { name: 'Own write' }, pickup: { location: '1 Main St' } })).status).toBe(201)
    expect(version()).toBe(own)
    const heard: number[] = []
    const stop = api.bus.subscribe(api.bus.position, (e) => { if (e.event.type === 'job.created') heard.push(e.position) })
    const before = heard.length
    const done = await post(csvText(BASIC_HEADER, [completedRow(71), completedRow(72)]), 'import', { key: 'T'.repeat(24) })
    expect(done.status).toBe(303)
    await until(() => version() !== own, 2000, 'the import thread\'s commit')
    expect(heard.length - before).toBe(2)
    stop()
  })

  test('Check file lists every row error as Row, Column, Message, with 422, and writes nothing', async () => {
    const text = csvText(BASIC_HEADER, [completedRow(1, { 'pickup.location': 'two\nlines' }), completedRow(2, { 'customer.name': '' }), completedRow(3, { status: 'cancelled', completed_at: '', cancelled_at: '2026-03-04T23:00:00Z' })])
    const r = await post(text, 'check')
    expect(r.status).toBe(422)
    expect(r.html).toContain('<th scope="col">Row</th><th scope="col">Column</th><th scope="col">Message</th>')
    expect(tableRows(r.html)).toEqual(['3|customer.name|must not be empty', '4|cancel_reason|is required for a cancelled job: 3 to 500 characters'])
    expect(r.html).toMatch(/role="alert" data-form-alert tabindex="-1" autofocus>Checked: nothing was written. 2 problems in 2 rows/)
    expect(count('jobs')).toBe(0)
  })

  test('Check file of a good file says it passes and writes nothing; Import brings the jobs in (303 to the count) as the dispatcher', async () => {
    const text = csvText(BASIC_HEADER, [completedRow(1), completedRow(2)])
    const checked = await post(text, 'check')
    expect(checked.status).toBe(200)
    expect(checked.html).toContain('Every row of history.csv passes (2 jobs). Nothing was written')
    expect(count('jobs')).toBe(0)
    const done = await post(text, 'import', { key: 'B'.repeat(24) })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/import?imported=2')
    const page = await (await get(done.location!)).text()
    expect(page).toContain('Imported 2 jobs. <a href="/jobs">See them in the jobs list</a>.')
    const list = (await call(api, key, 'GET', '/jobs')).body.data
    expect(list.map((j: any) => j.external_ref).sort()).toEqual(['HIST-1', 'HIST-2'])
    const events = (await call(api, key, 'GET', `/jobs/${list[0].id}/events`)).body.data
    expect(events[0]).toMatchObject({ type: 'job.created', actor: 'dispatcher', detail: { imported: true } })
    expect(typeof events[0].detail.user_id).toBe('string')
    // The same form sent twice (a double click) imports once.
    const again = await post(text, 'import', { key: 'B'.repeat(24) })
    expect(again.location).toBe('/import?imported=2')
    expect(count('jobs')).toBe(2)
    // Two at once under one key (checked outside the write transaction, looked up again inside it): one import.
    const more = csvText(BASIC_HEADER, [completedRow(3), completedRow(4), completedRow(5)])
    const both = await Promise.all([post(more, 'import', { key: 'C'.repeat(24) }), post(more, 'import', { key: 'C'.repeat(24) })])
    expect(both.map((r) => r.location)).toEqual(['/import?imported=3', '/import?imported=3'])
    expect(count('jobs')).toBe(5)
  })

  test('a file of 2 MB and 1 byte reaches the import and is refused with the limit named (413 page, not a bare one); nothing is written', async () => {
    const text = csvText(BASIC_HEADER, [completedRow(1)])
    const bytes = utf8(text + ' '.repeat(IMPORT_MAX_BYTES + 1 - utf8(text).byteLength))
    expect(bytes.byteLength).toBe(IMPORT_MAX_BYTES + 1)
    const r = await post(bytes, 'import')
    expect(r.status).toBe(413)
    expect(r.html).toContain('Nothing was imported: The file is 2,097,153 bytes; at most 2 MB (2,097,152 bytes) can be imported at once.')
    expect(r.html).toContain('<label for="f-file">CSV file</label>')
    expect(count('jobs')).toBe(0)
  })

  test('501 rows are refused whole with the limit named', async () => {
    const r = await post(csvText(BASIC_HEADER, Array.from({ length: 501 }, (_, i) => completedRow(i + 1))), 'import')
    expect(r.status).toBe(422)
    expect(r.html).toContain('at most 500 rows can be imported at once')
    expect(count('jobs')).toBe(0)
  })

  test('no file chosen is a message beside the field; a post from another site is 403 and writes nothing', async () => {
    const form = new FormData()
    form.set('action', 'import')
    const none = await api.raw(new Request(`${ORIGIN}/import`, { method: 'POST', headers: { origin: ORIGIN, cookie }, body: form }))
    expect(none.status).toBe(422)
    expect(await none.text()).toContain('<p class="field-error" id="f-file-error">Choose a CSV file first.</p>')
    const cross = await post(csvText(BASIC_HEADER, [completedRow(1)]), 'import', { origin: 'https://evil.example' })
    expect(cross.status).toBe(403)
    expect(count('jobs')).toBe(0)
  })

  test('the template downloads as an attachment: the header and one example row, which passes a check', async () => {
    const res = await get('/import/template.csv')
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="towline-import-template.csv"')
    const bytes = new Uint8Array(await res.arrayBuffer())
    const records = readRecords(new TextDecoder().decode(bytes), ',')
    expect(records.length).toBe(2)
    expect(records[0]!.cells).toContain('customer.name')
    expect(records[0]!.cells).toContain('completed_at')
    expect(importJobs(api.contexts.forOperator(api.accountId), bytes, { dryRun: true }).errors).toEqual([])
  })
})

describe('Export CSV', () => {
  test('the jobs list links to the export of its current search; the export holds every page of it, not just 50', async () => {
    for (let i = 0; i < 60; i++) { await bringTo(api, key, 'cancelled'); api.clock.advance(1000) }
    await makeJob(api, key)
    const list = await (await get('/jobs?status=cancelled')).text()
    expect(list).toContain('<a href="/jobs/export.csv?status=cancelled" download>Export CSV</a>')
    const res = await get('/jobs/export.csv?status=cancelled')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="towline-jobs-2026-11-21.csv"')
    const records = readRecords(await res.text(), ',')
    expect(records.length).toBe(61)
    const status = records[0]!.cells.indexOf('status')
    expect(new Set(records.slice(1).map((r) => r.cells[status]))).toEqual(new Set(['cancelled']))
    const bad = await get('/jobs/export.csv?from=2026-02-30')
    expect(bad.status).toBe(422)
  })

  test('cells a spreadsheet would run as formulas start with a quote; the import takes exactly that quote off', async () => {
    await makeJob(api, key, { external_ref: '=HYPERLINK("http://x")', customer: { name: '@SUM(A1)', phone: '+1 503 555 0142' } })
    const text = await (await get('/jobs/export.csv')).text()
    const records = readRecords(text, ',')
    const cell = (name: string) => records[1]!.cells[records[0]!.cells.indexOf(name)]
    expect(cell('customer.phone')).toBe("'+15035550142")
    expect(cell('customer.name')).toBe("'@SUM(A1)")
    expect(cell('external_ref')).toBe(`'=HYPERLINK("http://x")`)
  })
})

describe('round trip', () => {
  test('jobs made through the API, exported, imported into a fresh account, read the same through the API, field by field', async () => {
    const unit = makeUnit(api, { name: 'Truck 7' })
    api.db.$client.query("INSERT INTO commercial_accounts (id, account_id, name, kind, contacts, created_at, updated_at) VALUES ('cac_src', ?, 'AAA Oregon', 'motor_club', '[]', 0, 0)").run(api.accountId)
    const full = {
      source: 'motor_club', payer_type: 'motor_club', service_type: 'flatbed', urgency: 'urgent',
      customer: { name: '=Lee, "Ann"', phone: '+1 (503) 555-0142', sms_consent: true },
      vehicle: { year: '2019', make: 'Honda', model: 'Civic', color: 'Blue', plate: '7ABC 123', vin: '1HGCM82633A004352', drive_type: 'fwd' },
      pickup: { location: 'I-5 N at exit 299B,\nright shoulder', lat: 45.52311, lng: -122.67654 },
      destination: "Joe's Garage; 1200 SE Grand Ave", eta_at: '2026-11-21T09:45:00.000Z', quote_cents: 18500,
    }
    const step = () => api.clock.advance(61_000)
    const ids: string[] = []
    const make = async (ref: string, extra: Record<string, unknown> = {}) => { const j = await makeJob(api, key, { ...full, external_ref: ref, ...extra }); ids.push(j.id); step(); return j.id as string }
    const patch = async (id: string, body: unknown) => { const r = await call(api, key, 'PATCH', `/jobs/${id}`, body); expect(r.status).toBe(200); step() }

    await make('RT-pending', { status: 'pending' })
    await make('RT-confirmed')
    const done = await make('RT-completed')
    await call(api, key, 'POST', `/jobs/${done}/assign`, { unit_id: unit.id }); step()
    for (const s of ['en_route', 'on_scene', 'towing', 'at_destination', 'completed']) await patch(done, { status: s })
    await patch(done, { final_price_cents: 19750, payment_method: 'card' })
    rateJob(api.contexts.forCustomer({ accountId: api.accountId, jobId: done }), done, { rating: 5, comment: 'Fast, kind driver' }); step()
    api.db.$client.query("UPDATE jobs SET commercial_account_id = 'cac_src' WHERE id = ?").run(done)
    const cancelled = await make('RT-cancelled')
    await patch(cancelled, { status: 'cancelled', cancel_reason: 'Customer found another ride' })
    const goa = await make('RT-goa')
    await patch(goa, { status: 'goa', cancel_reason: 'Nobody at the car' })
    const rerun = await make('RT-reopened')
    await patch(rerun, { status: 'cancelled', cancel_reason: 'Called back later' })
    expect((await call(api, key, 'POST', `/jobs/${rerun}/reopen`, { reason: 'Customer called back' })).status).toBe(200); step()
    const road = await make('RT-en-route')
    await call(api, key, 'POST', `/jobs/${road}/assign`, { unit_id: unit.id }); step()
    await patch(road, { status: 'en_route' })
    const archived = await make('RT-archived')
    archiveJob(api.contexts.forOperator(api.accountId), archived); step()

    const exported = new Uint8Array(await (await get('/jobs/export.csv?archived=on')).arrayBuffer())
    const other = api.account('Fresh Towing')
    makeUnit(api, { name: 'Truck 7', accountId: other })
    api.db.$client.query("INSERT INTO commercial_accounts (id, account_id, name, kind, contacts, created_at, updated_at) VALUES ('cac_dst', ?, 'AAA Oregon', 'motor_club', '[]', 0, 0)").run(other)
    const result = importJobs(api.contexts.forOperator(other), exported, { dryRun: false })
    expect(result.errors).toEqual([])
    expect(result.imported).toBe(ids.length)

    const otherKey = api.key('all', { accountId: other })
    const aside = (j: any) => {
      // Ids differ between the accounts; units and commercial accounts travel by name.
      const { id: _i, site_id: _s, tracking_url: _t, imported: _m, updated_at: _u, unit, commercial_account: ca, ...rest } = j
      return { ...rest, unit: unit ? unit.name : null, commercial_account: ca ? ca.name : null }
    }
    for (const id of ids) {
      const before = (await call(api, key, 'GET', `/jobs/${id}`)).body
      const found = (await call(api, otherKey, 'GET', `/jobs?external_ref=${encodeURIComponent(before.external_ref)}`)).body.data[0]
      const after = (await call(api, otherKey, 'GET', `/jobs/${found.id}`)).body
      expect(after.imported).toBe(true)
      expect(aside(after)).toEqual(aside(before))
      const ca = (db: string) => (api.db.$client.query('SELECT name FROM commercial_accounts WHERE id = (SELECT commercial_account_id FROM jobs WHERE id = ?)').get(db) as { name: string } | null)?.name ?? null
      expect(ca(found.id)).toBe(ca(id))
    }
    // And the file the fresh account exports is the same file, but for the ids.
    const again = await (await get('/jobs/export.csv?archived=on', await signIn('fresh@example.com', other))).text()
    const dropIds = (t: string) => readRecords(t, ',').map((r) => r.cells.slice(1).join('|')).sort()
    expect(dropIds(again)).toEqual(dropIds(new TextDecoder().decode(exported)))
  })
})

/** The CSV import operation: real-world files, limits, row errors numbered as spreadsheets show them, all-or-nothing, history kept, no texts. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { call, makeJob, makeUnit, NO_LIMITS } from '../../test/jobs-helpers'
import { BASIC_HEADER, completedRow, csvText, utf16le, utf8, windows1252 } from '../../test/csv-files'
import { checkImport, importJobs, IMPORT_MAX_BYTES, writeImport, type ImportResult } from './import-jobs'

let api: TestApi
let key: string
beforeEach(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
})
afterEach(() => api.close())

const operator = () => api.contexts.forOperator(api.accountId)
const run = (bytes: Uint8Array, dryRun = false): ImportResult => importJobs(operator(), bytes, { dryRun })
const count = (table: string) => (api.db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
/** Everything an import may write, counted: nothing may change on a refusal or a dry run. */
const footprint = () => ({ jobs: count('jobs'), events: count('job_events'), texts: count('texts'), webhook_events: count('webhook_events') })
const errorsOf = (r: ImportResult) => r.errors.map((e) => `${e.row ?? 'file'}|${e.column ?? ''}|${e.message}`)

describe('reading real-world files', () => {
  test('a UTF-8 file with a BOM and CRLF, quoted commas and newlines inside quotes, imports every field as written', async () => {
    const text = csvText(BASIC_HEADER, [
      completedRow(1, { 'customer.name': 'Lee, Ann', 'pickup.location': 'I-5 N at exit 299B\r\nright shoulder, past the "big" sign' }),
      completedRow(2),
    ], { bom: true, eol: '\r\n' })
    expect(text.startsWith('\ufeff')).toBe(true)
    const r = run(utf8(text))
    expect(r.errors).toEqual([])
    expect(r.imported).toBe(2)
    const first = (await call(api, key, 'GET', `/jobs?external_ref=HIST-1`)).body.data[0]
    expect(first.customer.name).toBe('Lee, Ann')
    expect(first.pickup.location).toBe('I-5 N at exit 299B\r\nright shoulder, past the "big" sign')
    expect(first.status).toBe('completed')
    expect(first.imported).toBe(true)
    expect(first.created_at).toBe('2026-03-02T22:05:00.000Z')
    expect(first.timestamps.completed_at).toBe('2026-03-02T23:40:00.000Z')
    expect(first.timestamps.closed_at).toBe('2026-03-02T23:40:00.000Z')
    expect(first.final_price_cents).toBe(19750)
    expect(first.payment_method).toBe('card')
    expect(first.customer.phone).toBe('+15035550142')
  })

  test("Excel's exports read the same: quoted header with semicolons (European Excel), UTF-16 \"Unicode text\" with tabs, Windows-1252 CSV", async () => {
    const rows = [completedRow(1, { 'customer.name': 'Élodie Durand' })]
    const semicolons = run(utf8(csvText(BASIC_HEADER, rows, { bom: true, delimiter: ';', quoteAll: true })), true)
    expect(semicolons.errors).toEqual([])
    const unicodeText = run(utf16le(csvText(BASIC_HEADER, rows, { delimiter: '\t' })), true)
    expect(unicodeText.errors).toEqual([])
    const ansi = run(windows1252(csvText(BASIC_HEADER, rows, { quoteAll: true })))
    expect(ansi.errors).toEqual([])
    const job = (await call(api, key, 'GET', '/jobs?external_ref=HIST-1')).body.data[0]
    expect(job.customer.name).toBe('Élodie Durand')
  })

  test('rows are numbered as a spreadsheet shows them: the header is row 1, a quoted multi-line cell is one row, a blank line is a row', () => {
    const text = csvText(BASIC_HEADER, [
      completedRow(1, { 'pickup.location': 'line one\nline two\nline three' }),
      completedRow(2, { 'customer.name': '' }),
    ]).replace(/\r\n$/, '\r\n\r\n') + csvText(BASIC_HEADER, [completedRow(3, { created_at: 'next tuesday' })]).split('\r\n').slice(1).join('\r\n')
    const r = run(utf8(text), true)
    expect(errorsOf(r)).toEqual([
      '3|customer.name|must not be empty',
      '5|created_at|is not a time: write ISO 8601 with a zone, such as 2026-11-21T09:30:00Z or 2026-11-21T01:30:00-08:00',
    ])
  })

  test('an unknown column is refused, named, before any row is read; so is a missing required one', () => {
    const r = run(utf8(csvText([...BASIC_HEADER, 'customer.shoe_size'], [completedRow(1)])), true)
    expect(errorsOf(r)).toEqual(['1|customer.shoe_size|is not a column this import knows; the template lists them all'])
    const missing = run(utf8(csvText(BASIC_HEADER.filter((h) => h !== 'created_at'), [completedRow(1)])), true)
    expect(errorsOf(missing)).toEqual(['1|created_at|is missing: every file needs this column'])
  })

  test('a cell that opens a quote it never closes is named by its row', () => {
    const text = `${BASIC_HEADER.join(',')}\r\nHIST-1,completed,"2026-03-02T14:05:00Z\r\n`
    expect(errorsOf(run(utf8(text), true))).toEqual(['2||The file could not be read from row 2: a double quote opens a cell that is never closed.'])
  })
})

describe('limits', () => {
  test('500 rows import; 501 rows are refused whole with the limit named, and nothing is written', () => {
    const rows = Array.from({ length: 501 }, (_, i) => completedRow(i + 1))
    const before = footprint()
    const over = run(utf8(csvText(BASIC_HEADER, rows)))
    expect(errorsOf(over)).toEqual(['file||The file has 501 rows of jobs; at most 500 rows can be imported at once. Split it into smaller files.'])
    expect(footprint()).toEqual(before)
    const ok = run(utf8(csvText(BASIC_HEADER, rows.slice(0, 500))))
    expect(ok.errors).toEqual([])
    expect(ok.imported).toBe(500)
    expect(count('jobs')).toBe(500)
  })

  test('a file of 2 MB and 1 byte is refused whole, naming the 2 MB limit; 2 MB exactly is read', () => {
    const text = csvText(BASIC_HEADER, [completedRow(1, { 'pickup.location': 'x'.repeat(400) })])
    const pad = (n: number) => utf8(text + ' '.repeat(n - utf8(text).byteLength))
    const over = run(pad(IMPORT_MAX_BYTES + 1))
    expect(errorsOf(over)).toEqual(['file||The file is 2,097,153 bytes; at most 2 MB (2,097,152 bytes) can be imported at once. Split it into smaller files.'])
    expect(count('jobs')).toBe(0)
    // Exactly at the limit the file is read (its trailing spaces make a last row that has cells but no job).
    expect(errorsOf(run(pad(IMPORT_MAX_BYTES), true)).some((e) => e.includes('2 MB'))).toBe(false)
  })
})

describe('row errors', () => {
  test('a duplicate reference is a row error, in the file (naming the first row) and on the account', async () => {
    await makeJob(api, key, { external_ref: 'ON-ACCOUNT' })
    const r = run(utf8(csvText(BASIC_HEADER, [completedRow(1), completedRow(2, { external_ref: 'HIST-1' }), completedRow(3, { external_ref: 'ON-ACCOUNT' })])), true)
    const existing = (await call(api, key, 'GET', '/jobs?external_ref=ON-ACCOUNT')).body.data[0].id
    expect(errorsOf(r)).toEqual([
      '3|external_ref|is also on row 2: a reference names one job',
      `4|external_ref|is already the reference of another job of this account (${existing})`,
    ])
  })

  test('a cancelled row needs cancel_reason of 3 to 500 characters, as the API does; other rows may not carry one', () => {
    const r = run(utf8(csvText(BASIC_HEADER, [
      completedRow(1, { status: 'cancelled', completed_at: '', cancelled_at: '2026-03-02T14:30:00-08:00' }),
      completedRow(2, { status: 'cancelled', completed_at: '', cancelled_at: '2026-03-03T14:30:00-08:00', cancel_reason: 'no' }),
      completedRow(3, { cancel_reason: 'Customer found another ride' }),
      completedRow(4, { status: 'cancelled', completed_at: '', cancelled_at: '2026-03-05T14:30:00-08:00', cancel_reason: 'Customer found another ride' }),
    ])), true)
    expect(errorsOf(r)).toEqual([
      '2|cancel_reason|is required for a cancelled job: 3 to 500 characters',
      '3|cancel_reason|is required for a cancelled job: 3 to 500 characters',
      '4|cancel_reason|can only be set on a cancelled or goa job',
    ])
  })

  test('bad times: no zone, a date that does not exist, in the future, before created_at', () => {
    const r = run(utf8(csvText(BASIC_HEADER, [
      completedRow(1, { created_at: '2026-03-02 14:05' }),
      completedRow(2, { completed_at: '2026-02-30T10:00:00Z' }),
      completedRow(3, { completed_at: '2027-01-01T10:00:00Z' }),
      completedRow(4, { completed_at: '2026-03-01T10:00:00Z' }),
    ])), true)
    expect(errorsOf(r)).toEqual([
      '2|created_at|has no time zone: write the time with Z (UTC) or its offset, such as 2026-11-21T09:30:00Z or 2026-11-21T01:30:00-08:00',
      '3|completed_at|is not a date and time that exists',
      '4|completed_at|is later than now (2026-11-21T09:00:00.000Z): an imported job is history',
      '5|completed_at|is before created_at (2026-03-05T22:05:00.000Z)',
    ])
  })

  test('a finished row without its own time (a cancelled one with created_at and cancel_reason only) takes the latest time the row gives', async () => {
    const r = run(utf8(csvText(BASIC_HEADER, [
      completedRow(1, { status: 'cancelled', completed_at: '', final_price_cents: '', payment_method: '', cancel_reason: 'Customer found another tow' }),
      completedRow(2, { completed_at: '' }),
    ])))
    expect(errorsOf(r)).toEqual([])
    const job = async (ref: string) => (await call(api, key, 'GET', `/jobs?external_ref=${ref}`)).body.data[0]
    const cancelled = await job('HIST-1')
    expect(cancelled).toMatchObject({ status: 'cancelled', cancel_reason: 'Customer found another tow', imported: true })
    expect(cancelled.timestamps.cancelled_at).toBe(cancelled.created_at)
    expect(cancelled.timestamps.closed_at).toBe(cancelled.created_at)
    const completed = await job('HIST-2')
    expect(completed.timestamps.completed_at).toBe(completed.created_at)
  })

  test("every row is checked by POST /jobs's own rules (schema, phone), and every problem of every row is listed", () => {
    const r = run(utf8(csvText([...BASIC_HEADER, 'pickup.lat', 'quote_cents'], [
      completedRow(1, { 'customer.phone': 'call me', 'pickup.lat': '95', quote_cents: '185.00', status: 'finished', 'customer.sms_consent': 'maybe' }),
      completedRow(2, { 'customer.name': 'x'.repeat(201) }),
    ])), true)
    expect(errorsOf(r)).toEqual([
      '2|status|must be one of pending, confirmed, dispatched, en_route, on_scene, towing, at_destination, completed, cancelled, goa',
      // The API's own phone check, beside the schema's problems of the same row.
      '2|customer.phone|is not a phone number we can text (use the +country form, e.g. +15552013344)',
      '2|customer.sms_consent|must be true or false',
      '2|pickup.lat|must be a number from -90 to 90, or empty',
      '2|quote_cents|must be a whole number of cents, such as 18500 for $185.00',
      '3|customer.name|must be a string of 1 to 200 characters',
    ])
    // Alone, too.
    const phone = run(utf8(csvText(BASIC_HEADER, [completedRow(1, { 'customer.phone': 'call me' })])), true)
    expect(errorsOf(phone)).toEqual(['2|customer.phone|is not a phone number we can text (use the +country form, e.g. +15552013344)'])
  })

  test('a unit and a commercial account are named by name (any case); an unknown name is a row error; a job on the road needs its unit', async () => {
    makeUnit(api, { name: 'Truck 7' })
    api.db.$client.query("INSERT INTO commercial_accounts (id, account_id, name, kind, contacts, created_at, updated_at) VALUES ('cac_test1', ?, 'AAA Oregon', 'motor_club', '[]', 0, 0)").run(api.accountId)
    const header = [...BASIC_HEADER, 'unit', 'commercial_account', 'dispatched_at', 'en_route_at']
    const r = run(utf8(csvText(header, [
      completedRow(1, { unit: 'truck 7', commercial_account: 'aaa oregon' }),
      completedRow(2, { unit: 'Truck 9', commercial_account: 'AAA Idaho' }),
      completedRow(3, { status: 'en_route', completed_at: '', dispatched_at: '2026-03-04T14:06:00-08:00', en_route_at: '2026-03-04T14:07:00-08:00' }),
    ])), true)
    expect(errorsOf(r)).toEqual([
      '3|commercial_account|names no commercial account in your directory',
      '3|unit|names no unit of this account',
      '4|unit|is required for a en_route job (a unit holds it): name one of your units',
    ])
    const ok = run(utf8(csvText(header, [completedRow(1, { unit: 'truck 7', commercial_account: 'aaa oregon' })])))
    expect(ok.errors).toEqual([])
    const job = (await call(api, key, 'GET', `/jobs/${ok.jobIds[0]}`)).body
    expect(job.unit.name).toBe('Truck 7')
    expect(api.db.$client.query('SELECT commercial_account_id AS c FROM jobs WHERE id = ?').get(ok.jobIds[0])).toEqual({ c: 'cac_test1' })
  })

  test('money may be given in dollars in a _dollars column instead of cents, never both', async () => {
    const header = [...BASIC_HEADER.filter((h) => h !== 'final_price_cents'), 'final_price_dollars']
    const r = run(utf8(csvText(header, [completedRow(1, { final_price_dollars: '$1,185.50' })])))
    expect(r.errors).toEqual([])
    expect((await call(api, key, 'GET', `/jobs/${r.jobIds[0]}`)).body.final_price_cents).toBe(118550)
    const both = run(utf8(csvText([...BASIC_HEADER, 'final_price_dollars'], [completedRow(2)])), true)
    expect(errorsOf(both)).toEqual(['1|final_price_dollars|and final_price_cents are both in the header: keep one'])
  })

  test('a decimal comma (185,00, as much of Europe writes) is a row error, never 100 times the price; a comma between thousands reads', () => {
    const header = [...BASIC_HEADER.filter((h) => h !== 'final_price_cents'), 'final_price_dollars']
    const rows = ['185,00', '1,85', '1,2,3', '2,500'].map((amount, i) => completedRow(10 + i, { final_price_dollars: amount }))
    const r = run(utf8(csvText(header, rows, { delimiter: ';' })), true)
    expect(errorsOf(r)).toEqual([2, 3, 4].map((row) => `${row}|final_price_dollars|must be an amount in dollars, such as 185.00`))
  })
})

describe('all or nothing', () => {
  test('a dry run writes nothing, even for a file that passes', () => {
    const before = footprint()
    const r = run(utf8(csvText(BASIC_HEADER, [completedRow(1), completedRow(2)])), true)
    expect(r).toMatchObject({ dryRun: true, rows: 2, imported: 0, errors: [] })
    expect(footprint()).toEqual(before)
  })

  test('an error on row 499 writes nothing of the 497 rows before it', () => {
    const rows = Array.from({ length: 500 }, (_, i) => completedRow(i + 1))
    rows[497] = completedRow(498, { 'customer.name': '' })
    const before = footprint()
    const r = run(utf8(csvText(BASIC_HEADER, rows)))
    expect(errorsOf(r)).toEqual(['499|customer.name|must not be empty'])
    expect(footprint()).toEqual(before)
  })
})

describe('an import and another writer at once', () => {
  test('references taken between the check and the write (another instance importing the same file): nothing is written, and every taken row is named, not only the first', async () => {
    const bytes = utf8(csvText(BASIC_HEADER, [completedRow(1), completedRow(2), completedRow(3)]))
    const checked = checkImport(operator(), bytes, { dryRun: false })
    if (!('checked' in checked)) throw new Error(`the file should pass: ${JSON.stringify(checked.done.errors)}`)
    // Meanwhile, rows 2 and 4's references are taken.
    const one = (await makeJob(api, key, { external_ref: 'HIST-1' })).id
    const three = (await makeJob(api, key, { external_ref: 'HIST-3' })).id
    const before = footprint()
    const r = writeImport(operator(), checked.checked, bytes)
    expect(r).toMatchObject({ dryRun: false, rows: 3, imported: 0, jobIds: [] })
    expect(errorsOf(r)).toEqual([
      `2|external_ref|is already the reference of another job of this account (${one})`,
      `4|external_ref|is already the reference of another job of this account (${three})`,
    ])
    expect(footprint()).toEqual(before)
  })
})

describe('imported jobs', () => {
  test('keep their history, emit job.created with detail.imported true dated their created_at, and text no one', async () => {
    const r = run(utf8(csvText(BASIC_HEADER, [completedRow(1), completedRow(2, { status: 'confirmed', completed_at: '' })])))
    expect(r.errors).toEqual([])
    for (const id of r.jobIds) {
      const events = (await call(api, key, 'GET', `/jobs/${id}/events`)).body.data
      expect(events.map((e: any) => e.type)).toEqual(['job.created'])
      expect(events[0].detail).toMatchObject({ imported: true })
      const job = (await call(api, key, 'GET', `/jobs/${id}`)).body
      expect(events[0].created_at).toBe(job.created_at)
      expect(job.customer.sms_consent).toBe(true)
      expect((await call(api, key, 'GET', `/jobs/${id}/texts`)).body.data).toEqual([])
    }
    // No text rows at all: not even a skipped one, and no consent recorded from the file.
    expect(count('texts')).toBe(0)
    // updated_at is the import's time, so readers of updated_since see the jobs arrive.
    const since = (await call(api, key, 'GET', `/jobs?updated_since=${new Date(api.clock.now()).toISOString()}`)).body.data
    expect(since.length).toBe(2)
  })

  test("job.created goes to the webhook outbox like every event; receivers tell imports by detail.imported", async () => {
    await call(api, key, 'POST', '/webhooks', { url: 'https://hooks.example.com/towline', events: ['job.created'] })
    const r = run(utf8(csvText(BASIC_HEADER, [completedRow(1)])))
    const logged = api.db.$client.query('SELECT type, data FROM webhook_events').all() as { type: string; data: string }[]
    expect(logged.map((l) => l.type)).toEqual(['job.created'])
    const data = JSON.parse(logged[0]!.data)
    expect(data.event.detail.imported).toBe(true)
    expect(data.job.id).toBe(r.jobIds[0])
  })
})

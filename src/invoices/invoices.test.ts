/**
 * Invoices (pages.md "Invoices and payments"): the operations, each one transaction with its
 * job.payment_updated (detail exactly invoice_id, invoice_number, total_cents, amount_paid_cents,
 * from the invoice's old status to its new one), the refusals that write nothing, the account's
 * numbering; then the job page's forms, the printable page and the tracking page's Pay link,
 * through HTTP in process.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { archive, bringTo, call, makeJob, snapshot } from '../../test/jobs-helpers'
import { updateAccount } from '../accounts/update-account'
import { addService } from '../services/add-service'
import { createUser } from '../users/create-user'
import { AppError } from '../platform/errors'
import { issueInvoice } from './issue-invoice'
import { recordPayment } from './record-payment'
import { voidInvoice } from './void-invoice'
import { writeOffInvoice } from './write-off-invoice'
import { listJobInvoices } from './list-job-invoices'

const ORIGIN = 'http://towline.test'
const PASSWORD = 'correct horse battery'
let api: TestApi
let key: string
beforeEach(() => { api = startTestApi(); key = api.key('all') })
afterEach(() => api.close())

const USER = 'usr_01TESTDISPATCHER0000000000'
const dispatcher = (accountId = api.accountId, userId = USER) => api.contexts.forDispatcher({ userId, role: 'dispatcher', accountId })
const TOW = [{ description: 'Tow, 12 miles', amount_cents: 18500 }]
/** The draft form's hidden fields (its key, the count of the job's invoices it was opened with). */
const DRAFT_HIDDEN = ['idempotency_key', 'invoices_seen']
const eventsOf = async (jobId: string, k = key): Promise<any[]> => (await call(api, k, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data
const lastEvent = async (jobId: string) => (await eventsOf(jobId)).at(-1)
const invoiceRows = () => api.db.$client.query<Record<string, any>, []>('SELECT * FROM invoices ORDER BY number').all()
const paymentRows = () => api.db.$client.query<Record<string, any>, []>('SELECT * FROM invoice_payments ORDER BY created_at').all()
/** Everything an invoice step could write: the job, its timeline, the outbox, the invoice tables. */
const everything = async (jobId: string) => ({ ...(await snapshot(api, key, jobId)), invoices: invoiceRows(), payments: paymentRows(), outbox: api.db.$client.query('SELECT count(*) AS n FROM webhook_events').get() })
/** Runs an operation expected to refuse; returns its AppError. */
function refused(run: () => unknown): AppError {
  try { run() } catch (err) { if (err instanceof AppError) return err; throw err }
  throw new Error('expected a refusal')
}

describe('the operations and their job.payment_updated', () => {
  test('issue: the account\'s next number, status issued, and one event from null to issued with exactly the spec\'s detail (and who)', async () => {
    const job = await makeJob(api, key)
    const inv = issueInvoice(dispatcher(), job.id, { lines: [{ description: '  Tow, 12 miles ', amount_cents: 18500 }, { description: 'Member discount', amount_cents: -2000 }] })
    expect(inv).toMatchObject({ number: 'INV-0001', status: 'issued', total_cents: 16500, amount_paid_cents: 0, amount_due_cents: 16500, lines: [{ description: 'Tow, 12 miles', amount_cents: 18500 }, { description: 'Member discount', amount_cents: -2000 }] })
    const e = await lastEvent(job.id)
    expect(e).toMatchObject({ type: 'job.payment_updated', from: null, to: 'issued', actor: 'dispatcher' })
    expect(e.detail).toEqual({ invoice_id: inv.id, invoice_number: 'INV-0001', total_cents: 16500, amount_paid_cents: 0, user_id: USER })
    expect(invoiceRows()).toHaveLength(1)
  })

  test('a partial payment keeps it issued, the payment that covers the total makes it paid; each event carries the new amount paid', async () => {
    const job = await makeJob(api, key)
    const inv = issueInvoice(dispatcher(), job.id, { lines: TOW })
    const part = recordPayment(dispatcher(), inv.id, { amountCents: 5000, method: ' cash ' })
    expect(part).toMatchObject({ status: 'issued', amount_paid_cents: 5000, amount_due_cents: 13500, payments: [{ amount_cents: 5000, method: 'cash', recorded_by_user_id: USER }] })
    const first = await lastEvent(job.id)
    expect(first).toMatchObject({ type: 'job.payment_updated', from: 'issued', to: 'issued', actor: 'dispatcher' })
    expect(first.detail).toEqual({ invoice_id: inv.id, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 5000, amount_cents: 5000, method: 'cash', user_id: USER })
    const rest = recordPayment(dispatcher(), inv.id, { amountCents: 13500, method: 'card' })
    expect(rest).toMatchObject({ status: 'paid', amount_paid_cents: 18500, amount_due_cents: 0 })
    expect(rest.paid_at).toBe(new Date(api.clock.now()).toISOString())
    const second = await lastEvent(job.id)
    expect(second).toMatchObject({ type: 'job.payment_updated', from: 'issued', to: 'paid' })
    expect(second.detail).toEqual({ invoice_id: inv.id, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 18500, amount_cents: 13500, method: 'card', user_id: USER })
    // Each step is its own event, in order, and one webhook outbox row each.
    expect((await eventsOf(job.id)).filter((x) => x.type === 'job.payment_updated').map((x) => x.to)).toEqual(['issued', 'issued', 'paid'])
  })

  test('an overpayment, a zero or missing amount and a bad method are refused (422) and write nothing', async () => {
    const job = await makeJob(api, key)
    const inv = issueInvoice(dispatcher(), job.id, { lines: TOW })
    recordPayment(dispatcher(), inv.id, { amountCents: 10000, method: 'cash' })
    const before = await everything(job.id)
    const over = refused(() => recordPayment(dispatcher(), inv.id, { amountCents: 8501, method: 'card' }))
    expect({ code: over.errorCode, status: over.status, fields: over.details.fields }).toEqual({ code: 'validation_failed', status: 422, fields: [{ path: 'amount', message: 'must be at most $85.00, the amount due' }] })
    const both = refused(() => recordPayment(dispatcher(), inv.id, { amountCents: 0, method: '' }))
    expect((both.details.fields as any[]).map((f) => f.path)).toEqual(['amount', 'method'])
    expect(refused(() => recordPayment(dispatcher(), inv.id, { amountCents: NaN, method: 'x'.repeat(41) })).details.fields).toHaveLength(2)
    expect(await everything(job.id)).toEqual(before)
  })

  test('void only while nothing was paid; after a payment it is refused (409) and the rest can be written off', async () => {
    const job = await makeJob(api, key)
    const a = issueInvoice(dispatcher(), job.id, { lines: TOW })
    const voided = voidInvoice(dispatcher(), a.id)
    expect(voided).toMatchObject({ status: 'void', amount_due_cents: 0 })
    const v = await lastEvent(job.id)
    expect(v).toMatchObject({ type: 'job.payment_updated', from: 'issued', to: 'void' })
    expect(v.detail).toEqual({ invoice_id: a.id, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 0, user_id: USER })

    const b = issueInvoice(dispatcher(), job.id, { lines: TOW })
    recordPayment(dispatcher(), b.id, { amountCents: 6000, method: 'check 1042' })
    const before = await everything(job.id)
    const err = refused(() => voidInvoice(dispatcher(), b.id))
    expect({ code: err.errorCode, status: err.status, reason: err.details.reason }).toEqual({ code: 'invalid_state', status: 409, reason: 'invoice_has_payments' })
    expect(err.message).toBe('Invoice INV-0002 cannot be voided: $60.00 was already paid on it (write off the rest instead). Nothing was changed.')
    expect(await everything(job.id)).toEqual(before)

    const off = writeOffInvoice(dispatcher(), b.id)
    expect(off).toMatchObject({ status: 'written_off', amount_paid_cents: 6000, amount_due_cents: 0, written_off_cents: 12500 })
    const w = await lastEvent(job.id)
    expect(w).toMatchObject({ type: 'job.payment_updated', from: 'issued', to: 'written_off' })
    expect(w.detail).toEqual({ invoice_id: b.id, invoice_number: 'INV-0002', total_cents: 18500, amount_paid_cents: 6000, user_id: USER })
  })

  test('a finished invoice refuses every further step (409 invalid_state naming its status), writing nothing', async () => {
    const job = await makeJob(api, key)
    const paid = issueInvoice(dispatcher(), job.id, { lines: TOW })
    recordPayment(dispatcher(), paid.id, { amountCents: 18500, method: 'card' })
    const voided = voidInvoice(dispatcher(), issueInvoice(dispatcher(), job.id, { lines: TOW }).id)
    const off = writeOffInvoice(dispatcher(), issueInvoice(dispatcher(), job.id, { lines: TOW }).id)
    const before = await everything(job.id)
    const cases: [string, () => unknown, string][] = [
      ['void a paid invoice', () => voidInvoice(dispatcher(), paid.id), 'invoice_paid'],
      ['write off a paid invoice', () => writeOffInvoice(dispatcher(), paid.id), 'invoice_paid'],
      ['pay a paid invoice', () => recordPayment(dispatcher(), paid.id, { amountCents: 1, method: 'cash' }), 'invoice_paid'],
      ['pay a void invoice', () => recordPayment(dispatcher(), voided.id, { amountCents: 100, method: 'cash' }), 'invoice_void'],
      ['void a void invoice', () => voidInvoice(dispatcher(), voided.id), 'invoice_void'],
      ['pay a written-off invoice', () => recordPayment(dispatcher(), off.id, { amountCents: 100, method: 'cash' }), 'invoice_written_off'],
      ['void a written-off invoice', () => voidInvoice(dispatcher(), off.id), 'invoice_written_off'],
    ]
    for (const [what, run, reason] of cases) {
      const err = refused(run)
      expect({ what, code: err.errorCode, status: err.status, reason: err.details.reason }).toEqual({ what, code: 'invalid_state', status: 409, reason })
    }
    expect(await everything(job.id)).toEqual(before)
  })

  test('lines are checked all at once before anything is written: 1 to 50, descriptions 1 to 200 characters, amounts never zero and within $999,999.99, a total above zero', async () => {
    const job = await makeJob(api, key)
    const before = await everything(job.id)
    const paths = (lines: { description: string; amount_cents: number }[]) => {
      const err = refused(() => issueInvoice(dispatcher(), job.id, { lines }))
      expect(err.errorCode).toBe('validation_failed')
      return (err.details.fields as any[]).map((f) => f.path)
    }
    expect(paths([])).toEqual(['lines'])
    expect(paths(Array.from({ length: 51 }, () => TOW[0]!))).toEqual(['lines'])
    expect(paths([{ description: ' ', amount_cents: 0 }, { description: 'x'.repeat(201), amount_cents: 100_000_000 }, { description: 'ok', amount_cents: 1.5 }]))
      .toEqual(['lines.0.description', 'lines.0.amount_cents', 'lines.1.description', 'lines.1.amount_cents', 'lines.2.amount_cents'])
    expect(paths([{ description: 'Tow', amount_cents: 5000 }, { description: 'Goodwill', amount_cents: -5000 }])).toEqual(['lines'])
    expect(await everything(job.id)).toEqual(before)
    // 50 lines of the largest amount, and a description of 200 characters, are fine.
    expect(issueInvoice(dispatcher(), job.id, { lines: Array.from({ length: 50 }, () => ({ description: 'd'.repeat(200), amount_cents: 99_999_999 })) }).total_cents).toBe(4_999_999_950)
  })

  test('numbers run 1, 2, 3 per account, separately for each account, and show as INV-0001', async () => {
    const other = api.account('Other Towing')
    const otherKey = api.key('all', { accountId: other })
    const mine = await makeJob(api, key)
    const theirs = await makeJob(api, otherKey)
    const numbers = [
      issueInvoice(dispatcher(), mine.id, { lines: TOW }).number,
      issueInvoice(dispatcher(other, 'usr_01OTHER00000000000000000000'), theirs.id, { lines: TOW }).number,
      issueInvoice(dispatcher(), mine.id, { lines: TOW }).number,
      issueInvoice(dispatcher(), (await makeJob(api, key)).id, { lines: TOW }).number,
      issueInvoice(dispatcher(other, 'usr_01OTHER00000000000000000000'), theirs.id, { lines: TOW }).number,
    ]
    expect(numbers).toEqual(['INV-0001', 'INV-0001', 'INV-0002', 'INV-0003', 'INV-0002'])
    // Past 9999 the number simply grows.
    api.db.$client.query("UPDATE invoices SET number = 9999 WHERE number = 3 AND account_id = ?").run(api.accountId)
    expect(issueInvoice(dispatcher(), mine.id, { lines: TOW }).number).toBe('INV-10000')
  })

  test('another account\'s job or invoice is not found (404); a customer\'s link may not (403); an archived job refuses invoicing (409); a key has no say in invoices', async () => {
    const job = await makeJob(api, key)
    const inv = issueInvoice(dispatcher(), job.id, { lines: TOW })
    const other = api.account('Other Towing')
    const stranger = dispatcher(other, 'usr_01OTHER00000000000000000000')
    const before = await everything(job.id)
    for (const run of [() => issueInvoice(stranger, job.id, { lines: TOW }), () => recordPayment(stranger, inv.id, { amountCents: 100, method: 'cash' }), () => voidInvoice(stranger, inv.id), () => writeOffInvoice(stranger, inv.id), () => listJobInvoices(stranger, job.id)]) {
      expect(refused(run).status).toBe(404)
    }
    // Only the account's dashboard users (and the console) invoice: a customer's or driver's link is 403 before any input is read.
    const customer = api.contexts.forCustomer({ accountId: api.accountId, jobId: job.id })
    for (const run of [() => issueInvoice(customer, job.id, { lines: [] }), () => recordPayment(customer, inv.id, { amountCents: 0, method: '' }), () => voidInvoice(customer, inv.id), () => writeOffInvoice(customer, inv.id)]) {
      expect(refused(run).errorCode).toBe('forbidden')
    }
    archive(api, job.id)
    const archived = await everything(job.id)
    for (const run of [() => issueInvoice(dispatcher(), job.id, { lines: TOW }), () => recordPayment(dispatcher(), inv.id, { amountCents: 100, method: 'cash' }), () => voidInvoice(dispatcher(), inv.id), () => writeOffInvoice(dispatcher(), inv.id)]) {
      const err = refused(run)
      expect({ code: err.errorCode, status: err.status }).toEqual({ code: 'invalid_state', status: 409 })
    }
    expect(await everything(job.id)).toEqual(archived)
    expect(before.invoices).toEqual(archived.invoices)
    // Invoices are not in the API (pages.md gives them none).
    for (const path of ['/invoices', `/invoices/${inv.id}`, `/jobs/${job.id}/invoices`]) expect((await call(api, key, 'GET', path)).status).toBe(404)
  })
})

// ---------------------------------------------------------------------------------------------
// The pages

async function signIn(email = 'ann@example.com', accountId = api.accountId): Promise<{ cookie: string; userId: string }> {
  const { user } = await createUser(api.contexts.forOperator(accountId), { email, role: 'dispatcher', password: PASSWORD })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=${encodeURIComponent(PASSWORD)}` }))
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, userId: user.id }
}
async function get(path: string, cookie?: string) {
  const res = await api.raw(new Request(ORIGIN + path, { headers: cookie ? { cookie } : {}, redirect: 'manual' }))
  return { status: res.status, location: res.headers.get('location'), text: await res.text() }
}
async function post(cookie: string, path: string, fields: [string, string][] | Record<string, string>, origin = ORIGIN) {
  const res = await api.raw(new Request(ORIGIN + path, {
    method: 'POST', redirect: 'manual', headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields as any).toString(),
  }))
  return { status: res.status, location: res.headers.get('location'), text: await res.text() }
}
const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
/** The fields a browser sends with the form posting to `action` (hidden and text inputs, in order; repeated names kept). */
function formOf(html: string, action: string): [string, string][] {
  const m = html.match(new RegExp(`<form method="post" action="${action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`))
  if (!m) throw new Error(`no form posting to ${action} on the page`)
  return [...m[1]!.matchAll(/<input\b[^>]*>/g)].flatMap(([tag]) => {
    const name = tag.match(/\sname="([^"]*)"/)?.[1]
    return name ? [[name, unescape(tag.match(/\svalue="([^"]*)"/)?.[1] ?? '')] as [string, string]] : []
  })
}
const set = (fields: [string, string][], name: string, value: string) => fields.map(([n, v]) => [n, n === name ? value : v] as [string, string])
/** The invoice's region on the job page (its section, named by its heading). */
const regionOf = (html: string, number: string) => html.match(new RegExp(`<section class="invoice"[^>]*>\\s*<h3[^>]*>Invoice ${number}</h3>[\\s\\S]*?</section>`))?.[0] ?? ''

describe('the job page\'s invoices', () => {
  test('Create invoice opens a draft from the quote; Add line posts it back with one more empty line; Issue invoice issues it as the dispatcher', async () => {
    const { cookie, userId } = await signIn()
    const job = await makeJob(api, key, { quote_cents: 18500, service_type: 'flatbed' })
    const page = await get(`/jobs/${job.id}`, cookie)
    expect(page.text).toContain(`<form method="get" action="/jobs/${job.id}/invoices/new" class="job-action"><button type="submit">Create invoice</button></form>`)
    expect(page.text).toContain('No invoices yet.')

    const draft = await get(`/jobs/${job.id}/invoices/new`, cookie)
    expect(draft.status).toBe(200)
    for (const label of ['Description', 'Amount']) expect(draft.text).toContain(`<label for="f-line-0-${label.toLowerCase()}">${label}</label>`)
    expect(draft.text).toContain('>Add line</button>')
    expect(draft.text).toContain('>Issue invoice</button>')
    const fields = formOf(draft.text, `/jobs/${job.id}/invoices/new`)
    expect(fields.filter(([n]) => !DRAFT_HIDDEN.includes(n))).toEqual([['description[]', 'Flatbed service (as quoted)'], ['amount[]', '185.00']])

    const more = await post(cookie, `/jobs/${job.id}/invoices/new`, [...set(fields, 'description[]', 'Flatbed tow'), ['intent', 'add_line']])
    expect(more.status).toBe(200)
    const moreFields = formOf(more.text, `/jobs/${job.id}/invoices/new`)
    expect(moreFields.filter(([n]) => !DRAFT_HIDDEN.includes(n))).toEqual([['description[]', 'Flatbed tow'], ['amount[]', '185.00'], ['description[]', ''], ['amount[]', '']])
    expect(invoiceRows()).toHaveLength(0)

    const lines: [string, string][] = [['idempotency_key', moreFields[0]![1]], ['description[]', 'Flatbed tow'], ['amount[]', '185.00'], ['description[]', 'Discount'], ['amount[]', '-$20'], ['description[]', ''], ['amount[]', ''], ['intent', 'issue']]
    const issued = await post(cookie, `/jobs/${job.id}/invoices/new`, lines)
    expect({ status: issued.status, location: issued.location }).toEqual({ status: 303, location: `/jobs/${job.id}?done=invoice_issued` })
    const e = await lastEvent(job.id)
    expect(e).toMatchObject({ type: 'job.payment_updated', from: null, to: 'issued', actor: 'dispatcher' })
    expect(e.detail).toEqual({ invoice_id: invoiceRows()[0]!.id, invoice_number: 'INV-0001', total_cents: 16500, amount_paid_cents: 0, user_id: userId })
    // The same form sent again (a double click) issues nothing more.
    expect((await post(cookie, `/jobs/${job.id}/invoices/new`, lines)).status).toBe(303)
    expect(invoiceRows()).toHaveLength(1)

    const shown = await get(`/jobs/${job.id}?done=invoice_issued`, cookie)
    expect(shown.text).toContain('Invoice issued.')
    const region = regionOf(shown.text, 'INV-0001')
    expect(region).toContain('<dt>Total</dt><dd>$165.00</dd>')
    expect(region).toContain('<dt>Due</dt><dd>$165.00</dd>')
    for (const b of ['Record payment', 'Void invoice', 'Write off']) expect(region).toContain(`>${b}</button>`)
    for (const l of ['Amount', 'Method']) expect(region).toMatch(new RegExp(`<label for="f-inv_[0-9A-Z]+-${l.toLowerCase()}">${l}</label>`))
  })

  test('a draft opened before another invoice of the job was issued (Back and Issue again, two people at once) is refused naming it, issuing nothing; the draft then lists it and issues when pressed again', async () => {
    const { cookie } = await signIn()
    const job = await makeJob(api, key, { quote_cents: 18500 })
    const path = `/jobs/${job.id}/invoices/new`
    const first = formOf((await get(path, cookie)).text, path)
    const second = formOf((await get(path, cookie)).text, path) // another tab, or another dispatcher
    expect(first.find(([n]) => n === 'invoices_seen')).toEqual(['invoices_seen', '0'])
    expect((await post(cookie, path, [...first, ['intent', 'issue']])).status).toBe(303)
    expect(invoiceRows()).toHaveLength(1)

    const stale = await post(cookie, path, [...second, ['intent', 'issue']])
    expect(stale.status).toBe(409)
    expect(stale.text).toMatch(/role="alert" data-form-alert tabindex="-1" autofocus>Invoice INV-0001 was issued for this job after this draft was opened; nothing was issued\./)
    expect(stale.text).toContain('This job already has an invoice; issuing this draft makes another:')
    expect(stale.text).toMatch(/<a href="\/invoices\/inv_[0-9A-Z]+">INV-0001<\/a>: Issued, \$185\.00, \$185\.00 due/)
    expect(invoiceRows()).toHaveLength(1)
    expect((await eventsOf(job.id)).filter((e) => e.type === 'job.payment_updated')).toHaveLength(1)

    // Back to a fresh draft: it names the issued invoice before anyone presses Issue invoice.
    const again = await get(path, cookie)
    expect(again.text).toContain('This job already has an invoice; issuing this draft makes another:')
    // The refused draft, pressed again (it now counts INV-0001, under a new key), issues the second invoice: a choice made seeing the first.
    const refusedFields = formOf(stale.text, path)
    expect(refusedFields.find(([n]) => n === 'invoices_seen')).toEqual(['invoices_seen', '1'])
    expect(refusedFields.find(([n]) => n === 'idempotency_key')![1]).not.toBe(second.find(([n]) => n === 'idempotency_key')![1])
    expect((await post(cookie, path, [...refusedFields, ['intent', 'issue']])).status).toBe(303)
    expect(invoiceRows().map((r) => r.number)).toEqual([1, 2])
    // A voided invoice is not named as standing.
    voidInvoice(dispatcher(), invoiceRows()[0]!.id)
    expect((await get(path, cookie)).text).not.toContain('>INV-0001</a>')
    // Nor does one issued and voided after a draft was opened stop it: nothing would be billed twice.
    const opened = formOf((await get(path, cookie)).text, path)
    voidInvoice(dispatcher(), issueInvoice(dispatcher(), job.id, { lines: TOW }).id)
    expect((await post(cookie, path, [...opened, ['intent', 'issue']])).status).toBe(303)
    expect(invoiceRows().map((r) => [r.number, r.status])).toEqual([[1, 'void'], [2, 'issued'], [3, 'void'], [4, 'issued']])
  })

  test('a draft with bad lines is refused beside each line, keeping what was typed, writing nothing; nothing filled in starts with one empty line', async () => {
    const { cookie } = await signIn()
    const job = await makeJob(api, key)
    const draft = await get(`/jobs/${job.id}/invoices/new`, cookie)
    expect(formOf(draft.text, `/jobs/${job.id}/invoices/new`).filter(([n]) => !DRAFT_HIDDEN.includes(n))).toEqual([['description[]', ''], ['amount[]', '']])
    const res = await post(cookie, `/jobs/${job.id}/invoices/new`, [['description[]', 'Tow'], ['amount[]', '12.345'], ['description[]', ''], ['amount[]', '40'], ['intent', 'issue']])
    expect(res.status).toBe(422)
    expect(res.text).toMatch(/role="alert" data-form-alert tabindex="-1" autofocus>The invoice was not issued/)
    expect(res.text).toContain('id="f-line-0-amount-error">must be dollars and cents, e.g. 185.00 (a discount: -20.00)</p>')
    expect(res.text).toContain('id="f-line-1-description-error">must be 1 to 200 characters</p>')
    expect(res.text).toContain('value="12.345"')
    const empty = await post(cookie, `/jobs/${job.id}/invoices/new`, [['description[]', ''], ['amount[]', ''], ['intent', 'issue']])
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('The invoice was not issued: an invoice needs at least one line.')
    expect(invoiceRows()).toHaveLength(0)
  })

  test('the draft comes from the final price first, else the quote, else the rate card of the job\'s service', async () => {
    const { cookie } = await signIn()
    addService(api.db, api.clock, { accountId: api.accountId, name: 'Flatbed tow', serviceType: 'flatbed', rates: [{ kind: 'hook', amount_cents: 9500 }, { kind: 'per_mile', amount_cents: 400 }] })
    const lines = async (job: any) => formOf((await get(`/jobs/${job.id}/invoices/new`, cookie)).text, `/jobs/${job.id}/invoices/new`).filter(([n]) => !DRAFT_HIDDEN.includes(n))
    expect(await lines(await makeJob(api, key, { service_type: 'flatbed' }))).toEqual([['description[]', 'Flatbed tow: Hook-up'], ['amount[]', '95.00'], ['description[]', 'Flatbed tow: Mileage, $4.00 per mile'], ['amount[]', '']])
    const priced = await makeJob(api, key, { service_type: 'flatbed', quote_cents: 20000 })
    expect((await call(api, key, 'PATCH', `/jobs/${priced.id}`, { final_price_cents: 21050 })).status).toBe(200)
    expect(await lines(priced)).toEqual([['description[]', 'Flatbed service'], ['amount[]', '210.50']])
    expect(await lines(await makeJob(api, key, { service_type: 'lockout' }))).toEqual([['description[]', ''], ['amount[]', '']])
  })

  test('Record payment: partial then the rest turns it paid; a double submit records one payment; an overpayment is refused beside Amount, writing nothing', async () => {
    const { cookie, userId } = await signIn()
    const job = await makeJob(api, key)
    const inv = issueInvoice(dispatcher(), job.id, { lines: TOW })
    const form = async () => formOf((await get(`/jobs/${job.id}`, cookie)).text, `/invoices/${inv.id}/payments`)

    const first = set(set(await form(), 'amount', '50'), 'method', 'cash')
    const r1 = await post(cookie, `/invoices/${inv.id}/payments`, first)
    expect({ status: r1.status, location: r1.location }).toEqual({ status: 303, location: `/jobs/${job.id}?done=payment_recorded` })
    // The same form again (a double click): one payment, one event.
    expect((await post(cookie, `/invoices/${inv.id}/payments`, first)).location).toBe(`/jobs/${job.id}?done=payment_recorded`)
    expect(paymentRows()).toHaveLength(1)
    expect((await eventsOf(job.id)).filter((e) => e.type === 'job.payment_updated')).toHaveLength(2)
    expect((await lastEvent(job.id)).detail).toEqual({ invoice_id: inv.id, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 5000, amount_cents: 5000, method: 'cash', user_id: userId })

    const before = await everything(job.id)
    const over = await post(cookie, `/invoices/${inv.id}/payments`, set(set(await form(), 'amount', '135.01'), 'method', 'card'))
    expect(over.status).toBe(422)
    expect(over.text).toContain('Nothing was recorded: correct the field marked below.')
    expect(over.text).toContain(`id="f-${inv.id}-amount-error">must be at most $135.00, the amount due</p>`)
    expect(over.text).toContain('value="135.01"')
    expect(await everything(job.id)).toEqual(before)

    const rest = await post(cookie, `/invoices/${inv.id}/payments`, set(set(await form(), 'amount', '$135.00'), 'method', 'card'))
    expect(rest.location).toBe(`/jobs/${job.id}?done=invoice_paid`)
    const e = await lastEvent(job.id)
    expect(e).toMatchObject({ type: 'job.payment_updated', from: 'issued', to: 'paid', actor: 'dispatcher' })
    expect(e.detail).toEqual({ invoice_id: inv.id, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 18500, amount_cents: 13500, method: 'card', user_id: userId })
    const region = regionOf((await get(`/jobs/${job.id}`, cookie)).text, 'INV-0001')
    expect(region).toContain('>Paid</span>')
    expect(region).not.toContain('>Record payment</button>')
    expect(region).toContain('$50.00 by cash')
  })

  test('Void invoice after a payment is refused with a clear message (409); Write off then closes it; void of an unpaid one works', async () => {
    const { cookie } = await signIn()
    const job = await makeJob(api, key)
    const paidOn = issueInvoice(dispatcher(), job.id, { lines: TOW })
    const unpaid = issueInvoice(dispatcher(), job.id, { lines: TOW })
    // The page offers no Void once money was taken; a stale page's form is refused all the same.
    const stale = formOf((await get(`/jobs/${job.id}`, cookie)).text, `/invoices/${paidOn.id}/void`)
    recordPayment(dispatcher(), paidOn.id, { amountCents: 1000, method: 'cash' })
    expect(regionOf((await get(`/jobs/${job.id}`, cookie)).text, 'INV-0001')).not.toContain('>Void invoice</button>')
    const before = await everything(job.id)
    const res = await post(cookie, `/invoices/${paidOn.id}/void`, stale)
    expect(res.status).toBe(409)
    expect(res.text).toContain('role="alert" id="page-alert">Invoice INV-0001 cannot be voided: $10.00 was already paid on it (write off the rest instead). Nothing was changed.</div>')
    expect(await everything(job.id)).toEqual(before)

    const off = await post(cookie, `/invoices/${paidOn.id}/write-off`, formOf((await get(`/jobs/${job.id}`, cookie)).text, `/invoices/${paidOn.id}/write-off`))
    expect(off.location).toBe(`/jobs/${job.id}?done=invoice_written_off`)
    expect(await lastEvent(job.id)).toMatchObject({ type: 'job.payment_updated', from: 'issued', to: 'written_off', detail: { invoice_number: 'INV-0001', amount_paid_cents: 1000 } })
    const voided = await post(cookie, `/invoices/${unpaid.id}/void`, formOf((await get(`/jobs/${job.id}`, cookie)).text, `/invoices/${unpaid.id}/void`))
    expect(voided.location).toBe(`/jobs/${job.id}?done=invoice_void`)
    expect(await lastEvent(job.id)).toMatchObject({ type: 'job.payment_updated', from: 'issued', to: 'void', detail: { invoice_number: 'INV-0002', amount_paid_cents: 0 } })
  })

  test('a post from another origin is refused (403) and writes nothing; another account\'s dispatcher gets 404 for the job\'s invoices, their page and their forms', async () => {
    const { cookie } = await signIn()
    const job = await makeJob(api, key)
    const inv = issueInvoice(dispatcher(), job.id, { lines: TOW })
    const before = await everything(job.id)
    const fields = set(set(formOf((await get(`/jobs/${job.id}`, cookie)).text, `/invoices/${inv.id}/payments`), 'amount', '10'), 'method', 'cash')
    expect((await post(cookie, `/invoices/${inv.id}/payments`, fields, 'http://evil.test')).status).toBe(403)
    expect((await post(cookie, `/jobs/${job.id}/invoices/new`, [['description[]', 'x'], ['amount[]', '1'], ['intent', 'issue']], 'http://evil.test')).status).toBe(403)
    expect(await everything(job.id)).toEqual(before)

    const eve = await signIn('eve@other.example', api.account('Other Towing'))
    for (const path of [`/invoices/${inv.id}`, `/jobs/${job.id}/invoices/new`]) expect({ path, status: (await get(path, eve.cookie)).status }).toEqual({ path, status: 404 })
    for (const action of ['payments', 'void', 'write-off']) {
      expect({ action, status: (await post(eve.cookie, `/invoices/${inv.id}/${action}`, { amount: '10', method: 'cash' })).status }).toEqual({ action, status: 404 })
    }
    expect((await post(eve.cookie, `/jobs/${job.id}/invoices/new`, [['description[]', 'x'], ['amount[]', '1'], ['intent', 'issue']])).status).toBe(404)
    expect(await everything(job.id)).toEqual(before)
    // Without a session: to sign-in.
    expect((await get(`/invoices/${inv.id}`)).status).toBe(303)
  })

  test('the printable invoice shows the company, number, date, job, customer, vehicle, route, lines, amounts, status and payments, with a print stylesheet', async () => {
    api.clock.ms = Date.parse('2026-11-21T03:00:00.000Z')
    const { cookie } = await signIn()
    updateAccount(api.contexts.forOperator(api.accountId), { name: 'Joe & Sons Towing', phone: '+15035550100' })
    const job = await makeJob(api, key, { external_ref: 'MC-42', vehicle: { year: '2012', make: 'Honda', model: 'Civic', plate: '7ABC123' }, destination: "Joe's Garage" })
    const inv = issueInvoice(dispatcher(), job.id, { lines: [{ description: 'Tow <12 mi>', amount_cents: 18500 }] })
    recordPayment(dispatcher(), inv.id, { amountCents: 5000, method: 'cash' })
    const page = await get(`/invoices/${inv.id}`, cookie)
    expect(page.status).toBe(200)
    for (const bit of ['Joe &amp; Sons Towing', '+15035550100', '<h1 id="h-invoice">Invoice INV-0001</h1>', job.id, 'MC-42', job.customer.name, '2012 Honda Civic, 7ABC123', job.pickup.location, 'Joe&#39;s Garage',
      'Tow &lt;12 mi&gt;', '<dt>Total</dt><dd>$185.00</dd>', '<dt>Paid</dt><dd>$50.00</dd>', '<dt>Due</dt><dd>$135.00</dd>', 'Status: <strong>Issued</strong>', '<td>cash</td>', '2026-11-21']) {
      expect(page.text).toContain(bit)
    }
    // Printing leaves out the dashboard's frame, its links back and every form and button.
    const href = page.text.match(/<link rel="stylesheet" href="([^"]+styles[^"]*\.css)">/)![1]!
    const css = (await get(href)).text
    // Its date is the day it was issued where the company works: 03:00 on 21 November in UTC is the 20th in Los Angeles.
    expect(page.text).toContain(`<p>Date: <time datetime="${inv.issued_at}">2026-11-21</time></p>`)
    updateAccount(api.contexts.forOperator(api.accountId), { timeZone: 'America/Los_Angeles' })
    const there = (await get(`/invoices/${inv.id}`, cookie)).text
    expect(there).toContain(`<p>Date: <time datetime="${inv.issued_at}">2026-11-20</time></p>`)
    expect(there).toMatch(/<td><time datetime="2026-11-21T03:00:00.000Z">2026-11-20<\/time><\/td><td>cash<\/td>/)
    expect(css.match(/@media print\{([^}]*)\{display:none ?!important\}/)?.[1]?.split(',').map((s) => s.trim()).sort()).toEqual(['.no-print', '.site-header', '.skip-link', 'button', 'form'])
  })
})

describe('the tracking page\'s Pay', () => {
  test('shown only while an issued invoice is unpaid, with the amount due; Pay records job.payment_link_opened and sends to the payment link with the number and amount due', async () => {
    updateAccount(api.contexts.forOperator(api.accountId), { paymentUrl: 'https://pay.example.com/towline?ref=joe' })
    const { job } = await bringTo(api, key, 'completed')
    const t = new URL(job.tracking_url).pathname
    const state = async () => JSON.parse((await get(`${t}/state`)).text)
    expect((await state()).invoice).toBeNull()
    const inv = issueInvoice(dispatcher(), job.id, { lines: TOW })
    recordPayment(dispatcher(), inv.id, { amountCents: 8500, method: 'cash' })
    expect((await state()).invoice).toEqual({ number: 'INV-0001', total_cents: 18500, amount_due_cents: 10000, pay_path: `${t}/pay` })
    const page = await get(t)
    // The invoice's total (the one price pages.md lets the customer see) and what is still due of it.
    expect(page.text).toContain(`Invoice INV-0001: $185.00, $100.00 still due. <a class="button" href="${t}/pay">Pay</a>`)

    const pay = await get(`${t}/pay`)
    expect({ status: pay.status, location: pay.location }).toEqual({ status: 303, location: 'https://pay.example.com/towline?ref=joe&invoice=INV-0001&amount=100.00' })
    const opened = await lastEvent(job.id)
    expect(opened).toMatchObject({ type: 'job.payment_link_opened', actor: 'customer' })
    expect(opened.detail).toEqual({ invoice_id: inv.id, invoice_number: 'INV-0001', total_cents: 18500, amount_due_cents: 10000 })

    recordPayment(dispatcher(), inv.id, { amountCents: 10000, method: 'card' })
    expect((await state()).invoice).toBeNull()
    expect((await get(t)).text).not.toContain('>Pay</a>')
    const none = await get(`${t}/pay`)
    expect(none.text).toContain('<h1>Nothing to pay</h1>')
    // A later invoice, written off, never shows either.
    writeOffInvoice(dispatcher(), issueInvoice(dispatcher(), job.id, { lines: TOW }).id)
    expect((await state()).invoice).toBeNull()
  })

  test('without a payment link, Pay sends to the printable invoice behind the tracking link, with how to pay and nothing internal', async () => {
    updateAccount(api.contexts.forOperator(api.accountId), { name: 'Joe & Sons Towing', phone: '+15035550100' })
    const job = await makeJob(api, key, { external_ref: 'MC-SECRET-7' })
    const t = new URL(job.tracking_url).pathname
    const inv = issueInvoice(dispatcher(), job.id, { lines: TOW })
    recordPayment(dispatcher(), inv.id, { amountCents: 2500, method: 'zelle_private_pm' })
    const pay = await get(`${t}/pay`)
    expect({ status: pay.status, location: pay.location }).toEqual({ status: 303, location: `${t}/invoice` })
    expect(await lastEvent(job.id)).toMatchObject({ type: 'job.payment_link_opened', actor: 'customer', detail: { invoice_number: 'INV-0001', amount_due_cents: 16000 } })
    const doc = await get(`${t}/invoice`)
    expect(doc.status).toBe(200)
    for (const bit of ['Invoice INV-0001', 'Tow, 12 miles', '<dt>Due</dt><dd>$160.00</dd>', 'To pay the $160.00 due, call Joe &amp; Sons Towing at', 'Back to your tow']) expect(doc.text).toContain(bit)
    for (const secret of [job.id, 'MC-SECRET-7', 'zelle_private_pm', USER, inv.id]) expect(doc.text).not.toContain(secret)
    // Only through a live tracking link: a guessed token is no page at all.
    expect((await get('/t/notatoken/invoice')).status).toBe(404)
  })
})

/**
 * Invoices as a dispatcher raises them, in Chromium against the compiled binary, with a real
 * HTTPS webhook receiver (its certificate from a CA this test makes, trusted through
 * NODE_EXTRA_CA_CERTS) checking each job.payment_updated: an invoice made from the job's quote,
 * issued, paid in two parts; a second voided; a third (with an added line) partly paid and
 * written off; the printable page (axe, 360 px); and the customer's Pay on the tracking page,
 * recorded as job.payment_link_opened and sent to the payment link (a loopback address whose
 * page the browser is given without leaving this machine), the link gone live once paid.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { apiCaller, cli } from '../binary'
import { signedInPage, startDashboard, type Dashboard } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'
import { makeTestCa, startReceiver } from '../https-receiver'

const ca = makeTestCa()
const secrets: string[] = []
const receiver = startReceiver(ca, { secrets: () => secrets })
/** The payment provider's page the payment link points at: another HTTPS server on loopback. */
const payPage = startReceiver(ca, { behave: () => ({ headers: { 'content-type': 'text/html' }, body: '<!doctype html><html lang="en"><title>Pay</title><h1>Pay Joe</h1></html>' }) })
const DISPATCHER = { email: 'disp@example.com', password: 'dispatch password 1' }
let d: Dashboard
const api = apiCaller(() => d.server, () => d.key)
/** Where the account's payment link points: a page on this machine (loopback), so nothing leaves it. */
const PAY_URL = `https://127.0.0.1:${payPage.port}/pay?shop=joe`

beforeAll(async () => {
  d = await startDashboard({ logins: [{ ...DISPATCHER, role: 'dispatcher' }], env: { NODE_EXTRA_CA_CERTS: ca.caPath, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' } })
  const hook = await api('POST', '/webhooks', { url: `${receiver.url}/billing`, events: ['job.payment_updated', 'job.payment_link_opened'] })
  expect(hook.status).toBe(201)
  secrets.push(hook.body.secret)
  const r = cli(d.folder.bin, ['accounts', 'update', '--name', 'Joe & Sons Towing', '--phone', '+15035550100', '--payment-url', PAY_URL], { cwd: d.folder.dir })
  expect(r.code).toBe(0)
}, 30_000)
afterAll(async () => {
  await d?.stop()
  receiver.stop()
  payPage.stop()
})

/** The deliveries the receiver got, as (type, to, detail without who), once there are `n` of them. */
async function deliveries(n: number) {
  await receiver.waitFor(n, 10_000)
  for (const r of receiver.received) expect(r.validSignatures).toBe(1)
  return receiver.received.map((r) => {
    const e = r.body.data.event
    const { user_id: _who, ...detail } = e.detail
    return { type: r.body.type, from: e.from, to: e.to, actor: e.actor, detail, byUser: typeof _who === 'string' && _who.startsWith('usr_') }
  })
}
const invoice = (page: Page, number: string) => page.getByRole('region', { name: `Invoice ${number}` })

/** Create invoice → the draft → Issue invoice, back on the job page; `lines` fills or adds lines first. */
async function issue(page: Page, jobId: string, lines: { description: string; amount: string }[] = []) {
  await page.getByRole('button', { name: 'Create invoice' }).click()
  await page.waitForURL(new RegExp(`/jobs/${jobId}/invoices/new`))
  for (const [i, line] of lines.entries()) {
    if (i >= (await page.getByLabel('Description', { exact: true }).count())) {
      await page.getByRole('button', { name: 'Add line' }).click()
      await page.waitForLoadState()
      // The keyboard goes on at the line just added.
      await page.waitForFunction((id) => document.activeElement?.id === id, `f-line-${i}-description`)
    }
    await page.getByLabel('Description', { exact: true }).nth(i).fill(line.description)
    await page.getByLabel('Amount', { exact: true }).nth(i).fill(line.amount)
  }
  await page.getByRole('button', { name: 'Issue invoice' }).click()
  await page.waitForURL(new RegExp(`/jobs/${jobId}\\?done=invoice_issued$`))
}
async function pay(page: Page, jobId: string, number: string, amount: string, method: string, done: string) {
  const region = invoice(page, number)
  await region.getByLabel('Amount', { exact: true }).fill(amount)
  await region.getByLabel('Method', { exact: true }).fill(method)
  await region.getByRole('button', { name: 'Record payment' }).click()
  await page.waitForURL(new RegExp(`/jobs/${jobId}\\?done=${done}$`))
}

describe('invoices in Chromium, with the webhook receiver', () => {
  test('from the quote: issued, paid in two parts (Pay on the tracking page between them), a second voided, a third written off; each step a job.payment_updated', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Ann Lee', phone: '+15035550142' }, pickup: { location: 'I-5 N at exit 299B' }, destination: "Joe's Garage", quote_cents: 18500, vehicle: { make: 'Honda', model: 'Civic' } })
    expect(made.status).toBe(201)
    const jobId = made.body.id as string
    const trackingUrl = (await api('GET', `/jobs/${jobId}`)).body.tracking_url as string
    const page = await signedInPage(d.browser, d.base, DISPATCHER)
    await page.goto(`${d.base}/jobs/${jobId}`)

    // The draft comes from the quote.
    await page.getByRole('button', { name: 'Create invoice' }).click()
    await page.waitForURL(new RegExp(`/jobs/${jobId}/invoices/new`))
    expect(await page.getByLabel('Amount', { exact: true }).inputValue()).toBe('185.00')
    expect(await page.getByLabel('Description', { exact: true }).inputValue()).toBe('Towing service (as quoted)')
    await expectAccessible(page)
    await page.goBack()
    await issue(page, jobId)
    const first = invoice(page, 'INV-0001')
    await expect(first.getByText('$185.00').first().isVisible()).resolves.toBe(true)
    await expectAccessible(page)

    await pay(page, jobId, 'INV-0001', '50.00', 'cash', 'payment_recorded')
    let got = await deliveries(2)
    const invoiceId = got[0]!.detail.invoice_id as string
    expect(invoiceId).toMatch(/^inv_/)
    expect(got).toEqual([
      { type: 'job.payment_updated', from: null, to: 'issued', actor: 'dispatcher', detail: { invoice_id: invoiceId, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 0 }, byUser: true },
      { type: 'job.payment_updated', from: 'issued', to: 'issued', actor: 'dispatcher', detail: { invoice_id: invoiceId, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 5000, amount_cents: 5000, method: 'cash' }, byUser: true },
    ])

    // The customer, on their phone, sees what is due and Pay; Pay is recorded and sends them to the payment link.
    // The test CA is not the browser's: this context accepts the pay page's certificate.
    const phone = await d.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, ignoreHTTPSErrors: true })
    const customer = await phone.newPage()
    await customer.goto(trackingUrl)
    expect(await customer.getByText('Invoice INV-0001: $185.00, $135.00 still due.').count()).toBe(1)
    await customer.getByRole('link', { name: 'Pay', exact: true }).click()
    await customer.waitForURL(`https://127.0.0.1:${payPage.port}/pay?shop=joe&invoice=INV-0001&amount=135.00`)
    expect(await customer.getByRole('heading', { name: 'Pay Joe' }).count()).toBe(1)
    expect(payPage.received.filter((r) => r.path === '/pay')).toHaveLength(1)
    got = await deliveries(3)
    expect(got[2]).toEqual({ type: 'job.payment_link_opened', from: null, to: null, actor: 'customer', detail: { invoice_id: invoiceId, invoice_number: 'INV-0001', total_cents: 18500, amount_due_cents: 13500 }, byUser: false })
    await customer.goto(trackingUrl)
    await customer.getByRole('link', { name: 'Pay', exact: true }).waitFor()

    // The rest is paid: the invoice is paid, and Pay leaves the open tracking page without a reload.
    await pay(page, jobId, 'INV-0001', '135', 'card', 'invoice_paid')
    await customer.getByRole('link', { name: 'Pay', exact: true }).waitFor({ state: 'detached', timeout: 5000 })
    expect(await invoice(page, 'INV-0001').getByRole('button', { name: 'Record payment' }).count()).toBe(0)
    // The customer's own view of the invoice behind their link (a receipt now): what it says to them, axe, 360 px.
    await customer.goto(`${trackingUrl}/invoice`)
    expect(await customer.getByRole('heading', { level: 1 }).innerText()).toBe('Invoice INV-0001')
    expect(await customer.locator('body').innerText()).not.toContain(jobId)
    await expectAccessible(customer)
    await customer.setViewportSize({ width: 360, height: 740 })
    await expectNoHorizontalOverflow(customer, { scrollers: ['.table-scroll'] })
    got = await deliveries(4)
    expect(got[3]).toEqual({ type: 'job.payment_updated', from: 'issued', to: 'paid', actor: 'dispatcher', detail: { invoice_id: invoiceId, invoice_number: 'INV-0001', total_cents: 18500, amount_paid_cents: 18500, amount_cents: 13500, method: 'card' }, byUser: true })

    // A second invoice, voided.
    await issue(page, jobId)
    await invoice(page, 'INV-0002').getByRole('button', { name: 'Void invoice' }).click()
    await page.waitForURL(new RegExp(`/jobs/${jobId}\\?done=invoice_void$`))
    got = await deliveries(6)
    expect(got.slice(4).map((e) => [e.detail.invoice_number, e.from, e.to, e.detail.amount_paid_cents])).toEqual([['INV-0002', null, 'issued', 0], ['INV-0002', 'issued', 'void', 0]])

    // A third, with a line added by Add line, partly paid, then written off.
    await issue(page, jobId, [{ description: 'Flatbed tow', amount: '185.00' }, { description: 'Storage, 2 days', amount: '40' }])
    await pay(page, jobId, 'INV-0003', '100', 'check 1042', 'payment_recorded')
    await invoice(page, 'INV-0003').getByRole('button', { name: 'Write off' }).click()
    await page.waitForURL(new RegExp(`/jobs/${jobId}\\?done=invoice_written_off$`))
    got = await deliveries(9)
    const third = got.slice(6)
    expect(third.map((e) => [e.detail.invoice_number, e.from, e.to, e.detail.total_cents, e.detail.amount_paid_cents])).toEqual([
      ['INV-0003', null, 'issued', 22500, 0], ['INV-0003', 'issued', 'issued', 22500, 10000], ['INV-0003', 'issued', 'written_off', 22500, 10000],
    ])
    // The API's timeline says the same, and the job page shows each invoice's status.
    const timeline = (await api('GET', `/jobs/${jobId}/events?limit=100`)).body.data.filter((e: any) => e.type === 'job.payment_updated').map((e: any) => e.to)
    expect(timeline).toEqual(['issued', 'issued', 'paid', 'issued', 'void', 'issued', 'issued', 'written_off'])
    for (const [n, status] of [['INV-0001', 'Paid'], ['INV-0002', 'Void'], ['INV-0003', 'Written off']]) expect(await invoice(page, n!).locator('[data-invoice-status]').innerText()).toBe(status!)

    // The printable invoice: its facts, axe, and a 360 px phone.
    await invoice(page, 'INV-0001').getByRole('link', { name: 'Printable invoice INV-0001' }).click()
    await page.waitForURL(new RegExp(`/invoices/${invoiceId}$`))
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Invoice INV-0001')
    for (const text of ['Joe & Sons Towing', '+15035550100', 'Ann Lee', 'Honda Civic', 'I-5 N at exit 299B', "Joe's Garage", 'Towing service (as quoted)', 'card', 'cash']) {
      expect(await page.getByText(text, { exact: false }).count()).toBeGreaterThan(0)
    }
    await expectAccessible(page)
    await page.setViewportSize({ width: 360, height: 740 })
    await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
    // Printed, the dashboard's header and the way back are left out.
    await page.emulateMedia({ media: 'print' })
    expect(await page.locator('.site-header').isVisible()).toBe(false)
    expect(await page.getByRole('link', { name: 'Back to the job' }).isVisible()).toBe(false)
    await page.emulateMedia({ media: 'screen' })
    // The job page with its invoices fits the phone too.
    await page.goto(`${d.base}/jobs/${jobId}`)
    await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
    await page.context().close()
    await phone.close()
  }, 90_000)

  test('a line description with no place to break (a pasted claim link) wraps: the amounts stay on the phone\'s screen and on the printout', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Lu Long' }, pickup: { location: 'SE Stark St' } })
    const jobId = made.body.id as string
    const page = await signedInPage(d.browser, d.base, DISPATCHER)
    await page.goto(`${d.base}/jobs/${jobId}`)
    await issue(page, jobId, [{ description: `Claim https://claims.example.com/${'A1B2C3D4'.repeat(16)}`, amount: '185.00' }])
    const inv = (await api('GET', `/jobs/${jobId}/events?limit=100`)).body.data.find((e: any) => e.type === 'job.payment_updated').detail.invoice_id as string
    await page.goto(`${d.base}/invoices/${inv}`)
    for (const media of ['screen', 'print'] as const) {
      await page.emulateMedia({ media })
      await page.setViewportSize({ width: media === 'print' ? 700 : 360, height: 740 })
      // The amount cell of the line, whole, inside the width: nothing scrolled away or cut off.
      const amount = page.locator('.invoice-lines tbody td.num').first()
      const box = (await amount.boundingBox())!
      expect({ media, inside: box.x >= 0 && box.x + box.width <= (media === 'print' ? 700 : 360) }).toEqual({ media, inside: true })
      expect(await amount.innerText()).toBe('$185.00')
    }
    await page.emulateMedia({ media: 'screen' })
    await expectNoHorizontalOverflow(page)
    await page.context().close()
  }, 60_000)

  test('a draft opened in two tabs: the second Issue invoice is refused naming the first, nothing billed twice; Back to a draft lists the issued one', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Bo Tran' }, pickup: { location: 'SE Division St' }, quote_cents: 9500 })
    const jobId = made.body.id as string
    const tabA = await signedInPage(d.browser, d.base, DISPATCHER)
    const tabB = await tabA.context().newPage()
    for (const tab of [tabA, tabB]) await tab.goto(`${d.base}/jobs/${jobId}/invoices/new`)
    await tabA.getByRole('button', { name: 'Issue invoice' }).click()
    await tabA.waitForURL(new RegExp(`/jobs/${jobId}\\?done=invoice_issued$`))
    const number = (await api('GET', `/jobs/${jobId}/events?limit=100`)).body.data.find((e: any) => e.type === 'job.payment_updated').detail.invoice_number as string

    await tabB.getByRole('button', { name: 'Issue invoice' }).click()
    const alert = tabB.getByRole('alert')
    await expect(alert.innerText()).resolves.toBe(`Invoice ${number} was issued for this job after this draft was opened; nothing was issued. The job's invoices are listed above the draft; press Issue invoice again to issue this one as well.`)
    expect(await tabB.getByRole('link', { name: number, exact: true }).count()).toBe(1)
    await expectAccessible(tabB)
    const issued = async () => (await api('GET', `/jobs/${jobId}/events?limit=100`)).body.data.filter((e: any) => e.type === 'job.payment_updated').length
    expect(await issued()).toBe(1)

    // Back from the job page to the draft: the draft names the invoice just issued.
    await tabA.goBack()
    await tabA.waitForURL(new RegExp(`/jobs/${jobId}/invoices/new$`))
    await expect(tabA.getByText('This job already has an invoice; issuing this draft makes another:').isVisible()).resolves.toBe(true)
    expect(await issued()).toBe(1)
    await tabA.context().close()
  }, 60_000)
})

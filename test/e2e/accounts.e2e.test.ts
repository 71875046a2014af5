/**
 * The commercial accounts directory as a dispatcher uses it, in Chromium against the compiled
 * binary: add an account with a contact on /accounts by its labels and button, set it on a job
 * from the job page's edit form, and the API (GET /jobs/{id}, GET /accounts) shows both, never the
 * private fields. Every page checked with axe and at 360 px.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import type { RunningServer } from '../binary'
import { signedInPage, startDashboard, type Dashboard } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'

let server: RunningServer
let browser: Browser
let stop: Dashboard['stop']
let key: string
let base: string
const DISPATCHER = { email: 'disp@example.com', password: 'dispatch password 1' }

beforeAll(async () => {
  ;({ server, key, base, browser, stop } = await startDashboard({ logins: [{ ...DISPATCHER, role: 'dispatcher' }] }))
}, 30_000)
afterAll(async () => {
  await stop?.()
})

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.api}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({ status: r.status, text: await r.clone().text(), body: (await r.json()) as any }))

/** Checks the page as it is now with axe, then at 360 px wide, then back at its size. */
async function checkPage(page: Page) {
  await expectAccessible(page)
  const size = page.viewportSize()!
  await page.setViewportSize({ width: 360, height: 740 })
  await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
  await page.setViewportSize(size)
}

test('a dispatcher adds an account with a contact and sets it on a job from the job page; the API shows it, never its private fields', async () => {
  const job = (await api('POST', '/jobs', { customer: { name: 'Paige Turner' }, pickup: { location: 'Hwy 26 mile 40' } })).body
  const page = await signedInPage(browser, base, DISPATCHER)
  const errors: string[] = []
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })

  await page.getByRole('link', { name: 'Accounts', exact: true }).click()
  await page.waitForURL(`${base}/accounts`)
  await checkPage(page)
  await page.getByLabel('Name', { exact: true }).fill('Cascade Motor Club')
  await page.getByLabel('Kind', { exact: true }).selectOption({ label: 'Motor club' })
  await page.getByLabel('Contact name', { exact: true }).first().fill('Roadside desk')
  await page.getByLabel('Contact phone', { exact: true }).first().fill('(503) 555-0140')
  await page.getByLabel('Contact email', { exact: true }).first().fill('desk@cascade.example')
  await page.getByLabel('Rates', { exact: true }).fill('secret-rates hook 85.00')
  await page.getByLabel('Billing address', { exact: true }).fill('secret-billing PO Box 4100')
  await page.getByLabel('Internal notes', { exact: true }).fill('secret-notes net 45')
  await Promise.all([page.waitForURL(/\/accounts\/cac_[0-9A-Z]{26}\?done=created$/), page.getByRole('button', { name: 'Save account' }).click()])
  const id = new URL(page.url()).pathname.split('/')[2]!
  await expect(page.getByRole('status').filter({ hasText: 'Account added.' }).innerText()).resolves.toBe('Account added.')
  await checkPage(page)

  const listed = await api('GET', '/accounts')
  expect(listed.status).toBe(200)
  expect(listed.body.data).toEqual([{
    object: 'commercial_account', id, name: 'Cascade Motor Club', kind: 'motor_club',
    contacts: [{ name: 'Roadside desk', role: null, phone: '+15035550140', email: 'desk@cascade.example' }],
    created_at: expect.any(String), updated_at: expect.any(String),
  }])

  await page.goto(`${base}/jobs/${job.id}`)
  await page.getByLabel('Commercial account', { exact: true }).selectOption({ label: 'Cascade Motor Club' })
  await Promise.all([page.waitForURL(`${base}/jobs/${job.id}?done=saved`), page.getByRole('button', { name: 'Save changes', exact: true }).click()])
  await page.waitForLoadState('load')
  expect(await page.locator('dt:text-is("Commercial account") + dd').innerText()).toBe('Cascade Motor Club')
  await checkPage(page)

  const shown = await api('GET', `/jobs/${job.id}`)
  expect(shown.body.commercial_account).toEqual({ id, name: 'Cascade Motor Club' })
  const events = (await api('GET', `/jobs/${job.id}/events`)).body.data
  expect(events.at(-1)).toMatchObject({ type: 'job.updated', actor: 'dispatcher', detail: { fields: ['commercial_account_id'] } })
  for (const r of [listed, shown, await api('GET', `/accounts/${id}`), await api('GET', '/jobs')]) expect(r.text).not.toMatch(/secret-(rates|billing|notes)/)
  expect(errors).toEqual([])
}, 60_000)

test('two dispatchers on one account page: the one who opened it before the other saved is refused, nothing overwritten, shown what is saved now', async () => {
  const page = await signedInPage(browser, base, DISPATCHER)
  await page.goto(`${base}/accounts`)
  await page.getByLabel('Name', { exact: true }).fill('Metro Fleet')
  await page.getByLabel('Kind', { exact: true }).selectOption({ label: 'Fleet' })
  await Promise.all([page.waitForURL(/\/accounts\/cac_[0-9A-Z]{26}\?done=created$/), page.getByRole('button', { name: 'Save account' }).click()])
  const url = page.url().replace(/\?.*$/, '')
  const other = await page.context().newPage()
  await other.goto(url)
  await page.goto(url)

  // The other dispatcher renames it; this page, opened before, changes the kind.
  await other.getByLabel('Name', { exact: true }).fill('Metro Fleet Services')
  await Promise.all([other.waitForURL(`${url}?done=saved`), other.getByRole('button', { name: 'Save account' }).click()])
  // Back to the first tab, as a person would before using it (twice on a busy CI machine, on
  // PostgreSQL, this step's alert never came; passing locally every time: see the message below).
  await page.bringToFront()
  await page.getByLabel('Kind', { exact: true }).selectOption({ label: 'Dealer' })
  await page.getByRole('button', { name: 'Save account' }).click()
  const stale = page.getByRole('alert').filter({ hasText: 'Someone else saved this account after this page was opened; nothing was saved.' })
  // When it does not come, say where the page is and what the API holds, not only that it timed out.
  const id = url.split('/').at(-1)!
  await stale.waitFor({ timeout: 20_000 }).catch(async (err) => {
    throw new Error(`no stale-save alert: the page is at ${page.url()}; the API holds ${JSON.stringify((await api('GET', `/accounts/${id}`)).body)}; alerts: ${JSON.stringify(await page.getByRole('alert').allInnerTexts())} (${(err as Error).message.split('\n')[0]})`)
  })
  expect((await api('GET', `/accounts/${id}`)).body).toMatchObject({ name: 'Metro Fleet Services', kind: 'fleet' })
  // What was typed is kept; what is saved now is shown where it differs.
  expect(await page.getByLabel('Kind', { exact: true }).inputValue()).toBe('dealer')
  const savedNow = page.getByRole('region', { name: 'Saved now' })
  expect(await savedNow.locator('dt').allInnerTexts()).toEqual(['Name', 'Kind'])
  expect(await savedNow.locator('dd').allInnerTexts()).toEqual(['Metro Fleet Services', 'Fleet'])
  await checkPage(page)
  await page.context().close()
}, 60_000)

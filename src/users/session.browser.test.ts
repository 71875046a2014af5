/**
 * Sessions and the sign-in lock as a person in Chromium meets them, with the service's clock
 * injected (in-process over a real socket) so hours and days pass without waiting: a session
 * ends after 12 idle hours and after 7 days however busy, and ten wrong passwords lock an email
 * for 15 minutes, the right password included, then it opens again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startTestApi, type TestApi } from '../../test/kit'
import { launchChromium } from '../../test/browser/chromium'
import { MAX_REQUEST_BODY_BYTES } from '../platform/route-props'
import { createUser } from './create-user'

const HOUR = 3_600_000
let api: TestApi
let server: ReturnType<typeof Bun.serve>
let browser: Browser
let base: string

beforeAll(async () => {
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: MAX_REQUEST_BODY_BYTES, fetch: (req) => api.raw(req) })
  base = `http://localhost:${server.port}`
  api = startTestApi({ TOWLINE_PUBLIC_URL: base, TOWLINE_TILE_URL: '' })
  for (const email of ['idle@example.com', 'busy@example.com', 'locked@example.com', 'typing@example.com', 'other@example.com']) {
    await createUser(api.contexts.forOperator(api.accountId), { email, role: 'dispatcher', password: 'the right password' })
  }
  browser = await launchChromium()
}, 30_000)
afterAll(async () => {
  await browser?.close()
  server?.stop(true)
  api?.close()
})

async function signIn(email: string, password = 'the right password'): Promise<Page> {
  const page = await (await browser.newContext()).newPage()
  await page.goto(`${base}/board`)
  await page.waitForURL(`${base}/login?next=%2Fboard`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/board`)
  return page
}

test('a session ends after 12 hours without a request: the next page is the sign-in page', async () => {
  const page = await signIn('idle@example.com')
  api.clock.advance(11 * HOUR)
  await page.reload()
  expect(new URL(page.url()).pathname).toBe('/board')
  api.clock.advance(12 * HOUR + 60_000)
  await page.reload()
  expect(page.url()).toBe(`${base}/login?next=%2Fboard`)
  expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(1)
  await page.context().close()
}, 30_000)

test('a session ends 7 days after sign-in even when used every few hours', async () => {
  const page = await signIn('busy@example.com')
  for (let h = 0; h < 7 * 24 - 6; h += 6) {
    api.clock.advance(6 * HOUR)
    await page.reload()
    expect(new URL(page.url()).pathname).toBe('/board')
  }
  api.clock.advance(7 * HOUR)
  await page.reload()
  expect(new URL(page.url()).pathname).toBe('/login')
  await page.context().close()
}, 60_000)

test('ten wrong passwords lock the email for 15 minutes, the right one included; then it signs in', async () => {
  const page = await (await browser.newContext()).newPage()
  await page.goto(`${base}/login`)
  for (let i = 0; i < 10; i++) {
    await page.getByLabel('Email').fill('locked@example.com')
    await page.getByLabel('Password').fill(`wrong guess ${i}`)
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()])
    await page.waitForURL(`${base}/login`)
    // The refusal takes the keyboard's focus: a screen reader reads it, Tab leads on to the form.
    if (i === 0) await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'alert' && document.activeElement.textContent!.includes('do not match'))
  }
  await page.getByLabel('Email').fill('locked@example.com')
  await page.getByLabel('Password').fill('the right password')
  const [res] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}/login` && r.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()])
  expect(res.status()).toBe(429)
  expect(Number(res.headers()['retry-after'])).toBeGreaterThan(0)
  await page.getByRole('alert').filter({ hasText: /locked for 15 more minutes/ }).waitFor()
  api.clock.advance(15 * 60_000 + 1000)
  await page.getByLabel('Email').fill('locked@example.com')
  await page.getByLabel('Password').fill('the right password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/board`)
  await page.context().close()
}, 60_000)

test('what was typed survives the session ending: the form sent goes through sign-in and comes back filled in, nothing sent until it is sent again', async () => {
  const key = api.key('all')
  const job = await (await api.request('POST', '/api/v1/jobs', { key, body: { customer: { name: 'Ann Lee' }, pickup: { location: 'I-5 N' } } })).json() as { id: string }
  const page = await signIn('typing@example.com')
  const signInAgain = async (next: string, email = 'typing@example.com') => {
    await page.waitForURL(`${base}/login?next=${encodeURIComponent(next)}`)
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('the right password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${base}${next}`)
  }
  /**
   * Presses `button` after the session ended. The page's live stream may learn of it first and
   * go to the sign-in page by itself (keeping what was typed too): then there is no button to press.
   */
  const pressAfterSessionEnded = (button: string) => page.getByRole('button', { name: button }).click({ timeout: 3000 }).catch(() => {})
  const notes = async () => ((await (await api.request('GET', `/api/v1/jobs/${job.id}/events?limit=100`, { key })).json()) as { data: any[] }).data.filter((e) => e.type === 'job.note_added')

  // A note typed on the job page, sent after the session ended (12 idle hours).
  await page.goto(`${base}/jobs/${job.id}`)
  await page.getByLabel('Note', { exact: true }).fill('Gate code 4471, call on arrival')
  api.clock.advance(12 * HOUR + 60_000)
  await pressAfterSessionEnded('Add note')
  await signInAgain(`/jobs/${job.id}`)
  expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('Gate code 4471, call on arrival')
  expect(await page.getByRole('status').filter({ hasText: 'Signed in again: what you typed before is back in its form.' }).count()).toBe(1)
  expect(await notes()).toHaveLength(0)
  await page.getByRole('button', { name: 'Add note' }).click()
  await page.waitForURL(`${base}/jobs/${job.id}?done=note`)
  const added = await notes()
  expect(added.map((e) => [e.actor, e.detail.text])).toEqual([['dispatcher', 'Gate code 4471, call on arrival']])
  // Shown once: the note field is empty again, and a reload puts nothing back.
  expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('')
  await page.reload()
  expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('')
  // From the page that said "Note added.": the way back does not say it again (nothing was added).
  await page.getByLabel('Note', { exact: true }).fill('Second thought')
  api.clock.advance(12 * HOUR + 60_000)
  await pressAfterSessionEnded('Add note')
  await signInAgain(`/jobs/${job.id}`)
  expect(await page.locator('#page-done').innerText()).toBe('')
  expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('Second thought')
  expect(await notes()).toHaveLength(1)
  // Nothing typed, nothing said: a form sent untouched comes back untouched, without the status.
  await page.goto(`${base}/jobs/new`)
  api.clock.advance(12 * HOUR + 60_000)
  await pressAfterSessionEnded('Create job')
  await signInAgain('/jobs/new')
  expect(await page.getByRole('status').filter({ hasText: 'Signed in again' }).count()).toBe(0)

  // A whole new job typed, the session ending meanwhile: Create job signs in first, then the form is back.
  await page.goto(`${base}/jobs/new`)
  await page.getByLabel('Customer name', { exact: true }).fill('Bo Tran')
  await page.getByLabel('Pickup', { exact: true }).fill('SE Division St and 82nd')
  api.clock.advance(12 * HOUR + 60_000)
  await pressAfterSessionEnded('Create job')
  await signInAgain('/jobs/new')
  expect(await page.getByLabel('Customer name', { exact: true }).inputValue()).toBe('Bo Tran')
  expect(await page.getByLabel('Pickup', { exact: true }).inputValue()).toBe('SE Division St and 82nd')
  await page.getByRole('button', { name: 'Create job' }).click()
  await page.waitForURL(/\/jobs\/job_[0-9A-Z]{26}\?done=created$/)
  const made = (await (await api.request('GET', `/api/v1/jobs/${new URL(page.url()).pathname.split('/')[2]}`, { key })).json()) as any
  expect([made.customer.name, made.pickup.location]).toEqual(['Bo Tran', 'SE Division St and 82nd'])

  // Someone else signing in on the same tab gets none of it.
  await page.goto(`${base}/jobs/${job.id}`)
  await page.getByLabel('Note', { exact: true }).fill('Not for the next person')
  api.clock.advance(12 * HOUR + 60_000)
  await pressAfterSessionEnded('Add note')
  await signInAgain(`/jobs/${job.id}`, 'other@example.com')
  expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('')
  expect(await page.getByRole('status').filter({ hasText: 'Signed in again' }).count()).toBe(0)
  await page.context().close()
}, 60_000)

test('a commercial account page sent after signing in again is still checked against what it was opened on: someone else\'s save meanwhile is not overwritten', async () => {
  const operator = api.contexts.forOperator(api.accountId)
  const { createCommercialAccount } = await import('../commercial-accounts/create-commercial-account')
  const { updateCommercialAccount } = await import('../commercial-accounts/update-commercial-account')
  const entry = createCommercialAccount(operator, { name: 'Valley Motor Club', kind: 'motor_club', contacts: [], rates: 'hook 90.00' })
  const page = await signIn('typing@example.com')
  await page.goto(`${base}/accounts/${entry.id}`)
  await page.getByLabel('Billing address', { exact: true }).fill('PO Box 7, Salem OR')
  // Someone else saves the rates; then the session ends; then this page is sent.
  updateCommercialAccount(operator, entry.id, { name: 'Valley Motor Club', kind: 'motor_club', contacts: [], rates: 'hook 99.00', billing_address: '', internal_notes: '' })
  api.clock.advance(12 * HOUR + 60_000)
  await page.getByRole('button', { name: 'Save account' }).click()
  await page.waitForURL(`${base}/login?next=${encodeURIComponent(`/accounts/${entry.id}`)}`)
  await page.getByLabel('Email').fill('typing@example.com')
  await page.getByLabel('Password').fill('the right password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/accounts/${entry.id}`)
  expect(await page.getByLabel('Billing address', { exact: true }).inputValue()).toBe('PO Box 7, Salem OR')
  await page.getByRole('button', { name: 'Save account' }).click()
  await page.getByRole('alert').filter({ hasText: 'Someone else saved this account after this page was opened; nothing was saved.' }).waitFor()
  // The other's rates are in the form (only what this person typed came back), so saving again keeps both.
  expect(await page.getByRole('region', { name: 'Saved now' }).locator('dt').allInnerTexts()).toEqual(['Billing address'])
  expect(await page.getByLabel('Rates', { exact: true }).inputValue()).toBe('hook 99.00')
  await page.getByRole('button', { name: 'Save account' }).click()
  await page.waitForURL(`${base}/accounts/${entry.id}?done=saved`)
  expect(await page.getByLabel('Rates', { exact: true }).inputValue()).toBe('hook 99.00')
  expect(await page.getByLabel('Billing address', { exact: true }).inputValue()).toBe('PO Box 7, Salem OR')
  await page.context().close()
}, 60_000)

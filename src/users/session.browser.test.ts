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
  for (const email of ['idle@example.com', 'busy@example.com', 'locked@example.com']) {
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

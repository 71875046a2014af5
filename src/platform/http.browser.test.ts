/**
 * The HTTP layer as Chromium meets it (in-process, over a real socket, page fixtures mounted):
 * a page's own form posts pass the same-origin guard under the page's headers, a browser's
 * multipart upload is read field by field, and a page on another port of the same host, the
 * attack SameSite=Lax cookies do not stop, is refused before anything runs.
 *
 * The service is reached as http://towline.lan:<port> (Chromium maps the name to 127.0.0.1): a
 * plain-http LAN name is no secure context, so Chromium sends no Sec-Fetch-Site, and the page's
 * own posts pass only because its Referrer-Policy lets their Origin through.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestApi, type TestApi } from '../../test/kit'
import { pageFixtures, type Calls } from '../../test/page-fixtures'
import { launchChromium } from '../../test/browser/chromium'
import { MAX_REQUEST_BODY_BYTES } from './route-props'

const calls: Calls = {}
let api: TestApi
let server: ReturnType<typeof Bun.serve>
let attacker: ReturnType<typeof Bun.serve>
let browser: Browser
let base: string

beforeAll(async () => {
  // The public URL must be the origin the browser sees, so the port is taken before the app is made.
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: MAX_REQUEST_BODY_BYTES, fetch: (req) => api.raw(req) })
  base = `http://towline.lan:${server.port}`
  api = startTestApi({ TOWLINE_PUBLIC_URL: base, TOWLINE_TILE_URL: '' }, { pages: [pageFixtures(calls)] })
  attacker = Bun.serve({
    port: 0, hostname: '127.0.0.1',
    fetch: () => new Response(`<!doctype html><title>Win a prize</title><form method="post" action="${base}/fixture/form"><input name="name" value="pwned"><button>Claim</button></form>`, { headers: { 'content-type': 'text/html' } }),
  })
  browser = await launchChromium(['--host-resolver-rules=MAP towline.lan 127.0.0.1'])
})
afterAll(async () => {
  await browser?.close()
  attacker?.stop(true)
  server?.stop(true)
  api?.close()
})

test("a page's own forms pass the guard: urlencoded with a list of checkboxes, and a multipart upload with a chosen and an empty file input", async () => {
  const page = await browser.newPage()
  const violations: string[] = []
  page.on('console', (m) => { if (m.text().includes('Content Security Policy')) violations.push(m.text()) })
  await page.goto(`${base}/fixture/forms`)
  await Promise.all([page.waitForURL(`${base}/fixture/form`), page.getByRole('button', { name: 'Save' }).click()])
  expect(JSON.parse(await page.locator('body').innerText())).toEqual({ name: 'Ann Lee', scopes: ['jobs:read', 'roster:read'] })
  await page.goto(`${base}/fixture/forms`)
  await page.locator('input[name="photo"]').setInputFiles({ name: 'bumper.jpg', mimeType: 'image/jpeg', buffer: Buffer.from('not really a jpeg, but bytes') })
  await Promise.all([page.waitForURL(`${base}/fixture/photo`), page.getByRole('button', { name: 'Upload' }).click()])
  const got = JSON.parse(await page.locator('body').innerText())
  expect(got).toEqual({ caption: 'Front bumper', photo: { file: 'bumper.jpg', type: 'image/jpeg', size: 28 }, sha256: new Bun.CryptoHasher('sha256').update('not really a jpeg, but bytes').digest('hex') })
  expect(violations).toEqual([])
}, 30_000)

test('a page on another port of the same host cannot post to a page route: 403 page, nothing ran', async () => {
  const before = calls.form ?? 0
  const page = await browser.newPage()
  await page.goto(`http://127.0.0.1:${attacker.port}/`)
  const [response] = await Promise.all([page.waitForResponse(`${base}/fixture/form`), page.getByRole('button', { name: 'Claim' }).click()])
  expect(response.status()).toBe(403)
  expect(await page.title()).toBe('403 Not allowed · Towline')
  expect(calls.form ?? 0).toBe(before)
}, 30_000)

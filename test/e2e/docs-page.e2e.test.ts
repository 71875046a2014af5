/** The interactive API reference renders in a real browser with no internet access. */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { freshFolder, startServer, type RunningServer } from '../binary'
import { launchChromium } from '../browser/chromium'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  folder?.cleanup()
})

test('the docs page lists the operations, loading nothing from outside this server, under its Content-Security-Policy', async () => {
  const page = await browser.newPage()
  await page.addInitScript(() => {
    const seen: string[] = ((window as any).__cspViolations = [])
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`))
  })
  const outside: string[] = []
  page.on('request', (r) => { if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) outside.push(r.url()) })
  const scriptEncoding = new Promise<string | undefined>((resolve) => page.on('response', (r) => {
    if (r.url().endsWith('/api/v1/docs/scalar.js')) resolve(r.headers()['content-encoding'])
  }))
  await page.goto(server.url + '/api/v1/docs')
  await page.getByText('Who the key is').first().waitFor({ timeout: 15_000 })
  await page.getByText('Jobs', { exact: true }).first().click()
  await page.getByText('Reopen a finished job').first().waitFor({ timeout: 15_000 })
  const text = await page.locator('body').innerText()
  for (const summary of ['List jobs', 'Create a job', 'Reopen a finished job', 'Roster', 'Services']) expect(text).toContain(summary)
  await page.screenshot({ path: `${folder.dir}/docs.png` })
  expect(outside).toEqual([])
  // The policy allows only this origin's scripts; the one thing it refuses is a probe of eval
  // (zod's `try { Function('') }`), which falls back to plain code, as the page above shows.
  const violations: string[] = await page.evaluate(() => (window as any).__cspViolations)
  expect(violations.filter((v) => v !== 'script-src eval')).toEqual([])
  expect((await page.request.get(server.url + '/api/v1/docs')).headers()['content-security-policy']).toContain("script-src 'self';")
  // The 4.3 MB script travelled compressed and still ran (the page above rendered).
  expect(['br', 'gzip']).toContain((await scriptEncoding)!)
}, 30_000)

test("the docs page offers none of Scalar's cloud buttons (AI agent, MCP, deploy/share toolbar, open in the Scalar app)", async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
  await page.goto(server.url + '/api/v1/docs')
  await page.getByText('Who the key is').first().waitFor({ timeout: 15_000 })
  const visibleControls = () => page.locator('button, a').evaluateAll((els) =>
    els.filter((e) => (e as HTMLElement).offsetParent !== null).map((e) => (e.textContent ?? '').trim().replace(/\s+/g, ' ')))
  const cloud = /Ask AI|Generate MCP|Deploy|Share|Developer Tools|Configure|Open API Client|VS Code|Cursor/
  expect((await visibleControls()).filter((t) => cloud.test(t))).toEqual([])
  expect(await page.locator('body').innerText()).not.toMatch(/Ask AI|Generate MCP/)
  // The in-page request tool stays (it talks to this server), without its "open in the app" button.
  await page.getByRole('button', { name: /Test Request/ }).first().click()
  await page.getByRole('button', { name: /Send/ }).first().waitFor({ timeout: 15_000 })
  expect((await visibleControls()).filter((t) => cloud.test(t))).toEqual([])
}, 30_000)

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

test('the docs page lists the operations, loading nothing from outside this server', async () => {
  const page = await browser.newPage()
  const outside: string[] = []
  page.on('request', (r) => { if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) outside.push(r.url()) })
  await page.goto(server.url + '/api/v1/docs')
  await page.getByText('Who the key is').first().waitFor({ timeout: 15_000 })
  await page.getByText('Jobs', { exact: true }).first().click()
  await page.getByText('Reopen a finished job').first().waitFor({ timeout: 15_000 })
  const text = await page.locator('body').innerText()
  for (const summary of ['List jobs', 'Create a job', 'Reopen a finished job', 'Roster', 'Services']) expect(text).toContain(summary)
  await page.screenshot({ path: `${folder.dir}/docs.png` })
  expect(outside).toEqual([])
}, 30_000)

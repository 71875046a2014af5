/**
 * The jobs list as a dispatcher uses it, in Chromium against the compiled binary: a phone typed
 * otherwise than it was entered, a plate, a reference; an archived job found only with Include
 * archived; a refused search; axe-core; a 360 px phone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { apiCaller, cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'
import { launchChromium } from '../browser/chromium'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let key: string
/** The public URL (http://localhost:<port>), where the pages are opened. */
let base: string
const USER = { email: 'disp@example.com', password: 'dispatch password 1' }
const api = apiCaller(() => server, () => key)
const made: Record<string, string> = {}

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
  base = server.url.replace('127.0.0.1', 'localhost')
  expect(cli(folder.bin, ['users', 'create', '--email', USER.email, '--role', 'dispatcher', '--password', USER.password], { cwd: folder.dir }).code).toBe(0)
  const jobs = {
    phone: { customer: { name: 'Phoebe Caller', phone: '(503) 555-0142' }, pickup: { location: 'Exit 9' } },
    plate: { customer: { name: 'Pete Plate' }, pickup: { location: 'Main St' }, vehicle: { make: 'Ford', plate: '8XYZ 321' } },
    ref: { customer: { name: 'Rita Reference' }, pickup: { location: 'Pier 4' }, external_ref: 'AAA-77123' },
    archived: { customer: { name: 'Arch Ived' }, pickup: { location: 'Old yard' }, external_ref: 'ARCH-5' },
    noise: { customer: { name: 'Nora Noise', phone: '(503) 555-0199' }, pickup: { location: 'Elsewhere' }, vehicle: { plate: '8XYZ 999' }, external_ref: 'AAA-99' },
  }
  for (const [name, body] of Object.entries(jobs)) {
    const res = await api('POST', '/jobs', body)
    expect(res.status).toBe(201)
    made[name] = res.body.id
  }
  expect((await api('PATCH', `/jobs/${made.archived}`, { status: 'cancelled', cancel_reason: 'customer left' })).status).toBe(200)
  expect(cli(folder.bin, ['jobs', 'archive', made.archived!], { cwd: folder.dir }).code).toBe(0)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  folder?.cleanup()
})

/** Signs in from the jobs list, which the sign-in page returns to. */
async function openJobs(viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  await page.goto(`${base}/jobs`)
  expect(new URL(page.url()).pathname).toBe('/login')
  await page.getByLabel('Email').fill(USER.email)
  await page.getByLabel('Password').fill(USER.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/jobs`)
  return page
}

/** Types a search and sends it with the Search button; returns the job ids listed. */
async function search(page: Page, fields: { q?: string; from?: string; to?: string; archived?: boolean }): Promise<string[]> {
  await page.getByLabel('Search').fill(fields.q ?? '')
  await page.getByLabel('From', { exact: true }).fill(fields.from ?? '')
  await page.getByLabel('To', { exact: true }).fill(fields.to ?? '')
  await page.getByLabel('Include archived', { exact: true }).setChecked(fields.archived ?? false)
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Search' }).click()])
  return page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job-id')!))
}

describe('the jobs list in Chromium', () => {
  test('finds a phone typed otherwise than it was entered, a plate, and a reference; each result opens its job', async () => {
    const page = await openJobs()
    expect((await page.locator('tbody tr').count())).toBe(4) // recent jobs: every job but the archived one
    expect(await search(page, { q: '+1 503.555.0142' })).toEqual([made.phone])
    expect(await search(page, { q: '5035550142' })).toEqual([made.phone])
    expect(await search(page, { q: '8xyz321' })).toEqual([made.plate])
    expect(await search(page, { q: 'aaa-771' })).toEqual([made.ref])
    // The search is in the address, so a reload or a shared link shows the same list.
    expect(new URL(page.url()).searchParams.get('q')).toBe('aaa-771')
    expect(await page.getByRole('link', { name: 'Rita Reference' }).getAttribute('href')).toBe(`/jobs/${made.ref}`)
    const [opened] = await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Rita Reference' }).click()])
    expect({ status: opened?.status(), url: page.url() }).toEqual({ status: 200, url: `${base}/jobs/${made.ref}` })
    await page.context().close()
  }, 30_000)

  test('an archived job is found only with Include archived, marked Archived', async () => {
    const page = await openJobs()
    expect(await search(page, { q: 'ARCH-5' })).toEqual([])
    expect(await page.getByRole('status').innerText()).toBe('No jobs match this search.')
    expect(await search(page, { q: 'ARCH-5', archived: true })).toEqual([made.archived])
    expect(await page.locator(`tr[data-job-id="${made.archived}"]`).innerText()).toContain('Archived')
    expect(await page.getByLabel('Include archived', { exact: true }).isChecked()).toBe(true)
    await page.context().close()
  }, 30_000)

  test('To before From is refused beside To and in the alert, listing nothing; the pages pass axe-core and fit 360 px', async () => {
    const page = await openJobs({ width: 360, height: 740 })
    await expectAccessible(page)
    await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
    expect(await search(page, { q: 'Phoebe', from: '2026-03-05', to: '2026-03-01' })).toEqual([])
    expect(await page.getByRole('alert').innerText()).toContain('To: must be the same day as From or later')
    expect(await page.getByLabel('To', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    expect(await page.getByLabel('Search').inputValue()).toBe('Phoebe')
    await expectAccessible(page)
    await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
    await page.context().close()
  }, 30_000)
})

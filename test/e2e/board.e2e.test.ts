/**
 * The dashboard as a dispatcher uses it, in Chromium against the compiled binary: signing in
 * and out, two boards seeing each other's and the API's changes live, New job, a dispatcher
 * kept out of Developers, and the pages passing axe-core.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { cli, freshFolder, apiCaller, type RunningServer } from '../binary'
import { signedInPage, startDashboard, type Dashboard, type Login } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let stop: Dashboard['stop']
let key: string
/** The public URL (the default, http://localhost:<port>): pages are opened where their own posts pass the same-origin check. */
let base: string
const OWNER = { email: 'owner@example.com', password: 'owner password 1' }
const DISPATCHER = { email: 'disp@example.com', password: 'dispatch password 1' }

beforeAll(async () => {
  ;({ folder, server, key, base, browser, stop } = await startDashboard({ logins: [{ ...OWNER, role: 'owner' }, { ...DISPATCHER, role: 'dispatcher' }] }))
}, 30_000)
afterAll(async () => {
  await stop?.()
})

/** A fresh context signed in as `user`, on the board. */
const signIn = (user: Login, viewport = { width: 1280, height: 800 }): Promise<Page> => signedInPage(browser, base, user, viewport)
const api = apiCaller(() => server, () => key)
const card = (page: Page, status: string, id: string) => page.locator(`[data-status="${status}"] [data-job-id="${id}"]`)

describe('the dispatch board in Chromium', () => {
  test('two boards see the API\'s changes live, without reload; a dispatcher\'s new job reaches the other board with actor dispatcher', async () => {
    const a = await signIn(OWNER)
    const b = await signIn(DISPATCHER)
    for (const p of [a, b]) await p.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))

    const made = await api('POST', '/jobs', { customer: { name: 'Live Larry' }, pickup: { location: 'Exit 9' }, vehicle: { make: 'Subaru', plate: 'LIVE1' } })
    expect(made.status).toBe(201)
    for (const p of [a, b]) await card(p, 'confirmed', made.body.id).waitFor({ timeout: 2000 })
    expect(await card(b, 'confirmed', made.body.id).innerText()).toContain('Live Larry')

    const unit = cli(folder.bin, ['units', 'add', '--name', 'Truck 7'], { cwd: folder.dir }).stdout.trim()
    await api('POST', `/jobs/${made.body.id}/assign`, { unit_id: unit }).then((r) => expect(r.status).toBe(200))
    for (const p of [a, b]) {
      await card(p, 'dispatched', made.body.id).waitFor({ timeout: 2000 })
      expect(await card(p, 'confirmed', made.body.id).count()).toBe(0)
      expect(await card(p, 'dispatched', made.body.id).innerText()).toContain('Truck 7')
    }
    await api('PATCH', `/jobs/${made.body.id}`, { status: 'cancelled', cancel_reason: 'customer got a jump start' })
    for (const p of [a, b]) await p.locator(`[data-job-id="${made.body.id}"]`).waitFor({ state: 'detached', timeout: 2000 })

    // New job on board B, typed by the dispatcher, appears on board A.
    await b.getByRole('button', { name: 'New job', exact: true }).click()
    await b.getByLabel('Customer name').fill('Typed Tina')
    await b.getByLabel('Phone').fill('503-555-0199')
    await b.getByLabel('Pickup').fill('Burnside Bridge')
    await b.getByLabel('Destination').fill('Home')
    await b.getByRole('button', { name: 'Create job' }).click()
    await b.waitForURL(/\/jobs\/job_[0-9A-Za-z]+\?done=created$/)
    const id = new URL(b.url()).pathname.split('/')[2]!
    await card(a, 'confirmed', id).waitFor({ timeout: 2000 })
    const events = await api('GET', `/jobs/${id}/events`)
    expect(events.body.data[0]).toMatchObject({ type: 'job.created', actor: 'dispatcher' })
    expect(events.body.data[0].detail.user_id).toMatch(/^usr_/)
    await a.context().close()
    await b.context().close()
  }, 30_000)

  test("a card's age is counted on the server's clock: a dispatcher's PC three hours fast still shows a job just made as 0 min", async () => {
    const made = (await api('POST', '/jobs', { customer: { name: 'Clock Carla' }, pickup: { location: 'Exit 5' } })).body
    const page = await signIn(DISPATCHER)
    await page.clock.install({ time: Date.now() + 3 * 3600_000 })
    await page.goto(`${base}/board`)
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
    expect(await card(page, 'confirmed', made.id).locator('.card-age').innerText()).toMatch(/^[01] min$/)
    await page.context().close()
  }, 30_000)

  test('a job arriving while the board is open stands out, marked New and announced, until its page is opened', async () => {
    const old = (await api('POST', '/jobs', { customer: { name: 'Old Olga' }, pickup: { location: 'Exit 1' } })).body
    const page = await signIn(OWNER)
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
    const made = (await api('POST', '/jobs', { customer: { name: 'Newcomer Nell' }, pickup: { location: 'Exit 2' } })).body
    const fresh = card(page, 'confirmed', made.id)
    await fresh.waitFor({ timeout: 2000 })
    // Seen: a badge saying New and a border unlike an old card's; heard: a status naming the job.
    expect(await fresh.locator('.card-new-badge').innerText()).toBe('New')
    expect(await card(page, 'confirmed', old.id).locator('.card-new-badge').count()).toBe(0)
    const look = (id: string) => page.locator(`[data-job-id="${id}"]`).evaluate((el) => { const s = getComputedStyle(el); return `${s.borderTopColor} ${s.boxShadow}` })
    expect(await look(made.id)).not.toBe(await look(old.id))
    expect(await page.getByRole('status').filter({ hasText: 'New job: Newcomer Nell.' }).count()).toBe(1)
    // Opened, then back on the board: no longer marked.
    await fresh.getByRole('link', { name: 'Newcomer Nell' }).click()
    await page.waitForURL(new RegExp(`/jobs/${made.id}$`))
    await page.goto(`${base}/board`)
    await card(page, 'confirmed', made.id).waitFor()
    expect(await card(page, 'confirmed', made.id).locator('.card-new-badge').count()).toBe(0)
    expect(await look(made.id)).toBe(await look(old.id))
    // The whole card opens its job, not only the name: a tap at its bottom corner.
    const box = (await card(page, 'confirmed', old.id).boundingBox())!
    await page.mouse.click(box.x + box.width - 4, box.y + box.height - 4)
    await page.waitForURL(new RegExp(`/jobs/${old.id}$`))
    await page.context().close()
  }, 30_000)

  test('the keyboard stays on a job\'s card when the job changes or moves column; a move is said, several new jobs at once are all said', async () => {
    const page = await signIn(DISPATCHER)
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
    const made = (await api('POST', '/jobs', { customer: { name: 'Focus Fran' }, pickup: { location: 'Exit 3' } })).body
    await card(page, 'confirmed', made.id).waitFor({ timeout: 2000 })
    await card(page, 'confirmed', made.id).getByRole('link', { name: 'Focus Fran' }).focus()
    /** Waits until the job's card is drawn anew (the one the keyboard was on is gone), then says which job holds the focus and on what. */
    const redrawn = async () => {
      await page.evaluate((id) => { (document.querySelector(`[data-job-id="${id}"]`) as any).__old = true }, made.id)
      return async () => {
        await page.waitForFunction((id) => { const c = document.querySelector(`[data-job-id="${id}"]`) as any; return c && !c.__old }, made.id, { timeout: 3000 })
        return page.evaluate(() => { const el = document.activeElement as HTMLElement; return { job: el.closest<HTMLElement>('[data-job-id]')?.dataset.jobId ?? null, column: el.closest<HTMLElement>('[data-status]')?.dataset.status ?? null, tag: el.tagName } })
      }
    }
    // A note: the card is redrawn where it is; the keyboard is still on its link.
    let after = await redrawn()
    expect((await api('POST', `/jobs/${made.id}/notes`, { text: 'Gate code 1234' })).status).toBe(201)
    expect(await after()).toEqual({ job: made.id, column: 'confirmed', tag: 'A' })
    // Assigned: the card moves to Dispatched and the keyboard goes with it; the move is said.
    const unit = cli(folder.bin, ['units', 'add', '--name', 'Truck 12'], { cwd: folder.dir }).stdout.trim()
    after = await redrawn()
    expect((await api('POST', `/jobs/${made.id}/assign`, { unit_id: unit })).status).toBe(200)
    expect(await after()).toEqual({ job: made.id, column: 'dispatched', tag: 'A' })
    await page.locator('#board-announce').filter({ hasText: 'Focus Fran: Dispatched.' }).waitFor({ timeout: 2000 })
    // Three new jobs at once: one status names all three.
    await Promise.all(['Burst Ann', 'Burst Ben', 'Burst Cy'].map((name) => api('POST', '/jobs', { customer: { name }, pickup: { location: 'Exit 5' } })))
    await page.waitForFunction(() => ['Burst Ann', 'Burst Ben', 'Burst Cy'].every((n) => document.getElementById('board-announce')?.textContent?.includes(`New job: ${n}.`)), undefined, { timeout: 3000 })
    // Cancelled: the card leaves the board, the keyboard goes to the board, and it is said.
    expect((await api('PATCH', `/jobs/${made.id}`, { status: 'cancelled', cancel_reason: 'customer found a ride' })).status).toBe(200)
    await page.locator(`[data-job-id="${made.id}"]`).waitFor({ state: 'detached', timeout: 2000 })
    await page.locator('#board-announce').filter({ hasText: 'Focus Fran left the board.' }).waitFor({ timeout: 2000 })
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('board')
    await page.context().close()
  }, 30_000)

  test("units added and moved since the board opened reach its list and map without a reload (a position is not a job event: the board asks every 15 s)", async () => {
    const page = await signIn(OWNER)
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
    const made = JSON.parse(cli(folder.bin, ['units', 'add', '--name', 'Late Truck', '--device-id', 'late-truck-device-1', '--json'], { cwd: folder.dir }).stdout)
    const fix = await fetch(`${server.url}/osmand?id=${made.device_id}&lat=45.51&lon=-122.68&timestamp=${Math.floor(Date.now() / 1000)}`)
    expect(fix.status).toBe(200)
    await page.locator(`#unit-list [data-unit-id="${made.id}"]`).waitFor({ timeout: 25_000 })
    expect(await page.locator(`#unit-list [data-unit-id="${made.id}"]`).innerText()).not.toContain('no position yet')
    expect(await page.locator('.board-map .leaflet-marker-icon').count()).toBeGreaterThan(0)
    await page.context().close()
  }, 40_000)

  test('sign-out ends the session on the server: the board then goes to the sign-in page', async () => {
    const page = await signIn(DISPATCHER)
    const cookies = await page.context().cookies()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(`${base}/login`)
    // The old cookie, replayed, opens nothing.
    const replay = await fetch(`${server.url}/board`, { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') }, redirect: 'manual' })
    expect(replay.status).toBe(303)
    await page.context().close()
  }, 30_000)

  test('a dispatcher is refused Developers and Settings; the owner sees their links', async () => {
    const disp = await signIn(DISPATCHER)
    expect(await disp.getByRole('link', { name: 'Developers' }).count()).toBe(0)
    const res = await disp.goto(`${base}/developers`)
    expect([403, 404]).toContain(res!.status())
    const owner = await signIn(OWNER)
    expect(await owner.getByRole('link', { name: 'Developers' }).count()).toBe(1)
    await disp.context().close()
    await owner.context().close()
  }, 30_000)

  test('the sign-in page, the board and New job pass axe-core, and the board fits a 360 px phone', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${base}/login`)
    await expectAccessible(page)
    await context.close()
    const board = await signIn(OWNER, { width: 360, height: 740 })
    await expectAccessible(board)
    await expectNoHorizontalOverflow(board, { scrollers: ['.board'] })
    await board.goto(`${base}/jobs/new`)
    await expectAccessible(board)
    await board.context().close()
  }, 30_000)
})

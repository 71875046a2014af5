/**
 * The job page as a dispatcher uses it, in Chromium against the compiled binary: each action by
 * its button and labels, proved by what the API then shows (status, timeline event with actor
 * dispatcher and the user's id); a page left open while the API moved the job refused and saying
 * so; a replayed post from another origin refused; another account's job not found; a board that
 * lost its connection catching up with nothing missed and nothing twice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createServer, connect, type Socket } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { cli, freshFolder, apiCaller, type RunningServer } from '../binary'
import { createLogin, signedInPage, startDashboard, type Dashboard, type Login } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let stop: Dashboard['stop']
let key: string
let base: string
let unit: string
const DISPATCHER = { email: 'disp@example.com', password: 'dispatch password 1' }
const STRANGER = { email: 'eve@other.example', password: 'other password 12' }

beforeAll(async () => {
  ;({ folder, server, key, base, browser, stop } = await startDashboard({ logins: [{ ...DISPATCHER, role: 'dispatcher' }] }))
  const other = cli(folder.bin, ['accounts', 'create', '--name', 'Other Towing'], { cwd: folder.dir }).stdout.trim().split(/\s+/)[0]!
  createLogin(folder, { ...STRANGER, role: 'owner' }, other)
  unit = cli(folder.bin, ['units', 'add', '--name', 'Truck 7', '--driver-phone', '503-555-0177'], { cwd: folder.dir }).stdout.trim().match(/^unit_[0-9A-Za-z]+/)![0]
}, 30_000)
afterAll(async () => {
  await stop?.()
})

/** A fresh context signed in as `user`, on the board. */
const signIn = (user: Login, viewport = { width: 1280, height: 900 }): Promise<Page> => signedInPage(browser, base, user, viewport)
const api = apiCaller(() => server, () => key)
const lastEvent = async (id: string) => (await api('GET', `/jobs/${id}/events?limit=100`)).body.data.at(-1)
const userId = () => (JSON.parse(cli(folder.bin, ['users', 'list', '--json'], { cwd: folder.dir }).stdout).data as { id: string; email: string }[]).find((u) => u.email === DISPATCHER.email)!.id
/** Clicks a button and waits for the page it leads to. */
async function click(page: Page, name: string) {
  await Promise.all([page.waitForLoadState('load'), page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name, exact: true }).click()])
  await page.waitForLoadState('load')
}

/** A loopback TCP proxy to the service whose connections can be dropped (and new ones refused) until restored. */
function cuttableProxy(targetPort: number) {
  const sockets = new Set<Socket>()
  let up = true
  const proxy = createServer((client) => {
    if (!up) { client.destroy(); return }
    const upstream = connect(targetPort, '127.0.0.1')
    for (const s of [client, upstream]) { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => {}) }
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  const listening = new Promise<number>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve((proxy.address() as { port: number }).port)))
  return {
    listening,
    drop() { up = false; for (const s of sockets) s.destroy() },
    restore() { up = true },
    close() { for (const s of sockets) s.destroy(); proxy.close() },
  }
}

describe('the job page in Chromium', () => {
  test('a dispatcher works a job from the board to the end by the page\'s buttons; the API shows each step as theirs', async () => {
    const me = userId()
    const made = await api('POST', '/jobs', { customer: { name: 'Paige Turner', phone: '503-555-0142', sms_consent: true }, pickup: { location: 'Hwy 26 mile 40' }, vehicle: { make: 'Subaru', plate: 'PG1' } })
    const id = made.body.id as string
    const page = await signIn(DISPATCHER)
    await page.locator(`[data-job-id="${id}"] a`).click()
    await page.waitForURL(`${base}/jobs/${id}`)
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Paige Turner')
    const byMe = async (type: string) => expect(await lastEvent(id)).toMatchObject({ type, actor: 'dispatcher', detail: { user_id: me } })

    await page.getByLabel('Unit', { exact: true }).selectOption({ label: 'Truck 7 (available)' })
    await click(page, 'Assign')
    expect((await api('GET', `/jobs/${id}`)).body).toMatchObject({ status: 'dispatched', unit: { id: unit } })
    expect((await api('GET', `/jobs/${id}/events`)).body.data.find((e: any) => e.type === 'job.assigned')).toMatchObject({ actor: 'dispatcher', detail: { user_id: me } })
    expect(await page.getByRole('status').filter({ hasText: 'Unit assigned.' }).count()).toBe(1)

    await click(page, 'Move to En route')
    expect((await api('GET', `/jobs/${id}`)).body.status).toBe('en_route')
    await byMe('job.status_changed')

    await page.getByLabel('Note', { exact: true }).fill('Gate code 4411')
    await page.getByLabel('Visible to customer').check()
    await click(page, 'Add note')
    expect((await lastEvent(id))).toMatchObject({ type: 'job.note_added', actor: 'dispatcher', detail: { text: 'Gate code 4411', customer_visible: true, user_id: me } })

    await page.getByLabel('Pickup', { exact: true }).fill('Hwy 26 mile 41, eastbound')
    await page.getByLabel('Quote').fill('185.00')
    await click(page, 'Save changes')
    expect((await api('GET', `/jobs/${id}`)).body).toMatchObject({ pickup: { location: 'Hwy 26 mile 41, eastbound' }, quote_cents: 18500 })
    await byMe('job.updated')

    // A file over the photo limit (10 MB) is refused beside the field before anything is sent.
    const eventsBefore = (await api('GET', `/jobs/${id}/events?limit=100`)).body.data.length
    await page.getByLabel('Photo', { exact: true }).setInputFiles({ name: 'huge.jpg', mimeType: 'image/jpeg', buffer: Buffer.alloc(11 * 1024 * 1024, 1) })
    await page.getByRole('button', { name: 'Add photo', exact: true }).click()
    await page.locator('#f-photo-error').filter({ hasText: 'is larger than 10 MB' }).waitFor({ timeout: 5000 })
    expect(await page.getByLabel('Photo', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    expect((await api('GET', `/jobs/${id}/events?limit=100`)).body.data.length).toBe(eventsBefore)

    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')
    await page.getByLabel('Photo', { exact: true }).setInputFiles({ name: 'scene.png', mimeType: 'image/png', buffer: png })
    await click(page, 'Add photo')
    expect(await lastEvent(id)).toMatchObject({ type: 'job.photo_added', actor: 'dispatcher', detail: { content_type: 'image/png', bytes: png.length, by: 'dispatcher', user_id: me } })
    // The thumbnail shows the stored image, and links to it at full size.
    const thumb = page.locator('.photos img').first()
    await thumb.scrollIntoViewIfNeeded()
    await thumb.evaluate((img: HTMLImageElement) => img.decode())
    expect(await thumb.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1)

    const textsBefore = (await api('GET', `/jobs/${id}/texts`)).body.data.length
    await click(page, 'Resend driver link')
    expect((await api('GET', `/jobs/${id}/texts`)).body.data).toHaveLength(textsBefore + 1)

    const oldLink = (await api('GET', `/jobs/${id}`)).body.tracking_url as string
    await click(page, 'New tracking link')
    const newLink = (await api('GET', `/jobs/${id}`)).body.tracking_url as string
    expect(newLink).not.toBe(oldLink)
    expect((await fetch(oldLink.replace('localhost', '127.0.0.1'))).status).toBe(410)
    expect(await page.getByRole('link', { name: newLink }).count()).toBe(1)

    // Cancel without a reason: said beside the field, nothing written; then with one.
    await click(page, 'Unassign')
    expect((await api('GET', `/jobs/${id}`)).body).toMatchObject({ status: 'confirmed', unit: null })
    await click(page, 'Cancel job')
    expect(await page.getByRole('alert').filter({ hasText: /cancel_reason|reason/i }).count()).toBeGreaterThan(0)
    expect(await page.locator('#f-reason-error').innerText()).not.toBe('')
    // The refusal has the keyboard's focus: a screen reader reads it, the next Tab goes on from there.
    await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'alert')
    // Without a connection a form is not sent into the void: the page stays, says so, and keeps what was typed.
    await page.context().setOffline(true)
    await page.getByLabel('Reason').fill('Typed while offline')
    await page.getByRole('button', { name: 'Cancel job' }).click()
    await page.getByRole('alert').filter({ hasText: 'No connection: nothing was sent.' }).waitFor({ timeout: 5000 })
    expect(await page.getByLabel('Reason').inputValue()).toBe('Typed while offline')
    await page.context().setOffline(false)
    expect((await api('GET', `/jobs/${id}`)).body.status).toBe('confirmed')
    await page.getByLabel('Reason').fill('Customer got a jump start')
    await click(page, 'Cancel job')
    expect((await api('GET', `/jobs/${id}`)).body).toMatchObject({ status: 'cancelled', cancel_reason: 'Customer got a jump start' })

    await page.getByLabel('Reason').fill('Car died again at home')
    await click(page, 'Reopen')
    expect((await api('GET', `/jobs/${id}`)).body).toMatchObject({ status: 'confirmed', reopen_count: 1 })
    await byMe('job.status_changed')

    await click(page, 'Archive')
    expect((await api('GET', `/jobs/${id}`)).body.archived).toBe(true)
    await byMe('job.archived')
    await click(page, 'Restore')
    expect((await api('GET', `/jobs/${id}`)).body.archived).toBe(false)
    await byMe('job.restored')
    await page.context().close()
  }, 60_000)

  test('a dispatcher with the board and many job pages open: pages in background tabs hold no stream, so the next page loads and its clicks go through; a tab shown again catches up', async () => {
    const board = await signIn(DISPATCHER)
    await board.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
    const jobs: string[] = []
    for (let i = 0; i < 8; i++) jobs.push((await api('POST', '/jobs', { customer: { name: `Tab ${i}` }, pickup: { location: 'Exit 8' } })).body.id)
    // Seven job pages in tabs the dispatcher is not looking at (opened in the background).
    const hidden: Page[] = []
    for (const id of jobs.slice(0, 7)) {
      const tab = await board.context().newPage()
      await tab.addInitScript(() => {
        Object.defineProperty(document, 'visibilityState', { get: () => (window as any).shown ? 'visible' : 'hidden', configurable: true })
        Object.defineProperty(document, 'hidden', { get: () => !(window as any).shown, configurable: true })
      })
      await tab.goto(`${base}/jobs/${id}`, { timeout: 10_000 })
      hidden.push(tab)
    }
    // The page looked at: it loads, goes live, and a note sent from it lands as the dispatcher's.
    const front = await board.context().newPage()
    await front.goto(`${base}/jobs/${jobs[7]}`, { timeout: 10_000 })
    await front.waitForFunction(() => document.querySelector('[data-live-status]')?.textContent === 'Live', undefined, { timeout: 10_000 })
    await front.getByLabel('Note', { exact: true }).fill('Seen from the eighth tab')
    await Promise.all([front.waitForURL(/\?done=note$/, { timeout: 10_000 }), front.getByRole('button', { name: 'Add note' }).click()])
    expect(await lastEvent(jobs[7]!)).toMatchObject({ type: 'job.note_added', actor: 'dispatcher', detail: { text: 'Seen from the eighth tab' } })
    // A background tab shown again connects and hears what happened meanwhile.
    expect((await api('POST', `/jobs/${jobs[0]}/notes`, { text: 'While you were away' })).status).toBe(201)
    await hidden[0]!.evaluate(() => { (window as any).shown = true; document.dispatchEvent(new Event('visibilitychange')) })
    await hidden[0]!.waitForFunction(() => document.querySelector('[data-live-status]')?.textContent === 'Live', undefined, { timeout: 10_000 })
    await hidden[0]!.locator('#job-changed').filter({ hasText: 'note added' }).waitFor({ timeout: 5000 })
    await board.context().close()
  }, 60_000)

  test('a page left open while the API moved the job says so when clicked, tells of the change live, and writes nothing', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Stale Steve' }, pickup: { location: 'Exit 3' }, status: 'pending' })
    const id = made.body.id as string
    const page = await signIn(DISPATCHER)
    await page.goto(`${base}/jobs/${id}`)
    await page.waitForFunction(() => document.querySelector('[data-live-status]')?.textContent === 'Live')
    expect((await api('PATCH', `/jobs/${id}`, { status: 'cancelled', cancel_reason: 'Duplicate call' })).status).toBe(200)
    // The open page hears of it (a notice, not a reload: the dispatcher may be typing).
    await page.locator('#job-changed').filter({ hasText: 'It is now Cancelled' }).waitFor({ timeout: 2000 })
    // Who did it, by the key's name as the timeline says it; a second change is said as a second one.
    expect(await page.locator('#job-changed').innerText()).toMatch(/^This job was changed since the page was loaded, last by system \(key [^)]+\): status changed\. It is now Cancelled\./)
    expect((await api('POST', `/jobs/${id}/notes`, { text: 'Caller rang back' })).status).toBe(201)
    await page.locator('#job-changed').filter({ hasText: 'changed 2 times since the page was loaded' }).waitFor({ timeout: 2000 })
    const events = (await api('GET', `/jobs/${id}/events`)).body.data.length
    await click(page, 'Move to Confirmed')
    expect(await page.getByRole('alert').filter({ hasText: 'Someone else changed this job first: it is now Cancelled, not Pending' }).count()).toBe(1)
    expect(await page.getByRole('button', { name: 'Reopen' }).count()).toBe(1)
    expect((await api('GET', `/jobs/${id}`)).body.status).toBe('cancelled')
    expect((await api('GET', `/jobs/${id}/events`)).body.data).toHaveLength(events)
    await page.context().close()
  }, 30_000)

  test('a request replayed from another origin with the session cookie is refused and writes nothing', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Replay Ray' }, pickup: { location: 'Exit 4' } })
    const id = made.body.id as string
    const page = await signIn(DISPATCHER)
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ')
    for (const origin of ['http://evil.example', `http://localhost:${new URL(base).port + 1}`, 'null']) {
      const res = await fetch(`${base.replace('localhost', '127.0.0.1')}/jobs/${id}/cancel`, {
        method: 'POST', redirect: 'manual',
        headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ to: 'cancelled', reason: 'forged by another site', expected_status: 'confirmed' }).toString(),
      })
      expect(res.status).toBe(403)
    }
    expect((await api('GET', `/jobs/${id}`)).body.status).toBe('confirmed')
    await page.context().close()
  }, 30_000)

  test("another account's login never sees this account's job: not on its board, not by its address", async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Private Pat' }, pickup: { location: 'Exit 5' } })
    const page = await signIn(STRANGER)
    expect(await page.locator(`[data-job-id="${made.body.id}"]`).count()).toBe(0)
    const res = await page.goto(`${base}/jobs/${made.body.id}`)
    expect(res!.status()).toBe(404)
    expect(await page.content()).not.toContain('Private Pat')
    await page.context().close()
  }, 30_000)

  test('a board whose connection dropped for a while catches up when back: nothing missed, nothing twice', async () => {
    // The board reaches the service through a proxy this test can cut, as a flaky network would.
    const cut = cuttableProxy(Number(new URL(server.url).port))
    const port = await cut.listening
    const page = await signIn(DISPATCHER)
    // The session cookie is the host's (ports share cookies), so the board opens through the proxy.
    await page.goto(`http://localhost:${port}/board`)
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
    cut.drop()
    await page.waitForFunction(() => !document.getElementById('live-status')?.textContent?.startsWith('Live'), null, { timeout: 10_000 })
    const made: string[] = []
    for (const name of ['Gone Gina', 'Gone Gary', 'Gone Greta']) made.push((await api('POST', '/jobs', { customer: { name }, pickup: { location: 'Exit 6' } })).body.id)
    await api('PATCH', `/jobs/${made[0]}`, { status: 'cancelled', cancel_reason: 'Found a ride' })
    await api('POST', `/jobs/${made[1]}/notes`, { text: 'still waiting' })
    expect(await page.locator(`[data-job-id="${made[1]}"]`).count()).toBe(0)
    cut.restore()
    await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'), null, { timeout: 10_000 })
    for (const id of made.slice(1)) await page.locator(`[data-status="confirmed"] [data-job-id="${id}"]`).waitFor({ timeout: 5000 })
    expect(await page.locator(`[data-job-id="${made[0]}"]`).count()).toBe(0)
    for (const id of made.slice(1)) expect(await page.locator(`[data-job-id="${id}"]`).count()).toBe(1)
    await page.context().close()
    cut.close()
  }, 30_000)

  test('the keyboard alone adds a note: type, Tab to the box, Space, Tab to the button, Enter', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Keys Kim' }, pickup: { location: 'Exit 8' } })
    const page = await signIn(DISPATCHER)
    await page.goto(`${base}/jobs/${made.body.id}`)
    await page.getByLabel('Note', { exact: true }).focus()
    await page.keyboard.type('Typed without a mouse')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Space')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Add note')
    await Promise.all([page.waitForURL(/\?done=note$/), page.keyboard.press('Enter')])
    expect(await lastEvent(made.body.id)).toMatchObject({ type: 'job.note_added', actor: 'dispatcher', detail: { text: 'Typed without a mouse', customer_visible: true } })
    await page.context().close()
  }, 30_000)

  test('Enter in the Reason field chooses neither Cancel job nor GOA: nothing is sent until one is clicked', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Enter Ed', phone: '503-555-0166', sms_consent: true }, pickup: { location: 'Exit 9' } })
    const id = made.body.id as string
    const page = await signIn(DISPATCHER)
    await page.goto(`${base}/jobs/${id}`)
    await page.getByLabel('Reason').first().fill('Nobody at the pickup')
    // Implicit submission happens within the key press: a submit event would be counted by the time it returns.
    await page.evaluate(() => { (window as any).submits = 0; document.addEventListener('submit', () => (window as any).submits++, true) })
    await page.getByLabel('Reason').first().press('Enter')
    expect(await page.evaluate(() => (window as any).submits)).toBe(0)
    expect((await api('GET', `/jobs/${id}`)).body.status).toBe('confirmed')
    expect((await api('GET', `/jobs/${id}/texts`)).body.data.map((t: { template: string }) => t.template)).toEqual(['request_received'])
    await page.context().close()
  }, 30_000)

  test("times are the company's, with its zone, whatever the dispatcher's computer is set to: the job page says what the jobs list says, and the hour a fall-back day has twice reads apart", async () => {
    const zone = (z: string) => expect(cli(folder.bin, ['accounts', 'update', '--time-zone', z], { cwd: folder.dir }).code).toBe(0)
    zone('America/Los_Angeles')
    try {
      // 08:30Z and 09:30Z on 2026-11-01 are both 01:30 in Los Angeles: daylight time, then standard time.
      const first = (await api('POST', '/jobs', { customer: { name: 'Early Ed' }, pickup: { location: 'SW Barbur Blvd' }, eta_at: '2026-11-01T08:30:00Z' })).body
      const second = (await api('POST', '/jobs', { customer: { name: 'Later Lou' }, pickup: { location: 'SW Barbur Blvd' }, eta_at: '2026-11-01T09:30:00Z' })).body
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'Asia/Tokyo', locale: 'ja-JP' })
      const page = await context.newPage()
      await page.goto(`${base}/login`)
      await page.getByLabel('Email', { exact: true }).fill(DISPATCHER.email)
      await page.getByLabel('Password', { exact: true }).fill(DISPATCHER.password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForURL(`${base}/board`)
      const fact = (name: string) => page.locator('dt', { hasText: new RegExp(`^${name}$`) }).locator('xpath=following-sibling::dd[1]').textContent()
      await page.goto(`${base}/jobs/${first.id}`)
      expect(await fact('ETA')).toBe('2026-11-01 01:30 PDT')
      const created = await fact('Created')
      expect(created).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d P[SD]T$/)
      // The timeline says an ETA change in the same words.
      expect((await api('PATCH', `/jobs/${second.id}`, { eta_at: '2026-11-01T09:30:00Z' })).status).toBe(200)
      expect((await api('PATCH', `/jobs/${second.id}`, { eta_at: '2026-11-01T08:30:00Z' })).status).toBe(200)
      expect((await api('PATCH', `/jobs/${second.id}`, { eta_at: '2026-11-01T09:30:00Z' })).status).toBe(200)
      await page.goto(`${base}/jobs/${second.id}`)
      expect(await fact('ETA')).toBe('2026-11-01 01:30 PST')
      expect(await page.locator('[data-event-type="job.eta_updated"]').evaluateAll((items) => items.map((li) => li.querySelector('p')!.textContent!.replace(/^job\.eta_updated\s*/, ''))))
        .toEqual(['ETA 2026-11-01 01:30 PST', 'ETA 2026-11-01 01:30 PDT'])
      await page.goto(`${base}/jobs?q=${encodeURIComponent('Early Ed')}`)
      expect(await page.locator('tr', { hasText: 'Early Ed' }).locator('td').first().textContent()).toBe(created)
      await context.close()
    } finally {
      zone('UTC')
    }
  }, 30_000)

  test('the job page passes axe-core and fits a 360 px phone', async () => {
    const made = await api('POST', '/jobs', { customer: { name: 'Axe Alice', phone: '503-555-0150', sms_consent: true }, pickup: { location: 'A very long pickup description on the shoulder of the interstate near the bridge' } })
    await api('POST', `/jobs/${made.body.id}/assign`, { unit_id: unit })
    const page = await signIn(DISPATCHER, { width: 360, height: 740 })
    await page.goto(`${base}/jobs/${made.body.id}`)
    await expectAccessible(page)
    await expectNoHorizontalOverflow(page)
    await page.context().close()
  }, 30_000)
})

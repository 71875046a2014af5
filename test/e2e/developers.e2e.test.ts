/**
 * The Developers pages as an owner uses them, in Chromium against the compiled binary: a key
 * made by its labels and used against the API, then revoked; a webhook endpoint on a real HTTPS
 * receiver on loopback (its CA trusted through NODE_EXTRA_CA_CERTS, loopback allowed through
 * TOWLINE_WEBHOOK_ALLOW_PRIVATE) tested, resent, paused, resumed, rotated and deleted, each
 * proved by what the API then shows; a dispatcher refused; axe-core and a 360 px phone on every page.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { apiCaller, cli, freshFolder, type RunningServer } from '../binary'
import { signedInPage, startDashboard, type Dashboard, type Login } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'
import { makeTestCa, startReceiver } from '../https-receiver'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let stop: Dashboard['stop']
let key: string
/** The public URL (http://localhost:<port>): pages are opened where their own posts pass the same-origin check. */
let base: string
const OWNER = { email: 'owner@example.com', password: 'owner password 1' }
const DISPATCHER = { email: 'disp@example.com', password: 'dispatch password 1' }
const ca = makeTestCa()
/** The secrets the receiver checks signatures against: those the pages showed. */
const secrets: string[] = []
const receiver = startReceiver(ca, { secrets: () => secrets })

beforeAll(async () => {
  ;({ folder, server, key, base, browser, stop } = await startDashboard({ logins: [{ ...OWNER, role: 'owner' }, { ...DISPATCHER, role: 'dispatcher' }], env: { NODE_EXTRA_CA_CERTS: ca.caPath, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' } }))
}, 30_000)
afterAll(async () => {
  await stop?.()
  receiver.stop()
})

const api = apiCaller(() => server, () => key)
const keyCount = () => (JSON.parse(cli(folder.bin, ['keys', 'list', '--json'], { cwd: folder.dir }).stdout).data as unknown[]).length

/** A fresh context signed in as `user`, on the board. */
const signIn = (user: Login, viewport = { width: 1280, height: 800 }): Promise<Page> => signedInPage(browser, base, user, viewport)

/** Checks what every page must pass: axe-core, and no sideways scrolling at 360 px. */
async function checkPage(page: Page) {
  await expectAccessible(page)
  const size = page.viewportSize()!
  await page.setViewportSize({ width: 360, height: 740 })
  await expectNoHorizontalOverflow(page)
  await page.setViewportSize(size)
}

describe('API keys in Chromium', () => {
  test('an owner creates a key by its labels, copies it from the read-only field, uses it, then revokes it', async () => {
    const page = await signIn(OWNER)
    await page.getByRole('link', { name: 'Developers' }).click()
    await page.waitForURL(`${base}/developers`)
    await checkPage(page)
    await page.getByLabel('Name', { exact: true }).fill('e2e page key')
    await page.getByLabel('jobs:read', { exact: true }).check()
    await page.getByRole('button', { name: 'Create key' }).click()
    const field = page.getByLabel('New key', { exact: true })
    await field.waitFor()
    expect(await field.getAttribute('readonly')).not.toBeNull()
    const made = await field.inputValue()
    expect(made).toMatch(/^svc_live_/)
    await checkPage(page)

    const me = await fetch(`${server.api}/me`, { headers: { authorization: `Bearer ${made}` } })
    expect(me.status).toBe(200)
    expect(await me.json()).toMatchObject({ name: 'e2e page key', scopes: ['jobs:read'] })
    // The scope is the one ticked, and only it.
    expect((await fetch(`${server.api}/webhooks`, { headers: { authorization: `Bearer ${made}` } })).status).toBe(403)

    await page.goto(`${base}/developers`)
    expect(await page.content()).not.toContain(made)
    const row = page.locator('.item[data-key-id]', { hasText: 'e2e page key' })
    expect(await row.innerText()).toContain(made.slice(0, 13))
    await row.getByRole('button', { name: 'Revoke' }).click()
    await page.waitForURL(`${base}/developers#keys`)
    expect(await row.innerText()).toContain('Revoked')
    expect((await fetch(`${server.api}/me`, { headers: { authorization: `Bearer ${made}` } })).status).toBe(401)
    await page.context().close()
  }, 60_000)
})

describe('webhook endpoints in Chromium', () => {
  test('a refused URL is said beside the field and kept', async () => {
    const page = await signIn(OWNER)
    await page.goto(`${base}/developers`)
    await page.getByLabel('URL', { exact: true }).fill('http://hooks.example.com/towline')
    await page.getByLabel('All events (*)', { exact: true }).check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.locator('#f-url-error').filter({ hasText: 'must use https' }).waitFor()
    expect(await page.getByLabel('URL', { exact: true }).inputValue()).toBe('http://hooks.example.com/towline')
    expect(await page.getByLabel('URL', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    expect((await api('GET', '/webhooks')).body.data).toEqual([])
    await checkPage(page)
    await page.context().close()
  }, 60_000)

  test('add, Send test, Resend, Pause, Resume, Rotate secret and Delete, each shown by the API', async () => {
    const page = await signIn(OWNER)
    await page.goto(`${base}/developers`)
    const url = `${receiver.url}/developers-e2e`
    await page.getByLabel('URL', { exact: true }).fill(url)
    await page.getByLabel('Description', { exact: true }).fill('billing sync')
    await page.getByLabel('All events (*)', { exact: true }).check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue()
    expect(secret).toMatch(/^whsec_/)
    secrets.push(secret)
    const [made] = (await api('GET', '/webhooks')).body.data
    expect(made).toMatchObject({ url, events: ['*'], description: 'billing sync', status: 'active' })

    await page.getByRole('link', { name: url }).click()
    await page.waitForURL(`${base}/developers/webhooks/${made.id}`)
    const arrived = receiver.received.length
    await page.getByRole('button', { name: 'Send test' }).click()
    await page.waitForURL(/\?sent=dlv_/)
    const ping = receiver.received.slice(arrived).find((r) => r.path === '/developers-e2e')!
    expect(ping.body).toMatchObject({ type: 'ping', attempt: 1 })
    expect(ping.validSignatures).toBe(1)
    const delivery = page.locator(`.item[data-delivery-id="${ping.body.id}"]`)
    expect(await delivery.innerText()).toContain('ping · attempt 1')
    await checkPage(page)

    await delivery.getByRole('button', { name: 'Resend' }).click()
    await page.locator(`.item[data-delivery-id="${ping.body.id}"]`, { hasText: 'attempt 2' }).waitFor()
    expect(receiver.received.filter((r) => r.body?.id === ping.body.id).map((r) => [r.body.attempt, r.validSignatures])).toEqual([[1, 1], [2, 1]])
    const log = (await api('GET', `/webhooks/${made.id}/deliveries`)).body.data
    expect(log.map((a: any) => [a.delivery_id, a.attempt, a.status])).toEqual([[ping.body.id, 2, 'succeeded'], [ping.body.id, 1, 'succeeded']])

    await page.getByRole('button', { name: 'Pause' }).click()
    await page.getByRole('button', { name: 'Resume' }).waitFor()
    expect((await api('GET', '/webhooks')).body.data[0]).toMatchObject({ status: 'paused', paused_reason: 'manual' })
    await page.getByRole('button', { name: 'Resume' }).click()
    await page.getByRole('button', { name: 'Pause' }).waitFor()
    expect((await api('GET', '/webhooks')).body.data[0]).toMatchObject({ status: 'active', paused_reason: null })

    await page.getByRole('button', { name: 'Rotate secret' }).click()
    const rotated = await page.getByLabel('Signing secret', { exact: true }).inputValue()
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    await checkPage(page)
    secrets.splice(0, secrets.length, rotated)
    const before = receiver.received.length
    await page.getByRole('button', { name: 'Send test' }).click()
    await page.waitForURL(/\?sent=dlv_/)
    expect(receiver.received.slice(before).map((r) => r.validSignatures)).toEqual([1])

    await page.getByRole('button', { name: 'Delete' }).click()
    await page.waitForURL(new RegExp(`/developers/webhooks/${made.id}/delete\\??$`))
    await checkPage(page)
    expect((await api('GET', '/webhooks')).body.data).toHaveLength(1)
    await page.getByRole('button', { name: 'Delete endpoint' }).click()
    await page.waitForURL(`${base}/developers#webhooks`)
    expect((await api('GET', '/webhooks')).body.data).toEqual([])
    await page.context().close()
  }, 60_000)
})

describe('a dispatcher in Chromium', () => {
  test('is refused every Developers page (403) and post, and nothing is written', async () => {
    const page = await signIn(DISPATCHER)
    expect(await page.getByRole('link', { name: 'Developers' }).count()).toBe(0)
    const res = await page.goto(`${base}/developers`)
    expect(res!.status()).toBe(403)
    await expectAccessible(page)
    const keys = keyCount()
    const posted = await page.context().request.post(`${base}/developers/keys`, { form: { name: 'sneaky', 'scopes[]': 'jobs:read' }, headers: { origin: base }, maxRedirects: 0 })
    expect(posted.status()).toBe(403)
    const hook = await page.context().request.post(`${base}/developers/webhooks`, { form: { url: `${receiver.url}/sneaky`, 'events[]': '*' }, headers: { origin: base }, maxRedirects: 0 })
    expect(hook.status()).toBe(403)
    expect(keyCount()).toBe(keys)
    expect((await api('GET', '/webhooks')).body.data.filter((e: any) => e.url.endsWith('/sneaky'))).toEqual([])
    await page.context().close()
  }, 60_000)
})

/**
 * Settings as an owner uses it, in Chromium against the compiled binary: the company name and a
 * template changed by their labels reach the next job's texts (read through the API), STOP and
 * START by their buttons decide whether a number is texted, a dispatcher added on the page signs
 * in with the password shown once, and disabling them ends their open board. Every Settings page
 * passes axe-core and fits a 360 px phone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { apiCaller, cli, freshFolder, type RunningServer } from '../binary'
import { signedInPage, startDashboard, type Dashboard, type Login } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let browser: Browser
let stop: Dashboard['stop']
let key: string
/** The public URL (http://localhost:<port>), where the pages' own posts pass the same-origin check. */
let base: string
const OWNER = { email: 'owner@example.com', password: 'owner password 1' }
const api = apiCaller(() => server, () => key)
const towline = (...args: string[]) => {
  const r = cli(folder.bin, [...args, '--json'], { cwd: folder.dir })
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout)
}

beforeAll(async () => {
  ;({ folder, server, key, base, browser, stop } = await startDashboard({ logins: [{ ...OWNER, role: 'owner' }] }))
}, 30_000)
afterAll(async () => {
  await stop?.()
})

/** A fresh context signed in as `user`, on the board. */
const signIn = (user: Login, viewport = { width: 1280, height: 800 }): Promise<Page> => signedInPage(browser, base, user, viewport)

async function newJob(phone = '+15035550148') {
  const made = await api('POST', '/jobs', { customer: { name: 'Sam', phone, sms_consent: true }, pickup: { location: 'Exit 9' } })
  expect(made.status).toBe(201)
  const texts = await api('GET', `/jobs/${made.body.id}/texts`)
  expect(texts.status).toBe(200)
  return texts.body.data as { template: string; body: string; status: string; skip_reason: string | null }[]
}

describe('Settings in Chromium', () => {
  test('the owner renames the company and rewords a template by their labels; the next job\'s texts use both', async () => {
    const page = await signIn(OWNER)
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.waitForURL(`${base}/settings`)
    await page.getByLabel('Company name', { exact: true }).fill('Harbor Towing')
    await page.getByLabel('Company phone', { exact: true }).fill('(503) 555-0100')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.waitForURL(`${base}/settings?saved=1`)
    expect(await page.getByRole('status').innerText()).toContain('Saved')
    expect((await newJob())[0]!.body).toMatch(/^Harbor Towing: we got your request/)
    expect(towline('accounts', 'list').data[0]).toMatchObject({ name: 'Harbor Towing', phone: '+15035550100' })

    // A refusal: said beside the field, what was typed kept.
    await page.getByLabel('Company phone', { exact: true }).fill('call us')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.locator('#f-phone-error').filter({ hasText: 'is not a phone number' }).waitFor()
    expect(await page.getByLabel('Company phone', { exact: true }).inputValue()).toBe('call us')

    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Text templates' }).click()
    await page.getByLabel('Request received', { exact: true }).fill('{company}: help is on its way to {pickup}. {tracking_url}')
    await page.locator('#template-request_received').getByRole('button', { name: 'Save template' }).click()
    await page.waitForURL(/\/settings\/templates\?saved=request_received/)
    expect((await newJob())[0]!.body).toMatch(/^Harbor Towing: help is on its way to Exit 9\. http:\/\/localhost:\d+\/t\/\w{24}$/)
    await page.context().close()
  }, 30_000)

  test('STOP then START by their buttons: the number\'s next text is skipped, then sent', async () => {
    const page = await signIn(OWNER)
    await page.goto(`${base}/settings/consent`)
    await page.getByLabel('Phone', { exact: true }).fill('503-555-0177')
    await page.getByRole('button', { name: 'Look up' }).click()
    await page.getByRole('heading', { name: '+15035550177' }).waitFor()
    await page.getByRole('button', { name: 'STOP' }).click()
    await page.waitForURL(/done=stop/)
    const me = towline('users', 'list').data.find((u: any) => u.email === OWNER.email).id
    expect(towline('texts', 'consent', '--phone', '+15035550177').data[0]).toMatchObject({ texts: 'opted_out', opt_out_source: `dispatcher:${me}` })
    expect((await newJob('+15035550177'))[0]).toMatchObject({ status: 'skipped', skip_reason: 'opted_out' })

    await page.getByRole('button', { name: 'START' }).click()
    await page.waitForURL(/done=start/)
    expect(towline('texts', 'consent', '--phone', '+15035550177').data[0]).toMatchObject({ texts: 'allowed', consent_source: `dispatcher:${me}` })
    const [text] = await newJob('+15035550177')
    expect(text!.skip_reason).toBeNull()
    expect(['queued', 'sending', 'sent']).toContain(text!.status)
    await page.context().close()
  }, 30_000)

  test('a dispatcher added on the page signs in with the password shown once; disabling them ends their open board', async () => {
    const page = await signIn(OWNER)
    await page.goto(`${base}/settings/users`)
    await page.getByLabel('Email', { exact: true }).fill('new.disp@example.com')
    await page.getByLabel('Role', { exact: true }).selectOption('dispatcher')
    await page.getByRole('button', { name: 'Add user' }).click()
    const shown = page.getByLabel('New password', { exact: true })
    expect(await shown.getAttribute('readonly')).not.toBeNull()
    const password = await shown.inputValue()
    expect(password).toMatch(/^[A-Za-z0-9]{16}$/)

    const disp = await signIn({ email: 'new.disp@example.com', password })
    await disp.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
    expect(await disp.getByRole('link', { name: 'Settings' }).count()).toBe(0)
    expect((await disp.context().request.get(`${base}/settings/users`)).status()).toBe(403)

    await page.goto(`${base}/settings/users`)
    await page.locator('tr', { hasText: 'new.disp@example.com' }).getByRole('button', { name: 'Disable' }).click()
    await page.waitForURL(`${base}/settings/users`)
    expect(await page.locator('tr', { hasText: 'new.disp@example.com' }).innerText()).toContain('Disabled')
    // The open board is told, and goes to the sign-in page by itself.
    await disp.waitForURL(/\/login/, { timeout: 5000 })
    expect(towline('users', 'list').data.find((u: any) => u.email === 'new.disp@example.com').status).toBe('disabled')
    await disp.context().close()
    await page.context().close()
  }, 30_000)

  test('every Settings page passes axe-core and fits a 360 px phone', async () => {
    const page = await signIn(OWNER, { width: 360, height: 740 })
    for (const path of ['/settings', '/settings/templates', '/settings/consent?phone=%2B15035550177', '/settings/users']) {
      const res = await page.goto(`${base}${path}`)
      expect(res!.status()).toBe(200)
      await expectAccessible(page)
      await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
    }
    // The password shown once, and a refused form, too.
    await page.goto(`${base}/settings/users`)
    await page.getByLabel('Email', { exact: true }).fill('another@example.com')
    await page.getByRole('button', { name: 'Add user' }).click()
    await page.getByLabel('New password', { exact: true }).waitFor()
    await expectAccessible(page)
    await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
    await page.getByLabel('Email', { exact: true }).fill('not an email')
    await page.getByRole('button', { name: 'Add user' }).click()
    await page.locator('#f-email-error').filter({ hasText: 'email address' }).waitFor()
    await expectAccessible(page)
    await page.context().close()
  }, 60_000)
})

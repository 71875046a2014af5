/** What the dashboard's browser tests share: the binary with logins and Chromium, and signing in through the /login form. */
import { expect } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'
import { launchChromium } from './chromium'

/** A dashboard login, as `towline users create` made it. */
export interface Login { email: string; password: string }

/**
 * Opens a fresh browser context (its own cookies) at `base`/board, which sends it to the
 * sign-in page, signs `user` in by the form's labels and button, and returns the page on the board.
 */
export async function signedInPage(browser: Browser, base: string, user: Login, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage()
  await page.goto(`${base}/board`)
  expect(new URL(page.url()).pathname).toBe('/login')
  await page.getByLabel('Email', { exact: true }).fill(user.email)
  await page.getByLabel('Password', { exact: true }).fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/board`)
  return page
}

/** The compiled binary serving a fresh folder, with an all-scopes key, some logins and Chromium: what a dashboard e2e file starts with. */
export interface Dashboard {
  folder: ReturnType<typeof freshFolder>
  server: RunningServer
  /** An API key with every scope. */
  key: string
  /** The public URL (the default, http://localhost:<port>): pages are opened where their own posts pass the same-origin check. */
  base: string
  browser: Browser
  /** Closes the browser, stops the server, removes the folder. */
  stop(): Promise<void>
}

/** Makes a dashboard login with `towline users create` (in `account`, else the default one). */
export function createLogin(folder: ReturnType<typeof freshFolder>, login: Login & { role: 'owner' | 'dispatcher' }, account?: string): void {
  const r = cli(folder.bin, ['users', 'create', '--email', login.email, '--role', login.role, '--password', login.password, ...(account ? ['--account', account] : [])], { cwd: folder.dir })
  if (r.code !== 0) throw new Error(`users create failed: ${r.stderr}`)
}

/** Starts a Dashboard (see the interface). */
export async function startDashboard(opts: { logins: (Login & { role: 'owner' | 'dispatcher' })[]; env?: Record<string, string> }): Promise<Dashboard> {
  const folder = freshFolder()
  const server = await startServer(folder.bin, { cwd: folder.dir, env: opts.env })
  const key = createKeyWithCli(folder.bin, folder.dir, 'all')
  for (const login of opts.logins) createLogin(folder, login)
  const browser = await launchChromium()
  return {
    folder, server, key, browser,
    base: server.url.replace('127.0.0.1', 'localhost'),
    async stop() {
      await browser.close()
      await server.stop()
      folder.cleanup()
    },
  }
}

/**
 * `npm run screenshots`: pictures of the dispatch board and a job page, and of that job's driver
 * page and tracking page on a phone, made from demo data by the compiled binary in headless
 * Chromium, into docs/screenshots/ (the README shows them).
 * Builds dist/towline first when it is missing. Everything runs on this machine's loopback, in
 * a throwaway folder; map tiles are not fetched (the map shows its markers and names).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'

const ROOT = resolve(import.meta.dir, '..')
const BIN = join(ROOT, 'dist', 'towline')
const OUT = join(ROOT, 'docs', 'screenshots')

function run(cmd: string[], cwd: string): string {
  const r = Bun.spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, LOG_LEVEL: 'warn' } })
  if (r.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed: ${r.stderr.toString()}`)
  return r.stdout.toString() + r.stderr.toString()
}

if (!existsSync(BIN)) run([process.execPath, join(ROOT, 'scripts', 'build.ts')], ROOT)
const dir = mkdtempSync(join(tmpdir(), 'towline-shots-'))
// A free loopback port, known before the server starts: the public URL (and so the sign-in's Origin check) names it.
const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
const port = probe.port
probe.stop(true)
const base = `http://localhost:${port}`
const env = { TOWLINE_PUBLIC_URL: base, TOWLINE_TILE_URL: `${base}/no-tiles/{z}/{x}/{y}.png` }
Object.assign(process.env, env)
const demo = run([BIN, 'demo', '--db', join(dir, 'towline.db')], dir)
const login = /sign in at \S+ as (\S+) with password (\S+)/.exec(demo)
if (!login) throw new Error(`towline demo printed no login:\n${demo}`)
const server = Bun.spawn([BIN, 'serve', '--db', join(dir, 'towline.db'), '--port', String(port), '--host', '127.0.0.1'], { cwd: dir, stdout: 'ignore', stderr: 'pipe', env: { ...process.env, ...env } })
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] })
try {
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${base}/healthz`)).ok) break } catch {}
    if (i > 100) throw new Error('the server did not start')
    await Bun.sleep(50)
  }
  mkdirSync(OUT, { recursive: true })
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
  await page.goto(`${base}/login`)
  await page.getByLabel('Email').fill(login[1]!)
  await page.getByLabel('Password').fill(login[2]!)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/board`)
  await page.waitForFunction(() => document.getElementById('live-status')?.textContent?.startsWith('Live'))
  await page.screenshot({ path: join(OUT, 'board.png') })
  // The job page of the busiest job on the board: one with a unit, further along.
  const href = await page.locator('[data-status="on_scene"] [data-job-id] a, [data-status="en_route"] [data-job-id] a, [data-status="dispatched"] [data-job-id] a').first().getAttribute('href')
  await page.goto(`${base}${href}`)
  await page.setViewportSize({ width: 1400, height: 1300 })
  await page.screenshot({ path: join(OUT, 'job.png') })
  // The same job as its driver and its customer see them, on a phone: the links the job page shows.
  const driverUrl = await page.locator('a[href*="/d/"]').first().getAttribute('href')
  const trackingUrl = await page.locator('a[href*="/t/"]').first().getAttribute('href')
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true })
  await phone.goto(driverUrl!)
  await phone.screenshot({ path: join(OUT, 'driver.png') })
  await phone.goto(trackingUrl!)
  await phone.screenshot({ path: join(OUT, 'tracking.png') })
  process.stdout.write(`screenshots: ${['board', 'job', 'driver', 'tracking'].map((n) => join('docs', 'screenshots', `${n}.png`)).join(', ')}\n`)
} finally {
  await browser.close()
  server.kill()
  await server.exited
  rmSync(dir, { recursive: true, force: true })
}

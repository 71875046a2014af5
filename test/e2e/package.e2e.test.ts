/**
 * The npm package: publishable as it stands, and runnable with bunx from its packed tarball in
 * an empty folder (what `bunx towline` will do once published). bunx installs the tarball's
 * dependencies from the npm registry (or Bun's cache).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../binary'
import pkg from '../../package.json'

let dir: string
let tarball: string
let packed: { filename: string; files: { path: string; mode: number }[] }

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'towline-pack-'))
  mkdirSync(join(dir, 'out'))
  const r = Bun.spawnSync(['npm', 'pack', '--json', '--pack-destination', join(dir, 'out')], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`npm pack failed: ${r.stderr}`)
  packed = JSON.parse(r.stdout.toString())[0]
  tarball = join(dir, 'out', packed.filename)
})

afterAll(() => {
  // bunx keeps one install per tarball path in Bun's cache; this run's path is unique, so drop it.
  const bunx = join(process.env.BUN_INSTALL_CACHE_DIR ?? join(process.env.BUN_INSTALL ?? join(homedir(), '.bun'), 'install', 'cache'), `.bunx-${process.getuid?.() ?? 0}`)
  if (tarball && existsSync(bunx)) {
    for (const entry of readdirSync(bunx)) {
      const manifest = join(bunx, entry, 'package.json')
      if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(tarball)) {
        rmSync(join(bunx, entry), { recursive: true, force: true })
        rmSync(join(bunx, `${entry}.lock`), { force: true })
      }
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true })
})

test('the package is publishable: licensed, not private, and npm corrects nothing in it', () => {
  expect((pkg as Record<string, unknown>).private).toBeUndefined()
  expect(pkg.license).toBe('MIT')
  const r = Bun.spawnSync(['npm', 'publish', '--dry-run'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const out = r.stdout.toString() + r.stderr.toString()
  expect(r.exitCode).toBe(0)
  expect(out).not.toContain('auto-corrected')
  expect(out).not.toContain('invalid and removed')
})

test('the tarball holds what running needs (bin, src, migrations, the pages\' browser code, docs, README, LICENSE) and no tests', () => {
  const paths = packed.files.map((f) => f.path)
  expect(paths).toEqual(expect.arrayContaining(['bin/towline.js', 'bin/towline.ts', 'src/main.ts', 'src/db/migrations.gen.ts', 'migrations/meta/_journal.json',
    'web/dashboard.ts', 'web/map.ts', 'web/styles.css', 'web/shared/live.ts', 'docs/errors.md', 'README.md', 'LICENSE', 'package.json']))
  expect(paths.filter((p) => p.endsWith('.test.ts') || p.startsWith('test/') || p.startsWith('dist/') || p.startsWith('scripts/'))).toEqual([])
})

test('npx towline with only Node hands over to the bun on PATH, or says in one line how to get one', () => {
  const node = Bun.which('node')!
  const withBun = Bun.spawnSync([node, join(ROOT, 'bin/towline.js'), '--version'], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:/usr/bin:/bin` } })
  expect({ code: withBun.exitCode, out: withBun.stdout.toString() }).toEqual({ code: 0, out: expect.stringMatching(new RegExp(`^towline ${pkg.version.replaceAll(".", "\\.")} `)) })
  const noBun = Bun.spawnSync([node, join(ROOT, 'bin/towline.js'), '--help'], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, PATH: '/usr/bin:/bin' } })
  expect({ code: noBun.exitCode, stderr: noBun.stderr.toString() }).toEqual({ code: 127, stderr: 'towline runs on Bun, and no bun is on PATH: install it with `npm install -g bun`, then run this again.\n' })
})

test('bunx runs the packed tarball from an empty folder and creates nothing there', () => {
  const empty = mkdtempSync(join(tmpdir(), 'towline-bunx-'))
  try {
    // bunx resolves a bare or relative tarball path against its own install folder: give it absolute.
    const r = Bun.spawnSync(['bunx', `towline@file:${tarball}`, '--help'], { cwd: empty, stdout: 'pipe', stderr: 'pipe', timeout: 120_000 })
    expect({ code: r.exitCode, stderr: r.exitCode === 0 ? '' : r.stderr.toString() }).toEqual({ code: 0, stderr: '' })
    const help = r.stdout.toString()
    expect(help).toStartWith(`towline ${pkg.version}: towing dispatch service`)
    expect(help).toContain('serve')
    expect(help).toContain('keys create')
    expect(readdirSync(empty)).toEqual([])
  } finally {
    rmSync(empty, { recursive: true, force: true })
  }
}, 150_000)

test('bunx serves from the packed tarball: the pages\' browser code builds from the package at start, before it listens', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'towline-bunx-serve-'))
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  // Its own process group: bunx runs the package's bin as a child, and both must stop.
  const proc = Bun.spawn(['bunx', `towline@file:${tarball}`, 'serve', '--port', String(port), '--host', '127.0.0.1', '--db', join(empty, 'towline.db')], {
    cwd: empty, stdin: 'ignore', stdout: 'ignore', stderr: 'pipe', detached: true, env: { ...process.env, LOG_LEVEL: 'warn' },
  })
  try {
    let err = ''
    const reader = (async () => { for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk) })()
    const deadline = Date.now() + 120_000
    while (!err.includes('listening on')) {
      // serve exits 1 with the bundler's messages when web/ cannot be built (missing from the package, say).
      if (proc.exitCode !== null) throw new Error(`bunx towline serve exited ${proc.exitCode}: ${err}`)
      if (Date.now() > deadline) throw new Error(`bunx towline serve did not start: ${err}`)
      await Bun.sleep(20)
    }
    // serve listens only once web/ is built (from the package's files and its own leaflet), and then answers.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    // The commands the banner gives run this very copy: never a bare `bunx towline`, which would fetch whatever the registry holds under that name.
    expect(err).toMatch(/\n  bun \S+\/bin\/towline\.ts users create --db \S+ --email you@example\.com --role owner\n/)
    expect(err).not.toContain('bunx towline')
    void reader
  } finally {
    process.kill(-proc.pid, 'SIGTERM')
    await proc.exited
    rmSync(empty, { recursive: true, force: true })
  }
}, 150_000)

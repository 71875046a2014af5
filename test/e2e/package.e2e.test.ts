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

test('the tarball holds what running needs (bin, src, migrations, docs, README, LICENSE) and no tests', () => {
  const paths = packed.files.map((f) => f.path)
  expect(paths).toEqual(expect.arrayContaining(['bin/towline.ts', 'src/main.ts', 'src/db/migrations.gen.ts', 'migrations/meta/_journal.json',
    'docs/errors.md', 'README.md', 'LICENSE', 'package.json']))
  expect(paths.filter((p) => p.endsWith('.test.ts') || p.startsWith('test/') || p.startsWith('dist/') || p.startsWith('scripts/'))).toEqual([])
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

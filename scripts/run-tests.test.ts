import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { chromiumStep, nginxStep, postgresStep } from './run-tests'

const ROOT = join(import.meta.dir, '..')
const has = (...paths: string[]) => (p: string) => paths.includes(p)

describe('npm test and Chromium', () => {
  test("uses Debian's /usr/bin/chromium, else one on PATH, else CHROMIUM_PATH when set", () => {
    expect(chromiumStep({ exists: has('/usr/bin/chromium'), onPath: null, isRoot: false, hasAptGet: true })).toEqual({ do: 'use', path: '/usr/bin/chromium' })
    expect(chromiumStep({ exists: has(), onPath: '/snap/bin/chromium', isRoot: false, hasAptGet: true })).toEqual({ do: 'use', path: '/snap/bin/chromium' })
    expect(chromiumStep({ configured: '/opt/chrome/chrome', exists: has('/opt/chrome/chrome', '/usr/bin/chromium'), onPath: null, isRoot: true, hasAptGet: true }))
      .toEqual({ do: 'use', path: '/opt/chrome/chrome' })
  })

  test('installs it with apt-get when missing and root', () => {
    expect(chromiumStep({ exists: has(), onPath: null, isRoot: true, hasAptGet: true })).toEqual({ do: 'install' })
  })

  test('stops with one line saying how when missing and not root (or without apt-get)', () => {
    for (const m of [{ isRoot: false, hasAptGet: true }, { isRoot: true, hasAptGet: false }]) {
      const step = chromiumStep({ exists: has(), onPath: null, ...m })
      expect(step.do).toBe('stop')
      if (step.do === 'stop') {
        expect(step.message).toContain('sudo apt-get install chromium')
        expect(step.message).not.toContain('\n')
      }
    }
  })

  test('a CHROMIUM_PATH that does not exist stops the run in one line, before building anything', () => {
    const r = Bun.spawnSync([process.execPath, 'scripts/run-tests.ts'], { cwd: ROOT, env: { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium' }, stdout: 'pipe', stderr: 'pipe' })
    expect(r.exitCode).toBe(1)
    expect(r.stderr.toString().trim().split('\n')).toEqual([expect.stringContaining('CHROMIUM_PATH=/nonexistent/chromium')])
    expect(r.stdout.toString()).toBe('')
  })
})

describe('what npm test does about PostgreSQL', () => {
  test('uses the server binaries it finds; root with apt-get installs them; anyone else is told how in one line', () => {
    expect(postgresStep({ found: '/usr/lib/postgresql/15/bin', isRoot: false, hasAptGet: false })).toEqual({ do: 'use', bin: '/usr/lib/postgresql/15/bin' })
    expect(postgresStep({ found: null, isRoot: true, hasAptGet: true })).toEqual({ do: 'install' })
    for (const m of [{ isRoot: false, hasAptGet: true }, { isRoot: true, hasAptGet: false }]) {
      const step = postgresStep({ found: null, ...m })
      expect(step.do).toBe('stop')
      if (step.do === 'stop') {
        expect(step.message).toContain('sudo apt-get install postgresql')
        expect(step.message).not.toContain('\n')
      }
    }
  })

  test('a PG_BIN without initdb stops the run in one line, before building or installing anything', () => {
    expect(postgresStep({ configured: '/nonexistent/pg', hasInitdb: () => false, found: '/usr/lib/postgresql/15/bin', isRoot: true, hasAptGet: true }).do).toBe('stop')
    const r = Bun.spawnSync([process.execPath, 'scripts/run-tests.ts'], { cwd: ROOT, env: { ...process.env, PG_BIN: '/nonexistent/pg' }, stdout: 'pipe', stderr: 'pipe' })
    expect(r.exitCode).toBe(1)
    expect(r.stderr.toString().trim().split('\n')).toEqual([expect.stringContaining('PG_BIN=/nonexistent/pg')])
    expect(r.stdout.toString()).toBe('')
  })
})

describe('what npm test does about nginx', () => {
  test('uses the nginx it finds; root with apt-get installs it; anyone else is told how in one line', () => {
    expect(nginxStep({ found: '/usr/sbin/nginx', isRoot: false, hasAptGet: false })).toEqual({ do: 'use', path: '/usr/sbin/nginx' })
    expect(nginxStep({ found: null, isRoot: true, hasAptGet: true })).toEqual({ do: 'install' })
    for (const m of [{ isRoot: false, hasAptGet: true }, { isRoot: true, hasAptGet: false }]) {
      const step = nginxStep({ found: null, ...m })
      expect(step.do).toBe('stop')
      if (step.do === 'stop') {
        expect(step.message).toContain('sudo apt-get install nginx')
        expect(step.message).not.toContain('\n')
      }
    }
  })

  test('an NGINX_PATH that does not exist stops in one line, whatever else the machine has', () => {
    const step = nginxStep({ configured: '/nonexistent/nginx', exists: () => false, found: '/usr/sbin/nginx', isRoot: true, hasAptGet: true })
    expect(step).toEqual({ do: 'stop', message: expect.stringContaining('NGINX_PATH=/nonexistent/nginx') })
  })
})

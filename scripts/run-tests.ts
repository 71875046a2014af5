/**
 * `npm test`: brings what the suite needs that npm cannot, builds the binary, runs every test
 * (extra arguments go to `bun test`), once on SQLite and once on PostgreSQL. Three such things:
 * Chromium, which the page tests drive; PostgreSQL's server binaries, which the tests start
 * throwaway clusters with (test/pg.ts); nginx, which the load-balancer test puts in front of two
 * instances (test/nginx.ts). When one is missing, root installs it with apt-get; anyone else gets
 * one line saying how, and a non-zero exit.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { pgBinDir } from '../test/pg'
import { nginxPath } from '../test/nginx'

/** What to do about Chromium before the tests run. */
export type ChromiumStep = { do: 'use'; path: string } | { do: 'install' } | { do: 'stop'; message: string }

const DEBIAN_PATH = '/usr/bin/chromium'
const HOW = 'install it with `sudo apt-get install chromium` (Debian, Ubuntu), or set CHROMIUM_PATH to a Chromium or Chrome executable'

/** Decides what to do about Chromium from what this machine has. */
export function chromiumStep(m: { configured?: string; exists: (path: string) => boolean; onPath: string | null; isRoot: boolean; hasAptGet: boolean }): ChromiumStep {
  if (m.configured) {
    return m.exists(m.configured) ? { do: 'use', path: m.configured } : { do: 'stop', message: `npm test: CHROMIUM_PATH=${m.configured} does not exist; unset it or point it at Chromium` }
  }
  if (m.exists(DEBIAN_PATH)) return { do: 'use', path: DEBIAN_PATH }
  if (m.onPath) return { do: 'use', path: m.onPath }
  if (m.isRoot && m.hasAptGet) return { do: 'install' }
  return { do: 'stop', message: `npm test needs Chromium for the docs page test: ${HOW}` }
}

/**
 * Installs Debian packages quietly (the log in .tmp/<log>), without starting any service they
 * bring (a policy-rc.d refusing every start while apt-get runs: no nginx on port 80, no
 * PostgreSQL cluster on 5432); returns whether apt-get succeeded.
 */
function aptGetInstall(packages: string[], log: string): boolean {
  mkdirSync('.tmp', { recursive: true })
  const file = Bun.file(`.tmp/${log}`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const policy = '/usr/sbin/policy-rc.d'
  const ownPolicy = !existsSync(policy)
  if (ownPolicy) { writeFileSync(policy, '#!/bin/sh\nexit 101\n'); chmodSync(policy, 0o755) }
  try {
    const update = Bun.spawnSync(['apt-get', 'update', '-qq'], { env, stdout: file, stderr: file })
    const install = update.exitCode === 0 && Bun.spawnSync(['apt-get', 'install', '-y', '-qq', ...packages], { env, stdout: file, stderr: file })
    return !!install && install.exitCode === 0
  } finally {
    if (ownPolicy) rmSync(policy, { force: true })
  }
}

/** Installs Debian's chromium; returns whether it is there after. */
function installChromium(): boolean {
  process.stderr.write('npm test: Chromium is missing; installing it with apt-get (the docs page test drives it)...\n')
  return aptGetInstall(['chromium'], 'apt-chromium.log') && existsSync(DEBIAN_PATH)
}

/** What to do about PostgreSQL's server binaries before the tests run. */
export type PostgresStep = { do: 'use'; bin: string } | { do: 'install' } | { do: 'stop'; message: string }

const PG_HOW = 'install it with `sudo apt-get install postgresql` (Debian, Ubuntu), or set PG_BIN to the folder holding initdb and pg_ctl'

/** Decides what to do about PostgreSQL from what this machine has. */
export function postgresStep(m: { configured?: string; hasInitdb?: (bin: string) => boolean; found: string | null; isRoot: boolean; hasAptGet: boolean }): PostgresStep {
  if (m.configured) {
    return m.hasInitdb?.(m.configured) ? { do: 'use', bin: m.configured } : { do: 'stop', message: `npm test: PG_BIN=${m.configured} holds no initdb; unset it or point it at PostgreSQL's bin folder` }
  }
  if (m.found) return { do: 'use', bin: m.found }
  if (m.isRoot && m.hasAptGet) return { do: 'install' }
  return { do: 'stop', message: `npm test needs PostgreSQL's server for the PostgreSQL tests: ${PG_HOW}` }
}

/** Installs Debian's postgresql, without the cluster the package would create and start. */
function installPostgres(): boolean {
  process.stderr.write('npm test: PostgreSQL is missing; installing it with apt-get (the tests start their own throwaway clusters)...\n')
  // The tests make their own clusters in temporary folders: no system cluster on port 5432.
  mkdirSync('/etc/postgresql-common', { recursive: true })
  if (!existsSync('/etc/postgresql-common/createcluster.conf')) writeFileSync('/etc/postgresql-common/createcluster.conf', 'create_main_cluster = false\n')
  return aptGetInstall(['postgresql'], 'apt-postgres.log') && pgBinDir() !== null
}

/** What to do about nginx before the tests run. */
export type NginxStep = { do: 'use'; path: string } | { do: 'install' } | { do: 'stop'; message: string }

const NGINX_HOW = 'install it with `sudo apt-get install nginx` (Debian, Ubuntu; the test runs its own nginx, never the system one), or set NGINX_PATH to an nginx executable'

/** Decides what to do about nginx from what this machine has. */
export function nginxStep(m: { configured?: string; exists?: (path: string) => boolean; found: string | null; isRoot: boolean; hasAptGet: boolean }): NginxStep {
  if (m.configured) {
    return m.exists?.(m.configured) ? { do: 'use', path: m.configured } : { do: 'stop', message: `npm test: NGINX_PATH=${m.configured} does not exist; unset it or point it at nginx` }
  }
  if (m.found) return { do: 'use', path: m.found }
  if (m.isRoot && m.hasAptGet) return { do: 'install' }
  return { do: 'stop', message: `npm test needs nginx for the load-balancer test: ${NGINX_HOW}` }
}

/** Installs Debian's nginx (not started: the test starts its own, in a temporary folder). */
function installNginx(): boolean {
  process.stderr.write('npm test: nginx is missing; installing it with apt-get (the load-balancer test runs it in front of two instances)...\n')
  return aptGetInstall(['nginx'], 'apt-nginx.log') && nginxPath() !== null
}

/**
 * What a step leaves the run with: what it found, or what it installed; otherwise its one line
 * (or `couldNot` when apt-get failed) and exit 1.
 */
function settle(step: ChromiumStep | PostgresStep | NginxStep, install: () => string | null, couldNot: string): string {
  if (step.do === 'use') return 'bin' in step ? step.bin : step.path
  const got = step.do === 'install' ? install() : null
  if (got) return got
  process.stderr.write(`${step.do === 'stop' ? step.message : couldNot}\n`)
  process.exit(1)
}

if (import.meta.main) {
  const isRoot = process.getuid?.() === 0
  const hasAptGet = Bun.which('apt-get') !== null
  const pgBin = settle(
    postgresStep({ configured: process.env.PG_BIN || undefined, hasInitdb: (bin) => existsSync(`${bin}/initdb`), found: pgBinDir(), isRoot, hasAptGet }),
    () => (installPostgres() ? pgBinDir() : null),
    `npm test: apt-get could not install PostgreSQL (see .tmp/apt-postgres.log); ${PG_HOW}`,
  )
  const nginx = settle(
    nginxStep({ configured: process.env.NGINX_PATH || undefined, exists: existsSync, found: nginxPath(), isRoot, hasAptGet }),
    () => (installNginx() ? nginxPath() : null),
    `npm test: apt-get could not install nginx (see .tmp/apt-nginx.log); ${NGINX_HOW}`,
  )
  const chromium = settle(
    chromiumStep({ configured: process.env.CHROMIUM_PATH || undefined, exists: existsSync, onPath: Bun.which('chromium') ?? Bun.which('chromium-browser'), isRoot, hasAptGet }),
    () => (installChromium() ? DEBIAN_PATH : null),
    `npm test: apt-get could not install Chromium (see .tmp/apt-chromium.log); ${HOW}`,
  )
  const env = { ...process.env, CHROMIUM_PATH: chromium, PG_BIN: pgBin, NGINX_PATH: nginx }
  const build = Bun.spawnSync([process.execPath, 'scripts/build.ts'], { env, stdout: 'inherit', stderr: 'inherit' })
  if (build.exitCode !== 0) process.exit(build.exitCode ?? 1)
  // The whole suite, once per engine: SQLite (the default) and PostgreSQL (throwaway clusters).
  // TOWLINE_TEST_ENGINES=sqlite (or postgres) runs one of them.
  const engines = (process.env.TOWLINE_TEST_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim()).filter(Boolean)
  let failed = 0
  for (const engine of engines) {
    process.stderr.write(`\nnpm test: the suite on ${engine === 'postgres' ? 'PostgreSQL' : 'SQLite'}\n`)
    const tests = Bun.spawn([process.execPath, 'test', '--timeout', '30000', ...process.argv.slice(2)], { env: { ...env, TOWLINE_TEST_ENGINE: engine }, stdio: ['inherit', 'inherit', 'inherit'] })
    if ((await tests.exited) !== 0) failed++
  }
  process.exit(failed ? 1 : 0)
}

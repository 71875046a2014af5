/**
 * `npm test`: brings what the suite needs that npm cannot, builds the binary, runs every test
 * (extra arguments go to `bun test`), once on SQLite and once on PostgreSQL. Two such things: Chromium, which the page tests drive, and
 * PostgreSQL's server binaries, which the tests start throwaway clusters with (test/pg.ts). When
 * one is missing, root installs it with apt-get; anyone else gets one line saying how, and a
 * non-zero exit.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { pgBinDir } from '../test/pg'

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

/** Installs Debian's chromium quietly (log in .tmp/apt.log); returns whether it is there after. */
async function installChromium(): Promise<boolean> {
  process.stderr.write('npm test: Chromium is missing; installing it with apt-get (the docs page test drives it)...\n')
  mkdirSync('.tmp', { recursive: true })
  const log = Bun.file('.tmp/apt.log')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const update = Bun.spawnSync(['apt-get', 'update', '-qq'], { env, stdout: log, stderr: log })
  const install = update.exitCode === 0 && Bun.spawnSync(['apt-get', 'install', '-y', '-qq', 'chromium'], { env, stdout: Bun.file('.tmp/apt-install.log'), stderr: Bun.file('.tmp/apt-install.log') })
  return !!install && install.exitCode === 0 && existsSync(DEBIAN_PATH)
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

/** Installs Debian's postgresql quietly, without the cluster the package would create and start. */
async function installPostgres(): Promise<boolean> {
  process.stderr.write('npm test: PostgreSQL is missing; installing it with apt-get (the tests start their own throwaway clusters)...\n')
  mkdirSync('.tmp', { recursive: true })
  // The tests make their own clusters in temporary folders: no system cluster on port 5432.
  mkdirSync('/etc/postgresql-common', { recursive: true })
  if (!existsSync('/etc/postgresql-common/createcluster.conf')) writeFileSync('/etc/postgresql-common/createcluster.conf', 'create_main_cluster = false\n')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const log = Bun.file('.tmp/apt-postgres.log')
  const update = Bun.spawnSync(['apt-get', 'update', '-qq'], { env, stdout: log, stderr: log })
  const install = update.exitCode === 0 && Bun.spawnSync(['apt-get', 'install', '-y', '-qq', 'postgresql'], { env, stdout: log, stderr: log })
  return !!install && install.exitCode === 0 && pgBinDir() !== null
}

if (import.meta.main) {
  let pg = postgresStep({ configured: process.env.PG_BIN || undefined, hasInitdb: (bin) => existsSync(`${bin}/initdb`), found: pgBinDir(), isRoot: process.getuid?.() === 0, hasAptGet: Bun.which('apt-get') !== null })
  if (pg.do === 'install') {
    const bin = (await installPostgres()) ? pgBinDir() : null
    pg = bin ? { do: 'use', bin } : { do: 'stop', message: `npm test: apt-get could not install PostgreSQL (see .tmp/apt-postgres.log); ${PG_HOW}` }
  }
  if (pg.do !== 'use') {
    process.stderr.write(`${pg.do === 'stop' ? pg.message : 'npm test: no PostgreSQL'}\n`)
    process.exit(1)
  }
  let step = chromiumStep({
    configured: process.env.CHROMIUM_PATH || undefined,
    exists: existsSync,
    onPath: Bun.which('chromium') ?? Bun.which('chromium-browser'),
    isRoot: process.getuid?.() === 0,
    hasAptGet: Bun.which('apt-get') !== null,
  })
  if (step.do === 'install') {
    step = (await installChromium())
      ? { do: 'use', path: DEBIAN_PATH }
      : { do: 'stop', message: `npm test: apt-get could not install Chromium (see .tmp/apt.log and .tmp/apt-install.log); ${HOW}` }
  }
  if (step.do !== 'use') {
    process.stderr.write(`${step.do === 'stop' ? step.message : 'npm test: no Chromium'}\n`)
    process.exit(1)
  }
  const env = { ...process.env, CHROMIUM_PATH: step.path, PG_BIN: pg.bin }
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

/**
 * A throwaway PostgreSQL cluster for tests: `initdb` in a temporary folder, started on a free
 * loopback port with fsync off, removed when the test process exits. Debian's PostgreSQL
 * packages provide the binaries (npm test installs them when root and they are missing).
 * PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` system user.
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

/** The folder holding initdb and pg_ctl: PG_BIN, Debian's newest /usr/lib/postgresql/N/bin, or PATH. */
export function pgBinDir(): string | null {
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'initdb')) ? process.env.PG_BIN : null
  const base = '/usr/lib/postgresql'
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a))
    if (versions[0]) return join(base, versions[0], 'bin')
  }
  const initdb = Bun.which('initdb')
  return initdb ? initdb.slice(0, -'/initdb'.length) : null
}

export interface PgCluster {
  /** postgres:// URL of `database` (the cluster's own `postgres` by default). */
  url(database?: string): string
  /** Creates an empty database (or a copy of `template`) and returns its URL. */
  createDatabase(opts?: { template?: string; name?: string }): string
  /** Drops the database of a URL createDatabase gave, cutting its connections (a suite makes hundreds). */
  dropDatabase(url: string): void
  /** Runs SQL on `database` with psql and returns its output. */
  psql(sql: string, database?: string): string
  /** The server's version, as `postgres --version` prints it. */
  version: string
  /** Restarts the server (fast shutdown): every connection to it is cut. */
  restart(): void
  stop(): void
}

const USER = 'towline_test'
let shared: PgCluster | undefined

/** Every cluster this process started and has not stopped. */
const running = new Set<PgCluster>()

/**
 * Stops every cluster this process started. bun test runs no process 'exit' handlers: its
 * preload (test/preload.ts) calls this after the last test; a script calls it when done.
 */
export function stopAllPgClusters(): void {
  for (const c of [...running]) c.stop()
}

/**
 * Stops and removes clusters left by test processes that are gone (killed, timed out): each
 * cluster's folder names the process that started it (owner.pid).
 */
function reapLeftClusters(run: (args: string[]) => void, bin: string): void {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith('towline-pg-'))) {
    const dir = join(tmpdir(), name)
    let pid: number
    try { pid = Number(readFileSync(join(dir, 'owner.pid'), 'utf8')) } catch { continue }
    try { process.kill(pid, 0); continue } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ESRCH') continue }
    try { run([join(bin, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', 'stop']) } catch { /* not running */ }
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The test process's one cluster, started on first use. */
export function pgCluster(): PgCluster {
  shared ??= startPgCluster()
  return shared
}

/**
 * Starts a new cluster; it is stopped and removed when the process exits. Tests run it without
 * fsync (a throwaway's durability does not matter); `fsync: true` keeps PostgreSQL's durable
 * defaults (the bench's, to compare with SQLite's durable writes).
 */
export function startPgCluster(opts: { fsync?: boolean } = {}): PgCluster {
  const bin = pgBinDir()
  if (!bin) throw new Error('PostgreSQL is not installed: `sudo apt-get install postgresql` (Debian, Ubuntu), or set PG_BIN to the folder holding initdb')
  const asRoot = process.getuid?.() === 0
  const dir = mkdtempSync(join(tmpdir(), 'towline-pg-'))
  const owner = asRoot ? pgSystemUser() : null
  if (owner) chownSync(dir, owner.uid, owner.gid)
  const data = join(dir, 'data')
  const port = freePort()
  const run = (args: string[], what: string) => {
    const cmd = owner ? ['runuser', '-u', owner.name, '--', ...args] : args
    const r = Bun.spawnSync(cmd, { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, LC_ALL: 'C.UTF-8' } })
    if (r.exitCode !== 0) throw new Error(`${what} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`)
    return r.stdout.toString()
  }
  reapLeftClusters((args) => run(args, 'pg_ctl stop'), bin)
  writeFileSync(join(dir, 'owner.pid'), String(process.pid))
  run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', USER, '-E', 'UTF8', '--no-sync', '--locale=C'], 'initdb')
  const fast = opts.fsync ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off'
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${fast} -c max_connections=300`
  run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start'], 'pg_ctl start')
  let stopped = false
  let n = 0
  const url = (database = 'postgres') => `postgres://${USER}@127.0.0.1:${port}/${database}`
  const psql = (sql: string, database = 'postgres') => run([join(bin, 'psql'), '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', USER, '-d', database, '-c', sql], 'psql')
  const stop = () => {
    if (stopped) return
    stopped = true
    try { run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'], 'pg_ctl stop') } catch { /* already gone */ }
    // Its files go in the background: the test run need not wait for them.
    Bun.spawn(['rm', '-rf', dir], { stdio: ['ignore', 'ignore', 'ignore'] }).unref()
    running.delete(cluster)
    if (shared === cluster) shared = undefined
  }
  process.on('exit', stop)
  const version = Bun.spawnSync([join(bin, 'postgres'), '--version']).stdout.toString().trim()
  const cluster: PgCluster = {
    url,
    psql,
    version,
    createDatabase(opts = {}) {
      const name = opts.name ?? `t${process.pid}_${++n}_${Math.random().toString(36).slice(2, 8)}`
      psql(`CREATE DATABASE "${name}"${opts.template ? ` TEMPLATE "${opts.template}"` : ''}`)
      return url(name)
    },
    dropDatabase(of: string) {
      if (stopped) return
      psql(`DROP DATABASE IF EXISTS "${new URL(of).pathname.slice(1)}" WITH (FORCE)`)
    },
    restart: () => { run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-m', 'fast', '-w', 'restart'], 'pg_ctl restart') },
    stop,
  }
  running.add(cluster)
  return cluster
}

/** A loopback port free right now. */
function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

function pgSystemUser(): { name: string; uid: number; gid: number } {
  const r = Bun.spawnSync(['id', '-u', 'postgres'])
  const g = Bun.spawnSync(['id', '-g', 'postgres'])
  if (r.exitCode !== 0) throw new Error(`running as ${userInfo().username}: PostgreSQL refuses root and there is no postgres user to run it as`)
  return { name: 'postgres', uid: Number(r.stdout.toString().trim()), gid: Number(g.stdout.toString().trim()) }
}

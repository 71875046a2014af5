/**
 * End-to-end kit: runs the compiled binary (dist/towline, built by `bun run build`, which the
 * test command does first) from a temporary folder, as an operator would.
 */
import { afterEach } from 'bun:test'
import { copyFileSync, existsSync, mkdtempSync, rmSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pgCluster } from './pg'
import { TEST_ENGINE } from './engine'

export const ROOT = resolve(import.meta.dir, '..')
const BUILT = process.env.TOWLINE_BINARY ?? join(ROOT, 'dist/towline')

/** Makes sure the compiled binary exists (builds it once if the test run did not). */
export function ensureBinary(): string {
  if (!existsSync(BUILT)) {
    const r = Bun.spawnSync(['bun', 'scripts/build.ts'], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' })
    if (r.exitCode !== 0) throw new Error('bun scripts/build.ts failed')
  }
  return BUILT
}

/** A loopback port free right now: for a server that must know its own URL before it starts (TOWLINE_PUBLIC_URL in the texts it sends). */
export function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

/**
 * On the PostgreSQL run (TOWLINE_TEST_ENGINE=postgres) each fresh folder's database is a new
 * PostgreSQL database: commands and servers started in the folder get its URL as TOWLINE_DB (its
 * link key stays in the folder, ./towline.key), unless the test names a database itself.
 */
const folderDatabase = new Map<string, string>()
function databaseEnv(cwd: string, env: Record<string, string> | undefined): Record<string, string> {
  const url = folderDatabase.get(cwd)
  return url && !env?.TOWLINE_DB ? { TOWLINE_DB: url } : {}
}

/** The database commands and servers in a fresh folder use: its PostgreSQL database's URL, or its ./towline.db. */
export function databaseOf(dir: string): string {
  return folderDatabase.get(dir) ?? join(dir, 'towline.db')
}

/** A temporary folder holding only a copy of the binary: nothing else beside it. */
export function freshFolder(): { dir: string; bin: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'towline-e2e-'))
  const bin = join(dir, 'towline')
  copyFileSync(ensureBinary(), bin)
  chmodSync(bin, 0o755)
  if (TEST_ENGINE === 'postgres') folderDatabase.set(dir, pgCluster().createDatabase())
  return {
    dir, bin,
    cleanup: () => {
      const db = folderDatabase.get(dir)
      folderDatabase.delete(dir)
      if (db) { try { pgCluster().dropDatabase(db) } catch { /* the cluster is gone already */ } }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Runs a CLI command of the binary and returns its exit code and output. */
export function cli(bin: string, args: string[], opts: { cwd: string; env?: Record<string, string> }) {
  const r = Bun.spawnSync([bin, ...args], { cwd: opts.cwd, env: { ...process.env, ...databaseEnv(opts.cwd, opts.env), ...opts.env }, stdout: 'pipe', stderr: 'pipe' })
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
}

export interface RunningServer {
  url: string
  api: string
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  stdout(): string
  stderr(): string
  /** Sends a signal and waits for exit; returns the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Starts `towline serve` on a free port and waits until it prints where it listens. Maps load no
 * tiles unless a test asks for them (TOWLINE_TILE_URL): tests send nothing beyond this machine.
 */
export async function startServer(bin: string, opts: { cwd: string; env?: Record<string, string>; args?: string[] }): Promise<RunningServer> {
  const proc = Bun.spawn([bin, 'serve', '--port', '0', '--host', '127.0.0.1', ...(opts.args ?? [])], {
    cwd: opts.cwd, env: { ...process.env, LOG_LEVEL: 'info', TOWLINE_TILE_URL: '', ...databaseEnv(opts.cwd, opts.env), ...opts.env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe',
  })
  let out = ''
  let err = ''
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const dec = new TextDecoder()
    for await (const chunk of stream) add(dec.decode(chunk))
  }
  void pump(proc.stdout, (s) => { out += s; if (process.env.TOWLINE_TEST_LOG) process.stdout.write(s) })
  // TOWLINE_TEST_LOG=1 shows what the binary logs as it runs.
  void pump(proc.stderr, (s) => { err += s; if (process.env.TOWLINE_TEST_LOG) process.stderr.write(s) })
  const deadline = Date.now() + 15_000
  let url: string | undefined
  while (!url) {
    const m = /listening on (https?:\/\/[^\s]+)/.exec(err)
    if (m) url = m[1]
    else if (proc.exitCode !== null) throw new Error(`serve exited ${proc.exitCode}: ${err}`)
    else if (Date.now() > deadline) { proc.kill(); throw new Error(`serve did not start: ${err}`) }
    else await Bun.sleep(10)
  }
  // A server that ends by itself (not by a signal a test sent) says why, whatever the test then reports.
  void proc.exited.then((code) => {
    if (proc.signalCode === null && code !== 0) process.stderr.write(`\n[test/binary] serve (${url}) exited ${code} by itself; its last output:\n${err.slice(-3000)}\n${out.slice(-3000)}\n`)
  })
  return {
    url: url!,
    api: `${url}/api/v1`,
    proc,
    stdout: () => out,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null) proc.kill(signal)
      return proc.exited
    },
  }
}

/**
 * A startServer whose servers are all killed after each test of the file that calls this (at
 * its top level), so a failed expectation never leaves one running.
 */
export function startServerPerTest(): typeof startServer {
  const running: RunningServer[] = []
  afterEach(async () => { for (const s of running.splice(0)) if (s.proc.exitCode === null) await s.stop('SIGKILL') })
  return async (...args) => {
    const s = await startServer(...args)
    running.push(s)
    return s
  }
}

/** Creates a key with the CLI and returns it (the key is the only line on stdout). */
export function createKeyWithCli(bin: string, cwd: string, scopes: string, extra: string[] = [], env?: Record<string, string>): string {
  const r = cli(bin, ['keys', 'create', '--name', `e2e-${scopes}`, '--scopes', scopes, ...extra], { cwd, env })
  if (r.code !== 0) throw new Error(`keys create failed: ${r.stderr}`)
  return r.stdout.trim()
}

/** Calls the API of a running binary with a key: JSON in, status and parsed JSON out. */
export function apiCaller(server: () => RunningServer, key: () => string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server().api + path, { method, headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: res.status, body: await res.json() as any }
  }
}

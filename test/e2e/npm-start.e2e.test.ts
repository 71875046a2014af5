/** `npm start`, the README's first command, stops with the server: SIGTERM reaches it. */
import { expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../binary'

/** Pids of processes whose command line mentions `marker` (only ever this test's own server). */
function processesMentioning(marker: string): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) } catch { return false }
  }).map(Number)
}

test('SIGTERM to npm start stops the server: it drains, exits, and the port is free', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'towline-npm-start-'))
  const db = join(dir, 'npm-start.db')
  const npm = Bun.spawn(['npm', 'start', '--', '--port', '0', '--host', '127.0.0.1', '--db', db], {
    cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info' }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe',
  })
  let out = ''
  let err = ''
  const pump = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => { for await (const c of s) add(new TextDecoder().decode(c)) }
  // The server shares npm's stdout: it reaches its end when npm and the server have both exited.
  const outClosed = pump(npm.stdout, (t) => { out += t })
  void pump(npm.stderr, (t) => { err += t })
  try {
    const deadline = Date.now() + 20_000
    let url: string | undefined
    while (!url && Date.now() < deadline && npm.exitCode === null) {
      url = /listening on (http:\/\/\S+)/.exec(err)?.[1]
      await Bun.sleep(20)
    }
    expect(url).toBeDefined()
    expect((await fetch(`${url}/healthz`)).status).toBe(200)

    npm.kill('SIGTERM')
    await npm.exited
    // npm does not wait for its script; the server, signalled too, drains and exits (bounded wait:
    // an orphaned server would hold the pipe open for ever).
    expect(await Promise.race([outClosed.then(() => 'closed'), Bun.sleep(10_000).then(() => 'still open')])).toBe('closed')
    expect(out).toContain('shutdown complete')
    expect(processesMentioning(db)).toEqual([])
    expect(await fetch(`${url}/healthz`).then(() => 'answered', () => 'refused')).toBe('refused')
  } finally {
    // Bounded clean-up if the server was orphaned: only the process started with this test's database.
    for (const pid of processesMentioning(db)) process.kill(pid, 'SIGKILL')
    if (npm.exitCode === null) npm.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}, 30_000)

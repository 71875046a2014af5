import { expect, test } from 'bun:test'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAccessLog, createLogger } from './log'

/** Logs through a real file descriptor, as `serve` does to stdout, and returns the `n` lines written (waiting for the async writes). */
async function linesOf(level: string, n: number, write: (log: ReturnType<typeof createLogger>) => void): Promise<any[]> {
  const dir = mkdtempSync(join(tmpdir(), 'towline-log-'))
  const file = join(dir, 'out.log')
  const fd = openSync(file, 'w')
  try {
    const log = createLogger(level, fd)
    write(log)
    log.flush()
    const read = () => readFileSync(file, 'utf8').split('\n').filter(Boolean)
    for (let i = 0; i < 400 && read().length < n; i++) await Bun.sleep(5)
    // Nothing more may come: whatever was written was written before the writes above were flushed.
    return read().map((l) => JSON.parse(l))
  } finally {
    closeSync(fd)
    rmSync(dir, { recursive: true, force: true })
  }
}

const line = { request_id: 'req_abc000001', method: 'GET', route: '/api/v1/jobs/:id', status: 200, duration_ms: 0.41, key_id: 'key_01JF3Z8Q2W' }

test("the access log writes exactly the line pino would, on the logger's own stream", async () => {
  const [ours, pinos] = await linesOf('info', 2, (log) => {
    createAccessLog(log)(line)
    log.info(line, 'request')
  })
  expect(Object.keys(ours!)).toEqual(Object.keys(pinos!))
  expect({ ...ours, time: 0 }).toEqual({ ...pinos, time: 0 })
  expect(Date.parse(ours!.time)).toBeGreaterThan(0)
})

test('a hostile route or method stays one valid JSON line; optional fields appear only when set', async () => {
  const [hostile, plain] = await linesOf('info', 2, (log) => {
    const access = createAccessLog(log)
    access({ ...line, route: '/nope"}\n{"level":60,"msg":"forged', method: 'G\\ET', body_problem: 'aborted' })
    access({ request_id: 'req_x', method: 'GET', route: '/healthz', status: 200, duration_ms: 0.1 })
  })
  expect(hostile).toMatchObject({ route: '/nope"}\n{"level":60,"msg":"forged', method: 'G\\ET', body_problem: 'aborted', msg: 'request' })
  expect('key_id' in plain! || 'body_problem' in plain!).toBe(false)
})

test('nothing is written below level info', async () => {
  // A warn line after it marks the end: had the access line been written, it would come first.
  const lines = await linesOf('warn', 1, (log) => { createAccessLog(log)(line); log.warn('end') })
  expect(lines.map((l) => l.msg)).toEqual(['end'])
})

test('a warn or error line is on disk when the call returns; info lines follow in a batch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'towline-log-'))
  const file = join(dir, 'out.log')
  const fd = openSync(file, 'w')
  try {
    const log = createLogger('info', fd)
    log.info('first')
    expect(readFileSync(file, 'utf8')).toBe('')
    log.error({ request_id: 'req_1' }, 'boom')
    // Written before error() returned, with the info line before it, in order.
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(lines.map((l) => [l.level, l.msg])).toEqual([[30, 'first'], [50, 'boom']])
    log.info('second')
    log.warn('database files were readable by other users')
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).msg).slice(2)).toEqual(['second', 'database files were readable by other users'])
  } finally {
    closeSync(fd)
    rmSync(dir, { recursive: true, force: true })
  }
})

test('lines still waiting in a batch are written when the process exits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'towline-log-'))
  try {
    const script = join(dir, 'child.ts')
    require('node:fs').writeFileSync(script, `import { createLogger } from ${JSON.stringify(join(import.meta.dir, 'log.ts'))}\nconst log = createLogger('info')\nfor (let i = 0; i < 500; i++) log.info({ i }, 'line')\nprocess.exit(0)\n`)
    const out = Bun.spawnSync([process.execPath, script], { stdout: 'pipe' }).stdout.toString()
    expect(out.split('\n').filter(Boolean).length).toBe(500)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a batch written because 64 KiB were waiting is complete when the process exits right after', () => {
  const dir = mkdtempSync(join(tmpdir(), 'towline-log-'))
  try {
    const script = join(dir, 'child.ts')
    // ~150 KiB: two full batches go out while logging, the rest on logger.flush() and exit.
    require('node:fs').writeFileSync(script, `import { createLogger } from ${JSON.stringify(join(import.meta.dir, 'log.ts'))}\nconst log = createLogger('info')\nfor (let i = 0; i < 1500; i++) log.info({ i, pad: 'x'.repeat(40) }, 'line')\nlog.info('shutdown complete')\nlog.flush()\nprocess.exit(0)\n`)
    const out = Bun.spawnSync([process.execPath, script], { stdout: 'pipe' }).stdout.toString()
    const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(lines.length).toBe(1501)
    expect(lines.at(-1).msg).toBe('shutdown complete')
    expect(lines.slice(0, -1).map((l) => l.i)).toEqual([...Array(1500).keys()])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

/**
 * `towline jobs import` and `towline jobs export` through the compiled binary, on the database a
 * running server serves: real files (BOM, CRLF, quoted newlines, 500 and 501 rows, 2 MB + 1
 * byte), one error a line, exit codes, nothing written on a refusal, no texts, and an export
 * that imports into another account as the same jobs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { apiCaller, cli, createKeyWithCli, databaseOf, freshFolder, startServer, type RunningServer } from '../binary'
import { BASIC_HEADER, completedRow, csvText } from '../csv-files'
import { readRecords } from '../../src/jobs-csv/csv-text'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string
const api = apiCaller(() => server, () => key)
const run = (args: string[]) => cli(folder.bin, args, { cwd: folder.dir })
const file = (name: string, content: string | Uint8Array) => { const p = join(folder.dir, name); writeFileSync(p, content); return p }
const total = async () => {
  let n = 0
  let cursor = ''
  for (;;) {
    const page = (await api('GET', `/jobs?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).body
    n += page.data.length
    if (!page.has_more) return n
    cursor = page.next_cursor
  }
}

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  key = createKeyWithCli(folder.bin, folder.dir, 'all')
}, 60_000)
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

describe('towline jobs import', () => {
  test('a dry run prints one error a line with the spreadsheet row and exits 1; nothing is written', async () => {
    const path = file('bad.csv', csvText(BASIC_HEADER, [
      completedRow(1, { 'pickup.location': 'two\r\nlines' }),
      completedRow(2, { 'customer.name': '' }),
      completedRow(3, { status: 'cancelled', completed_at: '', cancelled_at: '2026-03-04T23:00:00Z' }),
    ], { bom: true }))
    const r = run(['jobs', 'import', path, '--dry-run'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('row 3, customer.name: must not be empty\nrow 4, cancel_reason: is required for a cancelled job: 3 to 500 characters\n')
    expect(r.stderr).toBe('2 errors; nothing was written (dry run).\n')
    const again = run(['jobs', 'import', path])
    expect(again.code).toBe(1)
    expect(await total()).toBe(0)
  })

  test('a good file: the dry run exits 0 and writes nothing; the import exits 0, prints how many, and the server shows them, untexted', async () => {
    const path = file('good.csv', csvText(BASIC_HEADER, [completedRow(1, { 'customer.name': 'Lee, Ann', 'pickup.location': 'I-5 N\r\nexit 299B' }), completedRow(2)], { bom: true }))
    const dry = run(['jobs', 'import', path, '--dry-run'])
    expect({ code: dry.code, out: dry.stdout }).toEqual({ code: 0, out: 'All 2 rows pass; nothing was written (dry run).\n' })
    const one = run(['jobs', 'import', file('one.csv', csvText(BASIC_HEADER, [completedRow(9)])), '--dry-run'])
    expect({ code: one.code, out: one.stdout }).toEqual({ code: 0, out: 'The 1 row passes; nothing was written (dry run).\n' })
    expect(await total()).toBe(0)
    const done = run(['jobs', 'import', path])
    expect({ code: done.code, out: done.stdout }).toEqual({ code: 0, out: 'Imported 2 jobs.\n' })
    const job = (await api('GET', '/jobs?external_ref=HIST-1')).body.data[0]
    expect(job).toMatchObject({ status: 'completed', imported: true, customer: { name: 'Lee, Ann' }, pickup: { location: 'I-5 N\r\nexit 299B' } })
    const events = (await api('GET', `/jobs/${job.id}/events`)).body.data
    expect(events).toMatchObject([{ type: 'job.created', actor: 'system', detail: { imported: true } }])
    expect((await api('GET', `/jobs/${job.id}/texts`)).body.data).toEqual([])
    // The same file again: every reference is now taken.
    const twice = run(['jobs', 'import', path])
    expect(twice.code).toBe(1)
    expect(twice.stdout).toContain(`row 2, external_ref: is already the reference of another job of this account (${job.id})`)
  })

  test('500 rows import; 501 rows and 2 MB + 1 byte are refused whole with the limit named, exit 1, nothing written', async () => {
    const before = await total()
    const rows = Array.from({ length: 501 }, (_, i) => completedRow(1000 + i))
    const over = run(['jobs', 'import', file('501.csv', csvText(BASIC_HEADER, rows))])
    expect({ code: over.code, out: over.stdout }).toEqual({ code: 1, out: 'file: The file has 501 rows of jobs; at most 500 rows can be imported at once. Split it into smaller files.\n' })
    const small = csvText(BASIC_HEADER, [completedRow(5000)])
    const big = file('big.csv', small + ' '.repeat(2 * 1024 * 1024 + 1 - Buffer.byteLength(small)))
    expect(statSync(big).size).toBe(2 * 1024 * 1024 + 1)
    const tooBig = run(['jobs', 'import', big])
    expect({ code: tooBig.code, out: tooBig.stdout }).toEqual({ code: 1, out: 'file: The file is 2,097,153 bytes; at most 2 MB (2,097,152 bytes) can be imported at once. Split it into smaller files.\n' })
    expect(await total()).toBe(before)
    const ok = run(['jobs', 'import', file('500.csv', csvText(BASIC_HEADER, rows.slice(0, 500)))])
    expect({ code: ok.code, out: ok.stdout }).toEqual({ code: 0, out: 'Imported 500 jobs.\n' })
    expect(await total()).toBe(before + 500)
  })
})

test('jobs import reads standard input (`-`, or /dev/stdin) from a pipe, and refuses a stream over 2 MB once it has read past the limit', () => {
  const csv = file('stdin.csv', csvText(BASIC_HEADER, [completedRow(901, { 'customer.name': 'Stdin Sam' })], { bom: true }))
  const env = { ...process.env, TOWLINE_DB: databaseOf(folder.dir) }
  const piped = (script: string, ...args: string[]) => {
    const r = Bun.spawnSync(['bash', '-c', script, folder.bin, ...args], { cwd: folder.dir, env, stdout: 'pipe', stderr: 'pipe' })
    return { code: r.exitCode, out: r.stdout.toString() }
  }
  for (const name of ['-', '/dev/stdin']) {
    expect(piped('cat "$1" | "$0" jobs import "$2" --dry-run', csv, name)).toEqual({ code: 0, out: 'The 1 row passes; nothing was written (dry run).\n' })
  }
  const big = piped(`head -c ${2 * 1024 * 1024 + 10} /dev/zero | tr '\\0' A | "$0" jobs import -`)
  expect(big).toEqual({ code: 1, out: 'file: The file is more than 2,097,152 bytes; at most 2 MB (2,097,152 bytes) can be imported at once. Split it into smaller files.\n' })
})

describe('towline jobs export', () => {
  test('into a reader that has gone (`| true`, `| head`): it stops without a word, as a program killed by SIGPIPE (141)', () => {
    const r = Bun.spawnSync(['bash', '-c', '"$0" jobs export | true; echo "exit ${PIPESTATUS[0]}"', folder.bin], { cwd: folder.dir, env: { ...process.env, TOWLINE_DB: databaseOf(folder.dir) }, stdout: 'pipe', stderr: 'pipe' })
    expect({ out: r.stdout.toString(), err: r.stderr.toString() }).toEqual({ out: 'exit 141\n', err: '' })
  })

  test('writes the chosen window and statuses as CSV to stdout or a file (owner-only), which imports into another account as the same jobs', async () => {
    const made = (await api('POST', '/jobs', { external_ref: 'LIVE-1', customer: { name: 'Ann Live', phone: '+15035550100' }, pickup: { location: 'Exit 9' } })).body
    expect((await api('PATCH', `/jobs/${made.id}`, { status: 'cancelled', cancel_reason: 'Customer found another ride' })).status).toBe(200)
    const cancelled = run(['jobs', 'export', '--status', 'cancelled'])
    expect(cancelled.code).toBe(0)
    const lines = cancelled.stdout.replace(/^\ufeff/, '').trimEnd().split('\r\n')
    expect(lines.length).toBe(2)
    expect(lines[1]).toContain("LIVE-1,cancelled,")
    expect(lines[1]).toContain("'+15035550100")
    const window = run(['jobs', 'export', '--since', '2026-03-02T00:00:00Z', '--until', '2026-03-02', '--status', 'completed,cancelled'])
    const created = readRecords(window.stdout.replace(/^\ufeff/, ''), ',').slice(1).map((r) => r.cells[3]!)
    expect(created.length).toBeGreaterThan(1)
    for (const at of created) expect(at.startsWith('2026-03-02T')).toBe(true)
    expect(window.stdout).toContain(',HIST-1,')
    expect(window.stdout).not.toContain(',HIST-2,')
    expect(run(['jobs', 'export', '--since', 'yesterday']).code).toBe(2)

    const out = join(folder.dir, 'all.csv')
    // The first days of March: under the import's 500 rows.
    const all = run(['jobs', 'export', '--until', '2026-03-03T00:00:00Z', '--out', out])
    expect(all.code).toBe(0)
    expect(statSync(out).mode & 0o777).toBe(0o600)
    const other = run(['accounts', 'create', '--name', 'Fresh Towing']).stdout.trim()
    const into = run(['jobs', 'import', out, '--account', other])
    expect(into.code).toBe(0)
    expect(into.stdout).toMatch(/^Imported \d+ jobs\.\n$/)
    expect(Number(/\d+/.exec(into.stdout)![0])).toBe(readRecords(readFileSync(out, 'utf8'), ',').length - 1)
    const again = run(['jobs', 'export', '--account', other])
    const body = (t: string) => readRecords(t.replace(/^\ufeff/, ''), ',').map((r) => r.cells.slice(1).join('|')).sort()
    expect(body(again.stdout)).toEqual(body(readFileSync(out, 'utf8')))
  })

  test('a day given to --since and --until starts at midnight where the company works (accounts create --time-zone)', async () => {
    const island = run(['accounts', 'create', '--name', 'Island Towing', '--time-zone', 'pacific/kiritimati']).stdout.trim()
    expect(JSON.parse(run(['accounts', 'list', '--json']).stdout).data.find((a: { id: string }) => a.id === island)).toMatchObject({ time_zone: 'Pacific/Kiritimati' })
    // 14:05 in Portland on 2 and 3 March (22:05 UTC) is already 12:05 the next day in Kiritimati (UTC+14).
    expect(run(['jobs', 'import', file('island.csv', csvText(BASIC_HEADER, [completedRow(7001), completedRow(7002)])), '--account', island]).code).toBe(0)
    const refs = (args: string[]) => readRecords(run(['jobs', 'export', '--account', island, ...args]).stdout.replace(/^\ufeff/, ''), ',').slice(1).map((r) => r.cells[1])
    // A day given to --until is included, as the jobs list's To: 3 March alone, then 3 and 4 March.
    expect(refs(['--since', '2026-03-03', '--until', '2026-03-03'])).toEqual(['HIST-7001'])
    expect(refs(['--since', '2026-03-03', '--until', '2026-03-04'])).toEqual(['HIST-7002', 'HIST-7001'])
    expect(refs(['--since', '2026-03-04'])).toEqual(['HIST-7002'])
    expect(refs(['--since', '2026-03-02T22:05:00Z', '--until', '2026-03-02T22:05:00.001Z'])).toEqual(['HIST-7001'])
    const bad = run(['accounts', 'create', '--name', 'Nowhere Towing', '--time-zone', 'Mars/Olympus'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--time-zone must be a time zone name such as America/Los_Angeles')
  })
})

test('an import error naming what came from the file writes its control characters escaped, never raw to the terminal', () => {
  const path = file('escapes.csv', `external_ref,customer.name,pickup.location,status,created_at,\u001b[31mred\u0007\n`)
  const r = run(['jobs', 'import', path, '--dry-run'])
  expect(r.code).toBe(1)
  expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
  expect(r.stdout).toContain('\\u001b[31mred\\u0007')
})

/**
 * CSV import and export as a dispatcher uses them, in Chromium against the compiled binary: a real
 * file chosen with the file input, Check file listing the row errors, the fixed file imported and
 * then seen through the API and on the jobs list, Export CSV downloading the current search;
 * axe-core and a 360 px phone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { apiCaller } from '../binary'
import { signedInPage, startDashboard, type Dashboard } from '../browser/dashboard'
import { expectAccessible, expectNoHorizontalOverflow } from '../browser/page-checks'
import { BASIC_HEADER, completedRow, csvText } from '../csv-files'
import { readRecords } from '../../src/jobs-csv/csv-text'

const USER = { email: 'disp@example.com', password: 'dispatch password 1', role: 'dispatcher' as const }
let d: Dashboard
const api = apiCaller(() => d.server, () => d.key)

beforeAll(async () => { d = await startDashboard({ logins: [USER] }) }, 60_000)
afterAll(async () => { await d?.stop() })

const file = (name: string, text: string) => { const p = join(d.folder.dir, name); writeFileSync(p, text); return p }

/** Chooses `path` in the CSV file input and presses `button`; waits for the page it leads to. */
async function send(page: Page, path: string, button: 'Check file' | 'Import') {
  await page.getByLabel('CSV file', { exact: true }).setInputFiles(path)
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: button }).click()])
}

describe('CSV import and export in Chromium', () => {
  test('Check file lists the row errors; the fixed file imports; the jobs appear in the API and on the jobs list', async () => {
    const page = await signedInPage(d.browser, d.base, USER)
    await page.getByRole('link', { name: 'Import', exact: true }).click()
    await page.waitForURL(`${d.base}/import`)
    await expectAccessible(page)

    const rows = [
      completedRow(1, { 'customer.name': 'Lee, Ann', 'pickup.location': 'I-5 N at exit 299B\r\nright shoulder' }),
      completedRow(2, { 'customer.name': '' }),
      completedRow(3, { status: 'cancelled', completed_at: '', cancelled_at: '2026-03-04T23:00:00Z' }),
    ]
    await send(page, file('history.csv', csvText(BASIC_HEADER, rows, { bom: true })), 'Check file')
    const table = page.getByRole('table')
    const cells = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)))
    expect(cells).toEqual([
      ['3', 'customer.name', 'must not be empty'],
      ['4', 'cancel_reason', 'is required for a cancelled job: 3 to 500 characters'],
    ])
    expect(await page.getByRole('alert').textContent()).toContain('Checked: nothing was written.')
    await expectAccessible(page)
    expect((await api('GET', '/jobs')).body.data).toEqual([])

    rows[1] = completedRow(2)
    rows[2] = completedRow(3, { status: 'cancelled', completed_at: '', cancelled_at: '2026-03-04T23:00:00Z', cancel_reason: 'Customer found another ride' })
    // A check that passes says so where the keyboard (and a screen reader) is: focus on the words.
    await send(page, file('fixed.csv', csvText(BASIC_HEADER, rows, { bom: true })), 'Check file')
    await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'status')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toStartWith('Every row of fixed.csv passes (3 jobs).')
    await send(page, file('fixed.csv', csvText(BASIC_HEADER, rows, { bom: true })), 'Import')
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/import?imported=3')
    expect(await page.getByRole('status').textContent()).toBe('Imported 3 jobs. See them in the jobs list.')
    await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'status')
    const listed = (await api('GET', '/jobs')).body.data
    expect(listed.map((j: any) => j.external_ref).sort()).toEqual(['HIST-1', 'HIST-2', 'HIST-3'])
    const cancelled = listed.find((j: any) => j.external_ref === 'HIST-3')
    expect(cancelled).toMatchObject({ status: 'cancelled', cancel_reason: 'Customer found another ride', imported: true, timestamps: { cancelled_at: '2026-03-04T23:00:00.000Z' } })
    expect((await api('GET', `/jobs/${cancelled.id}/events`)).body.data).toMatchObject([{ type: 'job.created', actor: 'dispatcher', detail: { imported: true } }])

    await page.getByRole('link', { name: 'See them in the jobs list' }).click()
    await page.waitForURL(`${d.base}/jobs`)
    const ids = await page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id')))
    expect(ids.sort()).toEqual(listed.map((j: any) => j.id).sort())
    expect(await page.getByRole('link', { name: 'Lee, Ann' }).count()).toBe(1)
  })

  test('Export CSV downloads the current search, every milestone time with it', async () => {
    const page = await signedInPage(d.browser, d.base, USER)
    await page.goto(`${d.base}/jobs`)
    await page.getByLabel('Status', { exact: true }).selectOption('cancelled')
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Search' }).click()])
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()])
    expect(download.suggestedFilename()).toMatch(/^towline-jobs-\d{4}-\d{2}-\d{2}\.csv$/)
    const saved = join(d.folder.dir, 'export.csv')
    await download.saveAs(saved)
    const records = readRecords(readFileSync(saved, 'utf8').replace(/^\ufeff/, ''), ',')
    const header = records[0]!.cells
    for (const c of ['status', 'created_at', 'completed_at', 'cancelled_at', 'closed_at', 'unit', 'commercial_account', 'final_price_cents']) expect(header).toContain(c)
    expect(records.slice(1).map((r) => r.cells[header.indexOf('external_ref')])).toEqual(['HIST-3'])
    expect(records[1]!.cells[header.indexOf('cancelled_at')]).toBe('2026-03-04T23:00:00.000Z')
  })

  test('the import page at 360 px: no sideways scroll, and accessible with its error table', async () => {
    const page = await signedInPage(d.browser, d.base, USER, { width: 360, height: 740 })
    await page.goto(`${d.base}/import`)
    await expectNoHorizontalOverflow(page)
    await send(page, file('bad.csv', csvText([...BASIC_HEADER, 'customer.shoe_size'], [completedRow(9)])), 'Check file')
    expect(await page.getByRole('table').locator('tbody tr').count()).toBe(1)
    await expectNoHorizontalOverflow(page, { scrollers: ['.table-scroll'] })
    await expectAccessible(page)
  })

  // Linux's own account of the server's threads: the import's thread yields the CPU to the server's.
  test.skipIf(process.platform !== 'linux')('the import ran on a thread of its own at nice 19; the server\'s thread kept normal priority', () => {
    const pid = d.server.proc.pid
    const threads = readdirSync(`/proc/${pid}/task`).map((tid) => {
      const sched = readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8')
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      return { tid: Number(tid), policy: Number(/^policy\s*:\s*(\d+)/m.exec(sched)![1]), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) }
    })
    const main = threads.find((t) => t.tid === pid)!
    expect({ policy: main.policy, nice: main.nice }).toEqual({ policy: 0, nice: 0 })
    // The imports above started the worker (on PostgreSQL its connection's thread too, which
    // inherits its nice). Not SCHED_IDLE (policy 5): it holds the write lock while it writes.
    expect(threads.filter((t) => t.nice === 19).length).toBeGreaterThanOrEqual(1)
    expect(threads.filter((t) => t.policy !== 0)).toEqual([])
  })
})

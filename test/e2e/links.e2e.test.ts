/**
 * Job links through the binary: `towline jobs new-tracking-link` replaces a job's tracking link
 * while the server runs; the old link answers 410 with a page saying so at once, and a live or
 * unknown token answers 404 until the tracking page exists.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { apiCaller, cli, createKeyWithCli, freshFolder, startServer, type RunningServer } from '../binary'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let key: string
let publicUrl: string
beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir })
  publicUrl = `http://localhost:${new URL(server.url).port}`
  key = createKeyWithCli(folder.bin, folder.dir, 'jobs:read,jobs:write')
})
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

const call = apiCaller(() => server, () => key)
const base62 = (n: number) => [...randomBytes(n)].map((b) => '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[b % 62]).join('')
async function page(path: string) {
  const res = await fetch(`${server.url}${path}`)
  return { status: res.status, type: res.headers.get('content-type') ?? '', html: await res.text() }
}

describe('New tracking link from the console', () => {
  test('the old link answers 410 at once with a page saying so; the new one is the tracking page, a random token 404', async () => {
    const created = await call('POST', '/jobs', { customer: { name: 'Ann Lee', phone: '+15035550142', sms_consent: true }, pickup: { location: 'I-5 N at exit 299B' } })
    expect(created.status).toBe(201)
    const job = created.body
    const old = new URL(job.tracking_url).pathname
    expect(job.tracking_url).toStartWith(`${publicUrl}/t/`)
    expect((await page(old)).status).toBe(200)

    const r = cli(folder.bin, ['jobs', 'new-tracking-link', job.id], { cwd: folder.dir, env: { TOWLINE_PUBLIC_URL: publicUrl } })
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    const printed = r.stdout.trim()
    const now = (await call('GET', `/jobs/${job.id}`)).body
    expect(now.tracking_url).toBe(printed)
    expect(printed).not.toBe(job.tracking_url)

    const gone = await page(old)
    expect(gone.status).toBe(410)
    expect(gone.type).toStartWith('text/html')
    expect(gone.html).toContain('This tracking link was replaced. Ask My towing company for the new one.')
    expect((await page(new URL(printed).pathname)).status).toBe(200)
    expect((await page(`/t/${base62(24)}`)).status).toBe(404)

    const events = (await call('GET', `/jobs/${job.id}/events`)).body.data
    expect(events.at(-1)).toMatchObject({ type: 'job.updated', actor: 'system', detail: { fields: ['tracking_url'] } })
  })

  test('without TOWLINE_PUBLIC_URL the link is printed on the default address, with a warning saying so on stderr', async () => {
    const job = (await call('POST', '/jobs', { customer: { name: 'Bo Diaz' }, pickup: { location: 'Hwy 26 at milepost 40' } })).body
    const r = cli(folder.bin, ['jobs', 'new-tracking-link', job.id], { cwd: folder.dir })
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toStartWith('http://localhost:8080/t/')
    expect(r.stderr).toContain('TOWLINE_PUBLIC_URL is not set')
    // The token is the job's: the path printed opens the page on the address serve answers at.
    expect((await page(new URL(r.stdout.trim()).pathname)).status).toBe(200)
  })

  test('an unknown job is refused with one line naming it, and nothing changes', () => {
    const r = cli(folder.bin, ['jobs', 'new-tracking-link', 'job_nope'], { cwd: folder.dir })
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n')[0]).toContain('job_nope')
    expect(r.stdout).toBe('')
  })
})

/**
 * Sites end to end: an operator sets a company up from the CLI of the compiled binary (sites,
 * company name and phone, units per site, services with rates, a key limited to one site), and
 * the API then shows that key only its site: units, jobs, assign, external_ref conflicts and
 * webhook endpoints (delivered to a real HTTPS receiver on loopback).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cli, freshFolder, startServer, type RunningServer } from '../binary'
import { makeTestCa, startReceiver } from '../https-receiver'

let folder: ReturnType<typeof freshFolder>
let server: RunningServer
const ca = makeTestCa()
const receiver = startReceiver(ca)

/** Runs a CLI command that must succeed and returns its parsed --json output. */
function json(args: string[]): any {
  // A public URL phones can reach (nothing is sent there): units add would otherwise warn on stderr.
  const r = cli(folder.bin, [...args, '--json'], { cwd: folder.dir, env: { TOWLINE_PUBLIC_URL: 'https://tow.example.com' } })
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' })
  return JSON.parse(r.stdout)
}

let north: { id: string; name: string }
let south: { id: string; name: string }
const units: Record<string, any> = {}
let service: any
let northKey: string
let allKey: string

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir, env: { NODE_EXTRA_CA_CERTS: ca.caPath, TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' } })
  // The operator's set-up, while the service runs, as the README shows it.
  north = json(['sites', 'add', '--name', 'North yard'])
  south = json(['sites', 'add', '--name', 'South yard'])
  json(['accounts', 'rename', '--name', 'Harbor Towing'])
  json(['accounts', 'update', '--phone', '(503) 555-0100'])
  units.north = json(['units', 'add', '--name', 'N-1 flatbed', '--driver-name', 'Nia', '--driver-phone', '503-555-0111', '--site', 'North yard'])
  units.south = json(['units', 'add', '--name', 'S-1 wrecker', '--site', south.id])
  units.floater = json(['units', 'add', '--name', 'F-1 floater'])
  service = json(['services', 'add', '--name', 'Flatbed tow', '--type', 'flatbed', '--rate', 'hook=95.00', '--rate', 'per_mile=4.50'])
  northKey = json(['keys', 'create', '--name', 'north-dispatch', '--scopes', 'all', '--site', 'North yard']).key
  allKey = json(['keys', 'create', '--name', 'head-office', '--scopes', 'all']).key
})
afterAll(async () => {
  await server?.stop()
  receiver.stop()
  folder?.cleanup()
})

async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(server.api + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: await res.json() as any }
}
const newJob = (key: string, extra: Record<string, unknown> = {}) =>
  call(key, 'POST', '/jobs', { customer: { name: 'Ann Lee' }, pickup: { location: 'I-5 N mile 12' }, ...extra })

describe('the operator sets the company up from the CLI', () => {
  // structuredClone: bun's toMatchObject writes its asymmetric matchers into the object it checks.
  test('sites add and sites list print sites as the contract says', () => {
    expect(structuredClone(north)).toMatchObject({ object: 'site', id: expect.stringMatching(/^site_/), name: 'North yard' })
    expect(structuredClone(south)).toMatchObject({ object: 'site', id: expect.stringMatching(/^site_/), name: 'South yard' })
    const listed = json(['sites', 'list'])
    expect(listed.object).toBe('list')
    expect(listed.data.map((s: any) => s.name)).toEqual(['Main yard', 'North yard', 'South yard'])
    expect(listed.data.every((s: any) => s.object === 'site' && s.id.startsWith('site_'))).toBe(true)
    // Without --json: the id alone on stdout, for scripts.
    const plain = cli(folder.bin, ['sites', 'add', '--name', 'East yard'], { cwd: folder.dir })
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(/^site_[0-9A-Z]+\n$/)
  })

  test('a second site of the same name, or one for an unknown account, is refused with one line and exit 2', () => {
    for (const args of [['sites', 'add', '--name', 'north YARD'], ['sites', 'add', '--name', 'West', '--account', 'acct_nope'], ['units', 'add', '--name', 'X', '--site', 'Nowhere']]) {
      const r = cli(folder.bin, args, { cwd: folder.dir })
      expect({ args, code: r.code }).toEqual({ args, code: 2 })
      expect(r.stderr.split('\n')[0]).toMatch(/already has a site named|no account acct_nope|no site "Nowhere"/)
    }
    expect(json(['sites', 'list']).data.map((s: any) => s.name)).toEqual(['Main yard', 'North yard', 'South yard', 'East yard'])
  })

  test('accounts rename and update change what customers see; the phone is stored in E.164', () => {
    const [account] = json(['accounts', 'list']).data
    expect(account).toMatchObject({ object: 'account', name: 'Harbor Towing', phone: '+15035550100', country: 'US', sms_from: null })
    const bad = cli(folder.bin, ['accounts', 'update', '--phone', 'call us'], { cwd: folder.dir })
    expect(bad.code).toBe(2)
    expect(bad.stderr.split('\n')[0]).toContain('"call us" is not a phone number')
    expect(json(['accounts', 'list']).data[0].phone).toBe('+15035550100')
  })

  test('units add --site prints the sites the unit serves (null: every site)', () => {
    expect(structuredClone(units.north)).toMatchObject({ object: 'unit', id: expect.stringMatching(/^unit_/), name: 'N-1 flatbed', driver: { name: 'Nia', phone: '+15035550111' }, site_ids: [north.id], device_id: expect.any(String), osmand_url: expect.stringMatching(/\/osmand$/) })
    expect(units.south.site_ids).toEqual([south.id])
    expect(units.floater.site_ids).toBeNull()
  })

  test('--help names every option of these commands', () => {
    const help = (args: string[]) => {
      const r = cli(folder.bin, [...args, '--help'], { cwd: folder.dir })
      expect(r.code).toBe(0)
      return r.stdout
    }
    expect(help(['sites', 'add'])).toContain('towline sites add --name NAME [--account ID] [--db FILE] [--json]')
    expect(help(['sites', 'list'])).toContain('towline sites list')
    expect(help(['units', 'add'])).toContain('[--site SITE]...')
    expect(help(['keys', 'create'])).toContain('[--site SITE]...')
    expect(help(['accounts', 'rename'])).toContain('--name NAME')
    expect(help(['accounts', 'update'])).toMatch(/--phone PHONE[\s\S]*--sms-from PHONE/)
    expect(help(['services', 'add'])).toContain('--rate KIND=AMOUNT')
    const overview = cli(folder.bin, ['--help'], { cwd: folder.dir }).stdout
    for (const c of ['sites add', 'sites list', 'accounts update', 'accounts rename', 'services add', 'services list', 'services remove']) expect(overview).toContain(`  ${c} `)
  })
})

describe('a key limited to one site, through the API', () => {
  test('GET /me names the account as renamed and only the key\'s site', async () => {
    const me = await call(northKey, 'GET', '/me')
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ object: 'key', name: 'north-dispatch', account: { name: 'Harbor Towing' }, sites: [{ id: north.id, name: 'North yard' }] })
    expect((await call(allKey, 'GET', '/me')).body.sites.map((s: any) => s.name)).toEqual(['Main yard', 'North yard', 'South yard', 'East yard'])
  })

  test('GET /units shows the units serving its site and the one serving every site; never the other site\'s', async () => {
    const seen = await call(northKey, 'GET', '/units')
    expect(seen.status).toBe(200)
    expect(seen.body.data.map((u: any) => [u.name, u.site_ids])).toEqual([['F-1 floater', null], ['N-1 flatbed', [north.id]]])
    expect((await call(allKey, 'GET', '/units')).body.data.map((u: any) => u.name)).toEqual(['F-1 floater', 'N-1 flatbed', 'S-1 wrecker'])
  })

  test('GET /services shows the rate card added from the CLI', async () => {
    const res = await call(northKey, 'GET', '/services')
    expect(res.body.data).toEqual([{ object: 'service', id: service.id, name: 'Flatbed tow', service_type: 'flatbed', rates: [
      { kind: 'hook', amount_cents: 9500, unit: 'job' }, { kind: 'per_mile', amount_cents: 450, unit: 'mile' },
    ] }])
  })

  test('jobs go to its site; another site is 422 on site_id', async () => {
    const job = await newJob(northKey)
    expect(job.status).toBe(201)
    expect(job.body.site_id).toBe(north.id)
    const refused = await newJob(northKey, { site_id: south.id, external_ref: 'NEVER-1' })
    expect(refused.status).toBe(422)
    expect(refused.body.error.details.fields).toEqual([{ path: 'site_id', message: expect.any(String) }])
    expect((await call(allKey, 'GET', '/jobs?external_ref=NEVER-1')).body.data).toEqual([])
  })

  test('assigning the other site\'s unit is 422 on unit_id; its own and the all-sites unit are fine', async () => {
    const job = (await newJob(northKey)).body
    const refused = await call(northKey, 'POST', `/jobs/${job.id}/assign`, { unit_id: units.south.id })
    expect(refused.status).toBe(422)
    expect(refused.body.error.details.fields[0].path).toBe('unit_id')
    expect((await call(northKey, 'GET', `/jobs/${job.id}`)).body).toMatchObject({ status: 'confirmed', unit: null })
    // Even a key for every site cannot put the South unit on a North job.
    expect((await call(allKey, 'POST', `/jobs/${job.id}/assign`, { unit_id: units.south.id })).status).toBe(422)
    expect((await call(northKey, 'POST', `/jobs/${job.id}/assign`, { unit_id: units.floater.id })).body).toMatchObject({ status: 'dispatched', unit: { id: units.floater.id } })
    expect((await call(northKey, 'POST', `/jobs/${job.id}/assign`, { unit_id: units.north.id })).body).toMatchObject({ status: 'dispatched', unit: { id: units.north.id } })
  })

  test('an external_ref held at another site is 409 without that job\'s id; at its own site the id is given', async () => {
    const atSouth = await newJob(allKey, { site_id: south.id, external_ref: 'MC-7781' })
    expect(atSouth.status).toBe(201)
    const hidden = await newJob(northKey, { external_ref: 'MC-7781' })
    expect(hidden.status).toBe(409)
    expect(hidden.body.error.code).toBe('conflict')
    expect(hidden.body.error.details).not.toHaveProperty('existing_job_id')
    expect(JSON.stringify(hidden.body)).not.toContain(atSouth.body.id)
    expect((await call(northKey, 'GET', `/jobs/${atSouth.body.id}`)).status).toBe(404)
    const own = (await newJob(northKey, { external_ref: 'MC-7782' })).body
    const shown = await newJob(northKey, { external_ref: 'MC-7782' })
    expect(shown.status).toBe(409)
    expect(shown.body.error.details.existing_job_id).toBe(own.id)
  })
})

describe('webhook endpoints of a key limited to one site', () => {
  test('receive that site\'s jobs, never another site\'s', async () => {
    const mine = await call(northKey, 'POST', '/webhooks', { url: `${receiver.url}/north`, events: ['job.created'] })
    expect(mine.status).toBe(201)
    expect(mine.body.site_ids).toEqual([north.id])
    const everything = await call(allKey, 'POST', '/webhooks', { url: `${receiver.url}/all`, events: ['job.created'] })
    expect(everything.body.site_ids).toBeNull()
    const southJob = (await newJob(allKey, { site_id: south.id, external_ref: 'WH-SOUTH' })).body
    const northJob = (await newJob(northKey, { external_ref: 'WH-NORTH' })).body
    const at = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => r.body.data.job.id)
    // The North job was created after the South one: once both reached /all and the North one
    // reached /north, a South delivery to /north would have been written and sent before it.
    const deadline = Date.now() + 10_000
    while (!(at('/all').includes(southJob.id) && at('/all').includes(northJob.id) && at('/north').includes(northJob.id))) {
      if (Date.now() > deadline) throw new Error(`deliveries did not arrive: ${JSON.stringify(receiver.received.map((r) => r.path))}`)
      await Bun.sleep(20)
    }
    expect(at('/north')).toEqual([northJob.id])
    expect(at('/all')).toEqual([southJob.id, northJob.id])
  })

  test('an endpoint made by a key for every site is 404 to the site key and not in its list', async () => {
    const other = (await call(allKey, 'POST', '/webhooks', { url: `${receiver.url}/office`, events: ['*'] })).body
    for (const [method, path, body] of [
      ['GET', `/webhooks/${other.id}`], ['PATCH', `/webhooks/${other.id}`, { status: 'paused' }], ['GET', `/webhooks/${other.id}/deliveries`],
      ['POST', `/webhooks/${other.id}/test`], ['DELETE', `/webhooks/${other.id}`],
    ] as [string, string, unknown?][]) {
      const res = await call(northKey, method, path, body)
      expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({ method, path, status: 404, code: 'not_found' })
    }
    expect((await call(allKey, 'GET', `/webhooks/${other.id}`)).body).toMatchObject({ status: 'active' })
    const listed = (await call(northKey, 'GET', '/webhooks')).body.data.map((e: any) => e.url)
    expect(listed).toEqual([`${receiver.url}/north`])
    const all = (await call(allKey, 'GET', '/webhooks')).body.data.map((e: any) => e.url)
    expect(all).toEqual(expect.arrayContaining([`${receiver.url}/north`, `${receiver.url}/all`, `${receiver.url}/office`]))
  })
})

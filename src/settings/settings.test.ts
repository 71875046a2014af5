import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ROOT } from '../../test/binary'
import { startTestApi, type TestApi } from '../../test/kit'
import { createUser } from '../users/create-user'

let api: TestApi
let key: string
let owner: { id: string; cookie: string }
beforeEach(async () => {
  api = startTestApi()
  key = api.key('all')
  owner = await signedIn('owner@example.com', 'owner')
})
afterEach(() => api.close())

const ORIGIN = 'http://towline.test'
const PASSWORD = 'correct horse battery'

async function makeUser(email: string, role: 'owner' | 'dispatcher', accountId = api.accountId) {
  return (await createUser(api.contexts.forOperator(accountId), { email, role, password: PASSWORD })).user
}
async function signIn(email: string, password = PASSWORD): Promise<Response> {
  return api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email, password }).toString() }))
}
async function signedIn(email: string, role: 'owner' | 'dispatcher'): Promise<{ id: string; cookie: string }> {
  const user = await makeUser(email, role)
  const res = await signIn(email)
  expect(res.status).toBe(303)
  return { id: user.id, cookie: res.headers.get('set-cookie')!.split(';')[0]! }
}
const get = (path: string, cookie = owner.cookie) => api.raw(new Request(ORIGIN + path, { headers: { cookie } }))
const post = (path: string, fields: Record<string, string>, cookie = owner.cookie, origin = ORIGIN) =>
  api.raw(new Request(ORIGIN + path, { method: 'POST', headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }))

/** The towline command, from source, on the test's database: what an operator then sees. */
function towline(...args: string[]): any {
  const r = Bun.spawnSync(['bun', join(ROOT, 'src/main.ts'), ...args, '--json'], { env: { ...process.env, ...api.dbEnv }, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`towline ${args.join(' ')}: exit ${r.exitCode}: ${r.stderr}`)
  return JSON.parse(r.stdout.toString())
}
function towlineFails(...args: string[]): { code: number | null; stderr: string } {
  const r = Bun.spawnSync(['bun', join(ROOT, 'src/main.ts'), ...args], { env: { ...process.env, ...api.dbEnv }, stdout: 'pipe', stderr: 'pipe' })
  return { code: r.exitCode, stderr: r.stderr.toString() }
}

async function createJob(customer: Record<string, unknown> = { name: 'Jo', phone: '+15035550148', sms_consent: true }) {
  const res = await api.request('POST', '/api/v1/jobs', { key, body: { customer, pickup: { location: 'I-5 exit 12' } } })
  expect(res.status).toBe(201)
  return (await res.json()) as { id: string }
}
async function textsOf(jobId: string) {
  const res = await api.request('GET', `/api/v1/jobs/${jobId}/texts`, { key })
  expect(res.status).toBe(200)
  return ((await res.json()) as { data: { template: string; body: string; status: string; skip_reason: string | null }[] }).data
}
const count = (sql: string) => (api.db.$client.query(sql).get() as { n: number }).n

/** The value attribute of the control with this id in a page. */
function valueOf(html: string, id: string): string | undefined {
  const tag = new RegExp(`<(?:input|textarea)[^>]*\\bid="${id}"[^>]*>`).exec(html)?.[0]
  if (!tag) return undefined
  if (tag.startsWith('<textarea')) return new RegExp(`id="${id}"[^>]*>([^<]*)</textarea>`).exec(html)?.[1]
  return /\bvalue="([^"]*)"/.exec(tag)?.[1]
}
/** The message beside a field (`#f-<name>-error`). */
const fieldError = (html: string, name: string) => new RegExp(`id="f-${name}-error"[^>]*>([^<]*)<`).exec(html)?.[1] ?? ''

const OWNER_ROUTES: [string, string, Record<string, string>][] = [
  ['GET', '/settings', {}],
  ['GET', '/settings/templates', {}],
  ['GET', '/settings/consent', {}],
  ['GET', '/settings/consent?phone=%2B15035550148', {}],
  ['GET', '/settings/users', {}],
  ['POST', '/settings', { name: 'Hijacked Towing', phone: '', payment_url: 'https://evil.example/pay' }],
  ['POST', '/settings/templates/request_received', { request_received: '{company}: hijacked {tracking_url}' }],
  ['POST', '/settings/templates/request_received/reset', {}],
  ['POST', '/settings/consent/stop', { phone: '+15035550148' }],
  ['POST', '/settings/consent/start', { phone: '+15035550148' }],
  ['POST', '/settings/users', { email: 'mallory@example.com', role: 'owner', password: 'mallory password' }],
  ['POST', '/settings/users/{owner}/disable', {}],
  ['POST', '/settings/users/{owner}/enable', {}],
  ['POST', '/settings/users/{owner}/password', {}],
]

/** Everything the Settings pages could have written, to compare before and after a refused request. */
function writable() {
  return JSON.stringify([
    api.db.$client.query('SELECT name, phone, payment_url, time_zone FROM accounts ORDER BY id').all(),
    api.db.$client.query('SELECT * FROM text_templates').all(),
    api.db.$client.query('SELECT * FROM sms_consents').all(),
    api.db.$client.query('SELECT id, email, role, password_hash, disabled_at, updated_at FROM users ORDER BY id').all(),
    api.db.$client.query('SELECT id, ended_at FROM sessions ORDER BY id').all(),
  ])
}

describe('who may use Settings', () => {
  test('a dispatcher gets 403 on every Settings page and post, and nothing is written', async () => {
    const disp = await signedIn('disp@example.com', 'dispatcher')
    const before = writable()
    for (const [method, path, fields] of OWNER_ROUTES) {
      const p = path.replace('{owner}', owner.id)
      const res = method === 'GET' ? await get(p, disp.cookie) : await post(p, fields, disp.cookie)
      expect(`${method} ${p} ${res.status}`).toBe(`${method} ${p} 403`)
      expect(res.headers.get('content-type')).toContain('text/html')
      expect(await res.text()).toContain('Only an owner')
    }
    expect(writable()).toBe(before)
    // Their session still works: a refusal is not a sign-out.
    expect((await get('/board', disp.cookie)).status).toBe(200)
  })

  test('without a session the pages go to the sign-in page and posts write nothing', async () => {
    const before = writable()
    for (const [method, path, fields] of OWNER_ROUTES) {
      const p = path.replace('{owner}', owner.id)
      const res = method === 'GET' ? await get(p, '') : await post(p, fields, '')
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toStartWith('/login')
    }
    expect(writable()).toBe(before)
  })

  test('a post from another origin is refused (403) and writes nothing', async () => {
    const before = writable()
    for (const [method, path, fields] of OWNER_ROUTES) {
      if (method !== 'POST') continue
      const p = path.replace('{owner}', owner.id)
      const res = await post(p, fields, owner.cookie, 'http://evil.test')
      expect(`${p} ${res.status}`).toBe(`${p} 403`)
    }
    expect(writable()).toBe(before)
  })

  test('every Settings page has the Settings navigation with the current page marked', async () => {
    for (const [path, label] of [['/settings', 'Company'], ['/settings/templates', 'Text templates'], ['/settings/consent', 'Consent'], ['/settings/users', 'Users']] as const) {
      const html = await (await get(path)).text()
      const nav = /<nav[^>]*aria-label="Settings"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1]
      expect(nav).toBeDefined()
      for (const href of ['/settings', '/settings/templates', '/settings/consent', '/settings/users']) expect(nav).toContain(`href="${href}"`)
      expect(nav).toContain(`href="${path}" aria-current="page">${label}</a>`)
      // The dashboard's own navigation marks Settings.
      expect(html).toContain('href="/settings" aria-current="page">Settings</a>')
    }
  })
})

describe('company settings', () => {
  test('Save settings renames the company and sets its phone and payment link; the API\'s next text uses the new name', async () => {
    // A job first, so the key's details are cached as they are before the change.
    const first = await createJob()
    expect((await textsOf(first.id))[0]!.body).toStartWith('My towing company:')
    const page = await (await get('/settings')).text()
    for (const label of ['Company name', 'Company phone', 'Payment link']) expect(page).toMatch(new RegExp(`<label for="f-[a-z_]+">${label}</label>`))
    expect(page).toContain('>Save settings</button>')
    expect(page).toContain('{company}')

    const res = await post('/settings', { name: '  Harbor Towing ', phone: '(503) 555-0100', payment_url: 'https://pay.example.com/harbor?src=towline' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/settings?saved=1')
    const job = await createJob()
    expect((await textsOf(job.id))[0]!.body).toStartWith('Harbor Towing: we got your request')
    expect(towline('accounts', 'list').data[0]).toMatchObject({ name: 'Harbor Towing', phone: '+15035550100', payment_url: 'https://pay.example.com/harbor?src=towline' })
    const after = await (await get('/settings?saved=1')).text()
    expect(valueOf(after, 'f-name')).toBe('Harbor Towing')
    expect(valueOf(after, 'f-phone')).toBe('+15035550100')
    expect(valueOf(after, 'f-payment_url')).toBe('https://pay.example.com/harbor?src=towline')
    expect(after).toMatch(/role="status"[^>]*>[^<]*Saved/)

    // Empty phone and payment link clear them.
    expect((await post('/settings', { name: 'Harbor Towing', phone: '', payment_url: '' })).status).toBe(303)
    expect(towline('accounts', 'list').data[0]).toMatchObject({ name: 'Harbor Towing', phone: null, payment_url: null })
  })

  test('a blank name, a phone that is no number and a payment link that is not https are refused beside their fields, kept, and nothing changes', async () => {
    const before = writable()
    const res = await post('/settings', { name: '   ', phone: 'call us', payment_url: 'http://pay.example.com/x' })
    expect(res.status).toBe(422)
    const html = await res.text()
    expect(fieldError(html, 'name')).toContain('blank')
    expect(fieldError(html, 'phone')).toContain('is not a phone number')
    expect(fieldError(html, 'payment_url')).toContain('https')
    expect(html).toMatch(/role="alert"[^>]*>[^<]+</)
    expect(valueOf(html, 'f-phone')).toBe('call us')
    expect(valueOf(html, 'f-payment_url')).toBe('http://pay.example.com/x')
    for (const bad of ['javascript:alert(1)', 'https://user:secret@pay.example.com/', 'pay.example.com', `https://pay.example.com/${'x'.repeat(2100)}`]) {
      const r = await post('/settings', { name: 'Harbor Towing', phone: '', payment_url: bad })
      expect(r.status).toBe(422)
      expect(fieldError(await r.text(), 'payment_url')).not.toBe('')
    }
    expect(writable()).toBe(before)
  })

  test('two tabs: a save over a save made after the page was opened is refused (409), what was typed kept beside what is saved now; saving again keeps it', async () => {
    const page = await (await get('/settings')).text()
    const version = /name="version" value="([^"]+)"/.exec(page)![1]!
    // Tab B renames the company; tab A, opened before, changes only the phone.
    expect((await post('/settings', { name: 'Renamed By Tab B', phone: '', payment_url: '', time_zone: 'UTC', version })).status).toBe(303)
    const stale = await post('/settings', { name: 'My towing company', phone: '503-555-0100', payment_url: '', time_zone: 'UTC', version })
    expect(stale.status).toBe(409)
    const html = await stale.text()
    expect(html).toContain('Someone else saved the company settings after this page was opened; nothing was saved.')
    expect(html).toMatch(/<h2 id="saved-now">Saved now<\/h2><dl>\s*<dt>Company name<\/dt><dd>Renamed By Tab B<\/dd>/)
    expect(valueOf(html, 'f-phone')).toBe('503-555-0100')
    expect(towline('accounts', 'list').data[0]).toMatchObject({ name: 'Renamed By Tab B', phone: null })
    // Save settings again from that page: the owner has seen what is saved now, and keeps theirs.
    const now = /name="version" value="([^"]+)"/.exec(html)![1]!
    expect((await post('/settings', { name: 'Renamed By Tab B', phone: '503-555-0100', payment_url: '', time_zone: 'UTC', version: now })).status).toBe(303)
    expect(towline('accounts', 'list').data[0]).toMatchObject({ name: 'Renamed By Tab B', phone: '+15035550100' })
    // A form that changes nothing is never stale.
    expect((await post('/settings', { name: 'Renamed By Tab B', phone: '+15035550100', payment_url: '', time_zone: 'UTC', version })).status).toBe(303)
  })

  test('Time zone: a select of every zone with the company\'s chosen; saving one moves the jobs list\'s days there and the console reads it; an unknown zone is refused beside the field', async () => {
    const page = await (await get('/settings')).text()
    expect(page).toMatch(/<label for="f-time_zone">Time zone<\/label>/)
    expect(page).toMatch(/<select[^>]*id="f-time_zone"[^>]*>/)
    expect(page).toContain('<option value="UTC" selected>UTC</option>')
    expect(page).toContain('<option value="America/Los_Angeles">America/Los Angeles</option>')
    expect((await post('/settings', { name: 'Harbor Towing', phone: '', payment_url: '', time_zone: 'America/Chicago' })).status).toBe(303)
    expect(towline('accounts', 'list').data[0]).toMatchObject({ time_zone: 'America/Chicago' })
    expect(await (await get('/settings')).text()).toContain('<option value="America/Chicago" selected>America/Chicago</option>')
    expect(await (await get('/jobs')).text()).toContain("in the company's time zone (America/Chicago)")
    // A form without the field (a tab opened before it existed) leaves the zone as it is.
    expect((await post('/settings', { name: 'Harbor Towing', phone: '', payment_url: '' })).status).toBe(303)
    expect(towline('accounts', 'list').data[0]).toMatchObject({ time_zone: 'America/Chicago' })

    const before = writable()
    for (const bad of ['Mars/Olympus', '+05:00', 'PST', '../../etc/passwd', 'x'.repeat(300)]) {
      const r = await post('/settings', { name: 'Renamed Towing', phone: '', payment_url: '', time_zone: bad })
      expect(r.status).toBe(422)
      expect(fieldError(await r.text(), 'time_zone')).toContain('time zone name such as America/Los_Angeles')
    }
    expect(writable()).toBe(before)
    // The console: the same check, the same field.
    expect(towlineFails('accounts', 'update', '--time-zone', 'Mars/Olympus').stderr).toContain('time zone name such as America/Los_Angeles')
    expect(towline('accounts', 'update', '--time-zone', 'europe/london')).toMatchObject({ time_zone: 'Europe/London' })
  })
})

describe('text templates', () => {
  test('the page shows every template with its current text; Save template changes what the API texts, Reset to default brings the default back', async () => {
    const page = await (await get('/settings/templates')).text()
    for (const name of ['request_received', 'status_pending', 'status_confirmed', 'status_dispatched', 'status_en_route', 'status_on_scene', 'status_towing', 'status_at_destination', 'status_completed', 'status_cancelled', 'status_goa', 'driver_job_link', 'driver_job_removed']) {
      expect(page).toContain(`<textarea id="f-${name}" name="${name}"`)
      expect(page).toContain(`action="/settings/templates/${name}"`)
    }
    expect(valueOf(page, 'f-request_received')).toBe('{company}: we got your request for roadside help. Follow it here: {tracking_url}')
    // Each button names its template for screen readers (visually hidden): thirteen "Save template" told apart.
    expect(page).toContain('>Save template<span class="visually-hidden"> Request received</span></button>')
    // The preview with sample values and its length in segments.
    expect(page).toContain('My towing company: we got your request for roadside help. Follow it here: http://towline.test/t/')
    expect(page).toMatch(/1 segment/)

    const wording = '{company}: help is coming to {pickup}. Follow it: {tracking_url}'
    const res = await post('/settings/templates/request_received', { request_received: wording })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toStartWith('/settings/templates?saved=request_received')
    const job = await createJob()
    const [text] = await textsOf(job.id)
    expect(text!.template).toBe('request_received')
    expect(text!.body).toMatch(/^My towing company: help is coming to I-5 exit 12\. Follow it: http:\/\/towline\.test\/t\/[A-Za-z0-9]{24}$/)
    expect(towline('texts', 'templates').data.find((t: any) => t.name === 'request_received')).toMatchObject({ text: wording, own: true })
    const saved = await (await get('/settings/templates?saved=request_received')).text()
    expect(valueOf(saved, 'f-request_received')).toBe(wording)
    expect(saved).toContain('>Reset to default<span class="visually-hidden"> Request received</span></button>')

    expect((await post('/settings/templates/request_received/reset', {})).status).toBe(303)
    const again = await createJob()
    expect((await textsOf(again.id))[0]!.body).toStartWith('My towing company: we got your request for roadside help.')
    expect(towline('texts', 'templates').data.find((t: any) => t.name === 'request_received').own).toBe(false)
  })

  test('two tabs: a template saved over a save made after the page was opened is refused (409) showing what is saved now, what was typed kept; saving again keeps it', async () => {
    const page = await (await get('/settings/templates')).text()
    const version = new RegExp('action="/settings/templates/status_en_route" novalidate>\\s*<input type="hidden" name="version" value="([^"]+)"').exec(page)![1]!
    expect((await post('/settings/templates/status_en_route', { status_en_route: '{company}: tab B wording {tracking_url}', version })).status).toBe(303)
    const stale = await post('/settings/templates/status_en_route', { status_en_route: '{company}: tab A wording {tracking_url}', version })
    expect(stale.status).toBe(409)
    const html = await stale.text()
    expect(html).toContain('Someone else saved this text after this page was opened; nothing was saved. Saved now: &quot;{company}: tab B wording {tracking_url}&quot;.')
    expect(html).toContain('{company}: tab A wording {tracking_url}</textarea>')
    expect(count("SELECT count(*) AS n FROM text_templates WHERE body LIKE '%tab B%'")).toBe(1)
    const now = new RegExp('action="/settings/templates/status_en_route" novalidate>\\s*<input type="hidden" name="version" value="([^"]+)"').exec(html)![1]!
    expect((await post('/settings/templates/status_en_route', { status_en_route: '{company}: tab A wording {tracking_url}', version: now })).status).toBe(303)
    expect(count("SELECT count(*) AS n FROM text_templates WHERE body LIKE '%tab A%'")).toBe(1)
  })

  test('a placeholder the template cannot fill, and empty text, are refused naming what is allowed; what was typed is kept', async () => {
    const res = await post('/settings/templates/request_received', { request_received: '{company}: open {driver_url} or {Tracking_URL}' })
    expect(res.status).toBe(422)
    const html = await res.text()
    const message = fieldError(html, 'request_received')
    expect(message).toContain('{driver_url}')
    expect(message).toContain('{Tracking_URL}')
    expect(message).toContain('{company}, {pickup}, {tracking_url}, {eta}, {job_ref}')
    expect(valueOf(html, 'f-request_received')).toBe('{company}: open {driver_url} or {Tracking_URL}')
    expect(html).toMatch(/role="alert"[^>]*>The request_received text was not saved: \{driver_url\}, \{Tracking_URL\} are not placeholders of this text; it can use /)
    // The driver's link is a placeholder of the driver's job-link text.
    expect((await post('/settings/templates/driver_job_link', { driver_job_link: 'Job {job_ref}: {driver_url}' })).status).toBe(303)
    const empty = await post('/settings/templates/status_towing', { status_towing: '  \n ' })
    expect(empty.status).toBe(422)
    expect(fieldError(await empty.text(), 'status_towing')).toContain('empty')
    // Short enough as written, too long once filled: 109 links make a 5,000-character text Twilio would
    // refuse; and six references, which can be 255 characters each.
    const refs = await post('/settings/templates/request_received', { request_received: `{company} {tracking_url} ${'{job_ref} '.repeat(6)}` })
    expect(refs.status).toBe(422)
    const long = await post('/settings/templates/request_received', { request_received: '{tracking_url}'.repeat(109) })
    expect(long.status).toBe(422)
    expect(fieldError(await long.text(), 'request_received')).toMatch(/^must make texts of at most 1,600 characters once its placeholders are filled \(what Twilio takes\); with the longest company name, reference and pickup this one makes [\d,]+$/)
    expect(count('SELECT count(*) AS n FROM text_templates')).toBe(1)
    expect((await post('/settings/templates/no_such_template', { no_such_template: 'x' })).status).toBe(404)
  })
})

describe('consent', () => {
  test('Look up shows a number\'s consent; STOP and START are recorded as the owner and decide whether the API\'s next text goes out', async () => {
    await createJob({ name: 'Jo', phone: '503-555-0148', sms_consent: true })
    const page = await (await get('/settings/consent')).text()
    expect(page).toMatch(/<label for="f-phone">Phone<\/label>/)
    expect(page).toContain('>Look up</button>')
    const found = await (await get('/settings/consent?phone=(503)+555-0148')).text()
    expect(found).toContain('+15035550148')
    expect(found).toMatch(/api:key_\w+/)
    expect(valueOf(found, 'f-phone')).toBe('(503) 555-0148')
    expect(found).toContain('>STOP</button>')
    expect(found).toContain('>START</button>')

    const stop = await post('/settings/consent/stop', { phone: '+15035550148' })
    expect(stop.status).toBe(303)
    expect(stop.headers.get('location')).toBe('/settings/consent?phone=%2B15035550148&done=stop')
    expect(towline('texts', 'consent', '--phone', '+15035550148').data[0]).toMatchObject({ texts: 'opted_out', opt_out_source: `dispatcher:${owner.id}` })
    const stopped = await createJob()
    expect((await textsOf(stopped.id))[0]).toMatchObject({ status: 'skipped', skip_reason: 'opted_out' })
    expect(await (await get('/settings/consent?phone=%2B15035550148')).text()).toContain(`dispatcher:${owner.id}`)

    expect((await post('/settings/consent/start', { phone: '+15035550148' })).status).toBe(303)
    expect(towline('texts', 'consent', '--phone', '+15035550148').data[0]).toMatchObject({ texts: 'allowed', consent_source: `dispatcher:${owner.id}`, opted_out_at: null })
    const started = await createJob()
    expect((await textsOf(started.id))[0]).toMatchObject({ status: 'queued', skip_reason: null })
  })

  test('a number that is not one is refused beside the Phone field, kept, and nothing is recorded', async () => {
    const look = await get('/settings/consent?phone=call+me')
    expect(look.status).toBe(422)
    const html = await look.text()
    expect(fieldError(html, 'phone')).toContain('is not a phone number')
    expect(valueOf(html, 'f-phone')).toBe('call me')
    const stop = await post('/settings/consent/stop', { phone: 'call me' })
    expect(stop.status).toBe(422)
    expect(fieldError(await stop.text(), 'phone')).toContain('is not a phone number')
    expect(count('SELECT count(*) AS n FROM sms_consents')).toBe(0)
  })
})

describe('users', () => {
  test('lists the account\'s logins with role, status and last sign-in, never another account\'s', async () => {
    await makeUser('disp@example.com', 'dispatcher')
    await makeUser('theirs@example.com', 'owner', api.account('Other Towing'))
    const html = await (await get('/settings/users')).text()
    const row = (email: string) => new RegExp(`<tr[^>]*>\\s*<td>${email.replace('.', '\\.')}</td>[\\s\\S]*?</tr>`).exec(html)?.[0] ?? ''
    expect(row('owner@example.com')).toContain('owner')
    expect(row('owner@example.com')).toContain('Active')
    expect(row('owner@example.com')).toContain('2026-11-21')
    // Each button names the login it acts on, for screen readers (visually hidden).
    expect(row('owner@example.com')).not.toContain('>Disable<')
    expect(row('disp@example.com')).toContain('dispatcher')
    expect(row('disp@example.com')).toContain('Never')
    expect(row('disp@example.com')).toContain('>Disable<span class="visually-hidden"> disp@example.com</span></button>')
    expect(row('disp@example.com')).toContain('>Reset password<span class="visually-hidden"> disp@example.com</span></button>')
    expect(html).toMatch(/<div class="table-scroll" role="region" aria-labelledby="logins" tabindex="0">/)
    expect(html).not.toContain('theirs@example.com')
    for (const label of ['Email', 'Role', 'Password']) expect(html).toMatch(new RegExp(`<label for="f-[a-z]+">${label}</label>`))
    expect(html).toContain('>Add user</button>')
  })

  test('Add user shows a generated password once, in a read-only field; the new dispatcher signs in with it', async () => {
    const res = await post('/settings/users', { email: 'New.Disp@Example.com', role: 'dispatcher', password: '' })
    expect(res.status).toBe(200)
    const html = await res.text()
    const shown = /<input[^>]*\bid="new-password"[^>]*>/.exec(html)?.[0] ?? ''
    expect(shown).toContain('readonly')
    expect(html).toMatch(/<label for="new-password">New password<\/label>/)
    const password = /value="([^"]+)"/.exec(shown)![1]!
    expect(password).toMatch(/^[A-Za-z0-9]{16}$/)
    expect(res.headers.get('cache-control')).toContain('no-store')
    expect(towline('users', 'list').data.find((u: any) => u.email === 'new.disp@example.com')).toMatchObject({ role: 'dispatcher', status: 'active', account_id: api.accountId })
    const login = await signIn('new.disp@example.com', password)
    expect(login.status).toBe(303)
    expect(login.headers.get('location')).toBe('/board')
    // Shown once: the list does not show it again.
    expect(await (await get('/settings/users')).text()).not.toContain(password)
    // A password typed by the owner is used, and not echoed.
    const typed = await post('/settings/users', { email: 'own@example.com', role: 'owner', password: 'typed by the owner' })
    expect(typed.status).toBe(200)
    expect(await typed.text()).not.toContain('typed by the owner')
    expect((await signIn('own@example.com', 'typed by the owner')).status).toBe(303)
  })

  test('Add user refuses a bad email, a taken one, an unknown role and a short password beside their fields, keeping what was typed (never the password)', async () => {
    const before = writable()
    const res = await post('/settings/users', { email: 'not an email', role: 'boss', password: 'short' })
    expect(res.status).toBe(422)
    const html = await res.text()
    expect(fieldError(html, 'email')).toContain('email address')
    expect(fieldError(html, 'role')).toContain('owner or dispatcher')
    expect(fieldError(html, 'password')).toContain('at least 10 characters')
    expect(valueOf(html, 'f-email')).toBe('not an email')
    expect(valueOf(html, 'f-password')).toBeUndefined()
    expect(html).not.toContain('value="short"')
    const taken = await post('/settings/users', { email: 'OWNER@example.com', role: 'dispatcher', password: '' })
    expect(taken.status).toBe(422)
    expect(fieldError(await taken.text(), 'email')).toContain('already a login')
    expect(writable()).toBe(before)
  })

  test('Disable ends the user\'s sessions and keeps them out; Enable lets them back in', async () => {
    const disp = await signedIn('disp@example.com', 'dispatcher')
    const res = await post(`/settings/users/${disp.id}/disable`, {})
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/settings/users')
    const board = await get('/board', disp.cookie)
    expect(board.status).toBe(303)
    expect(board.headers.get('location')).toStartWith('/login')
    expect(towline('users', 'list').data.find((u: any) => u.email === 'disp@example.com').status).toBe('disabled')
    expect((await signIn('disp@example.com')).status).toBe(401)
    const list = await (await get('/settings/users')).text()
    expect(list).toMatch(/disp@example\.com<\/td>[\s\S]*?Disabled[\s\S]*?>Enable<span class="visually-hidden"> disp@example\.com<\/span><\/button>/)

    expect((await post(`/settings/users/${disp.id}/enable`, {})).status).toBe(303)
    expect(towline('users', 'list').data.find((u: any) => u.email === 'disp@example.com').status).toBe('active')
    expect((await signIn('disp@example.com')).status).toBe(303)
  })

  test('Reset password shows a new one once and ends that user\'s sessions: their next board request goes to the sign-in page', async () => {
    const disp = await signedIn('disp@example.com', 'dispatcher')
    expect((await get('/board', disp.cookie)).status).toBe(200)
    const res = await post(`/settings/users/${disp.id}/password`, {})
    expect(res.status).toBe(200)
    const html = await res.text()
    const password = /<input[^>]*\bid="new-password"[^>]*\bvalue="([^"]+)"|<input[^>]*\bvalue="([^"]+)"[^>]*\bid="new-password"/.exec(html)
    const shown = password?.[1] ?? password?.[2]
    expect(shown).toMatch(/^[A-Za-z0-9]{16}$/)
    expect(html).toContain('disp@example.com')
    const board = await get('/board', disp.cookie)
    expect(board.status).toBe(303)
    expect(board.headers.get('location')).toStartWith('/login')
    expect((await signIn('disp@example.com')).status).toBe(401)
    expect((await signIn('disp@example.com', shown!)).status).toBe(303)
    // The owner's own session goes on.
    expect((await get('/settings/users')).status).toBe(200)
  })

  test('a login id that is a pattern\'s syntax (brackets, parentheses, repeats) is a login id: 404, never an error', async () => {
    for (const id of ['usr_(', 'usr_[', encodeURIComponent('(a+)+$'), encodeURIComponent('x'.repeat(30) + '(a*)*b')]) {
      const res = await post(`/settings/users/${id}/password`, { idempotency_key: `${'A'.repeat(24)}.password-${decodeURIComponent(id)}` })
      expect({ id, status: res.status }).toEqual({ id, status: 404 })
    }
  })

  test('reloading the answer of Reset password (or Add user) does it no second time: the password shown first still holds', async () => {
    const disp = await signedIn('disp@example.com', 'dispatcher')
    const page = await (await get('/settings/users')).text()
    const key = new RegExp(`action="/settings/users/${disp.id}/password"><input type="hidden" name="idempotency_key" value="([^"]+)"`).exec(page)![1]!
    const first = await (await post(`/settings/users/${disp.id}/password`, { idempotency_key: key })).text()
    const shown = /\bid="new-password"[^>]*\bvalue="([^"]+)"|\bvalue="([^"]+)"[^>]*\bid="new-password"/.exec(first)
    const password = shown?.[1] ?? shown?.[2]
    expect(password).toMatch(/^[A-Za-z0-9]{16}$/)
    const again = await post(`/settings/users/${disp.id}/password`, { idempotency_key: key })
    expect(again.status).toBe(200)
    const html = await again.text()
    expect(html).not.toContain('id="new-password"')
    expect(html).toContain('The password of disp@example.com was reset when this form was first sent; the password shown then still holds.')
    expect((await signIn('disp@example.com', password!)).status).toBe(303)
    // Add user: the same form twice adds once and says so.
    const addKey = /action="\/settings\/users" class="settings-form" novalidate>\s*<input type="hidden" name="idempotency_key" value="([^"]+)"/.exec(page)![1]!
    const fields = { email: 'new.disp@example.com', role: 'dispatcher', password: '', idempotency_key: addKey }
    const added = await (await post('/settings/users', fields)).text()
    expect(added).toContain('id="new-password"')
    const twice = await (await post('/settings/users', fields)).text()
    expect(twice).not.toContain('id="new-password"')
    expect(twice).toContain('new.disp@example.com was added when this form was first sent; nothing was done again.')
  })

  test('an owner may not disable themselves, and no one may disable the account\'s last active owner', async () => {
    const before = writable()
    const self = await post(`/settings/users/${owner.id}/disable`, {})
    expect(self.status).toBe(422)
    expect(await self.text()).toMatch(/role="alert"[^>]*>[^<]*your own login/)
    expect(writable()).toBe(before)
    // The console is refused too: the account would be left with no owner.
    const r = towlineFails('users', 'disable', 'owner@example.com')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('last active owner')
    expect(writable()).toBe(before)
    // With a second owner, one may disable the other.
    const second = await makeUser('second@example.com', 'owner')
    expect((await post(`/settings/users/${second.id}/disable`, {})).status).toBe(303)
    expect(towline('users', 'list').data.find((u: any) => u.email === 'second@example.com').status).toBe('disabled')
  })

  test('another account\'s login cannot be reached: 404, and it is untouched', async () => {
    const theirs = await makeUser('theirs@example.com', 'dispatcher', api.account('Other Towing'))
    const before = writable()
    for (const action of ['disable', 'enable', 'password']) {
      expect((await post(`/settings/users/${theirs.id}/${action}`, {})).status).toBe(404)
    }
    expect((await post('/settings/users/usr_nope/disable', {})).status).toBe(404)
    expect(writable()).toBe(before)
  })

  test('the open board stream of a login that is disabled is told so and ends', async () => {
    const disp = await signedIn('disp@example.com', 'dispatcher')
    const res = await get('/board/events', disp.cookie)
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    let text = ''
    const readUntil = async (pred: () => boolean) => {
      const end = Date.now() + 5000
      while (!pred()) {
        if (Date.now() > end) throw new Error(`stream: got ${text}`)
        const chunk = await Promise.race([reader.read(), Bun.sleep(end - Date.now()).then(() => null)])
        if (!chunk) continue
        if (chunk.done) { text += '\n[end]'; break }
        text += new TextDecoder().decode(chunk.value)
      }
    }
    await readUntil(() => text.includes('event: hello'))
    expect((await post(`/settings/users/${disp.id}/disable`, {})).status).toBe(303)
    await readUntil(() => text.includes('[end]'))
    expect(text).toContain('event: signed_out')
  })

  test('a login disabled from the console (another process) loses its open board at the next heartbeat round', async () => {
    const disp = await signedIn('disp@example.com', 'dispatcher')
    const reader = (await get('/board/events', disp.cookie)).body!.getReader()
    let text = ''
    const pump = (async () => {
      for (;;) {
        const chunk = await reader.read()
        if (chunk.done) return
        text += new TextDecoder().decode(chunk.value)
      }
    })()
    towline('users', 'disable', 'disp@example.com')
    // Heartbeat rounds are 6 s apart: the stream ends within one, told why.
    await Promise.race([pump, Bun.sleep(9000).then(() => { throw new Error(`stream still open: ${text}`) })])
    expect(text).toContain('event: signed_out')
  }, 15_000)
})

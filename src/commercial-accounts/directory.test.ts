/**
 * The dashboard's commercial accounts directory (/accounts) through HTTP, as its forms post:
 * what a dispatcher saves is what the API then shows, refusals are said beside their fields and
 * write nothing, a cross-site post and another tenant's user change nothing. Also the job forms'
 * Commercial account select.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { databaseFingerprint } from '../../test/fingerprint'
import { createUser } from '../users/create-user'
import { createCommercialAccount } from './create-commercial-account'

let api: TestApi
let key: string
beforeEach(() => { api = startTestApi(); key = api.key('all') })
afterEach(() => api.close())

const ORIGIN = 'http://towline.test'
const PASSWORD = 'correct horse battery'

async function signIn(email = 'ann@example.com', accountId = api.accountId, role: 'owner' | 'dispatcher' = 'dispatcher'): Promise<string> {
  await createUser(api.contexts.forOperator(accountId), { email, role, password: PASSWORD })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=${encodeURIComponent(PASSWORD)}` }))
  return res.headers.get('set-cookie')!.split(';')[0]!
}
const page = (path: string, cookie: string) => api.raw(new Request(ORIGIN + path, { headers: { cookie }, redirect: 'manual' }))
const post = (path: string, cookie: string, fields: Record<string, string>, origin = ORIGIN) => api.raw(new Request(ORIGIN + path, {
  method: 'POST', redirect: 'manual', headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
}))
const apiGet = async (path: string) => (await (await api.request('GET', `/api/v1${path}`, { key })).json()) as any
/** The message shown beside a field (its `#f-<name>-error`). */
const besideField = (html: string, name: string) => html.match(new RegExp(`id="f-${name.replace(/\./g, '-')}-error">([^<]*)<`))?.[1]
/** The value a text field shows. */
const valueOf = (html: string, name: string) => html.match(new RegExp(`<input[^>]*name="${name.replace(/\./g, '\\.')}"[^>]*value="([^"]*)"`))?.[1]

const AAA = {
  name: 'AAA Oregon', kind: 'motor_club',
  'contacts.0.name': 'Dispatch desk', 'contacts.0.role': 'dispatch', 'contacts.0.phone': '(503) 555-0150', 'contacts.0.email': 'desk@aaa.example',
  rates: 'hook 95.00, per mile 4.50', billing_address: 'PO Box 1, Portland OR', internal_notes: 'Pays in 60 days',
}

describe('/accounts', () => {
  test('without a session it sends to sign-in', async () => {
    const res = await api.raw(new Request(`${ORIGIN}/accounts`, { redirect: 'manual' }))
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toStartWith('/login')
  })

  test('shows the list and the New account form with the labels pages.md names, in the navigation for dispatchers', async () => {
    const cookie = await signIn()
    createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'Portland Police', kind: 'police', contacts: [{ name: 'Sgt. Reyes', phone: '+15035550199' }] })
    const res = await page('/accounts', cookie)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<a href="/accounts" aria-current="page">Accounts</a>')
    expect(html).toContain('<h2 id="h-new-account">New account</h2>')
    for (const label of ['Name', 'Kind', 'Contact name', 'Contact phone', 'Contact email', 'Rates', 'Billing address', 'Internal notes']) {
      expect({ label, found: new RegExp(`<label for="f-[a-z0-9_-]+">${label}</label>`).test(html) }).toEqual({ label, found: true })
    }
    expect(html).toContain('<button type="submit">Save account</button>')
    // One contact row to start with, so each contact label names one field; saving brings another empty row.
    expect(html).toContain('name="contacts.0.name"')
    expect(html).not.toContain('name="contacts.1.name"')
    for (const label of ['Contact name', 'Contact phone', 'Contact email']) expect(html.split(`>${label}</label>`).length - 1).toBe(1)
    expect(html).toMatch(/Portland Police<\/a><\/td><td>Police<\/td><td><ul class="plain-list"><li>Sgt. Reyes/)
  })

  test('a dispatcher adds an account: 303 to its page, and the API shows its name, kind and normalised contacts', async () => {
    const cookie = await signIn()
    const before = (await apiGet('/accounts')).data.length
    const res = await post('/accounts', cookie, AAA)
    expect(res.status).toBe(303)
    const location = res.headers.get('location')!
    expect(location).toMatch(/^\/accounts\/cac_[0-9A-Z]{26}\?done=created$/)
    const id = location.slice('/accounts/'.length, location.indexOf('?'))
    expect(await apiGet(`/accounts/${id}`)).toMatchObject({ name: 'AAA Oregon', kind: 'motor_club', contacts: [{ name: 'Dispatch desk', role: 'dispatch', phone: '+15035550150', email: 'desk@aaa.example' }] })
    expect((await apiGet('/accounts')).data.length).toBe(before + 1)
    const shown = await (await page(location, cookie)).text()
    expect(shown).toContain('role="status">Account added.</p>')
    expect(shown).toContain('Pays in 60 days</textarea>')
    expect(valueOf(shown, 'contacts.0.phone')).toBe('+15035550150')
    // The edit page offers one more empty contact row.
    expect(shown).toContain('name="contacts.1.name"')
  })

  test('a refused form says each problem beside its field (in the row it was typed in), keeps what was typed, and writes nothing', async () => {
    const cookie = await signIn()
    const before = databaseFingerprint(api.db)
    const res = await post('/accounts', cookie, { name: '', kind: 'tow_club', 'contacts.0.name': '', 'contacts.1.name': 'Night <desk>', 'contacts.1.phone': 'call me', 'contacts.1.email': 'night@', rates: 'typed rates' })
    expect(res.status).toBe(422)
    const html = await res.text()
    expect(html).toContain('role="alert" data-form-alert tabindex="-1" autofocus>Some fields need attention')
    expect(besideField(html, 'name')).toBe('must not be blank')
    expect(besideField(html, 'kind')).toBe('must be one of the kinds listed: Motor club, Police, Fleet, Body shop, Dealer, Insurance, Municipality, Private property, Other')
    expect(besideField(html, 'contacts.1.phone')).toBe('is not a phone number (use the +country form, e.g. +15552013344)')
    expect(besideField(html, 'contacts.1.email')).toBe('must be an email address such as dispatch@example.com')
    expect(besideField(html, 'contacts.0.phone')).toBe('')
    expect(valueOf(html, 'contacts.1.name')).toBe('Night &lt;desk&gt;')
    expect(html).toContain('typed rates</textarea>')
    expect(html).toMatch(/aria-invalid="true" aria-describedby="f-contacts-1-phone-error"/)
    expect(databaseFingerprint(api.db)).toEqual(before)
  })

  test('a refused New account keeps its one contact group (each contact label still names one field), what was typed in it kept', async () => {
    const cookie = await signIn()
    const res = await post('/accounts', cookie, { name: 'Metro Fleet', kind: '', 'contacts.0.name': 'Yard', 'contacts.0.phone': 'call me' })
    expect(res.status).toBe(422)
    const html = await res.text()
    expect(valueOf(html, 'contacts.0.name')).toBe('Yard')
    expect(html).not.toContain('name="contacts.1.name"')
    for (const label of ['Contact name', 'Contact phone', 'Contact email']) expect(html.split(`>${label}</label>`).length - 1).toBe(1)
  })

  test('a name already in the directory (any case) is refused beside Name', async () => {
    const cookie = await signIn()
    expect((await post('/accounts', cookie, AAA)).status).toBe(303)
    const res = await post('/accounts', cookie, { ...AAA, name: 'aaa OREGON' })
    expect(res.status).toBe(409)
    expect(besideField(await res.text(), 'name')).toBe('is already the name of another commercial account (&quot;AAA Oregon&quot;)')
    expect((await apiGet('/accounts')).data).toHaveLength(1)
  })

  test('a taken name and another bad field are said together at the first refusal, adding and editing', async () => {
    const cookie = await signIn()
    expect((await post('/accounts', cookie, AAA)).status).toBe(303)
    const before = databaseFingerprint(api.db)
    const res = await post('/accounts', cookie, { ...AAA, name: 'AAA OREGON', kind: '' })
    expect(res.status).toBe(422)
    const html = await res.text()
    expect(besideField(html, 'name')).toBe('is already the name of another commercial account (&quot;AAA Oregon&quot;)')
    expect(besideField(html, 'kind')).toBe('must be one of the kinds listed: Motor club, Police, Fleet, Body shop, Dealer, Insurance, Municipality, Private property, Other')
    expect(databaseFingerprint(api.db)).toEqual(before)
    // Editing: another entry's name is taken; the entry's own name is not.
    const other = await post('/accounts', cookie, { ...AAA, name: 'City Police' })
    const path = other.headers.get('location')!.replace(/\?.*$/, '')
    const edited = await (await post(path, cookie, { ...AAA, name: 'aaa oregon', kind: '' })).text()
    expect(besideField(edited, 'name')).toBe('is already the name of another commercial account (&quot;AAA Oregon&quot;)')
    const own = await (await post(path, cookie, { ...AAA, name: 'City Police', kind: '' })).text()
    expect([besideField(own, 'name'), besideField(own, 'kind') !== '']).toEqual(['', true])
  })

  test('the same form sent twice (a double click) adds one account', async () => {
    const cookie = await signIn()
    const form = { ...AAA, idempotency_key: 'A'.repeat(24) }
    const first = await post('/accounts', cookie, form)
    const second = await post('/accounts', cookie, form)
    expect(second.status).toBe(303)
    expect(second.headers.get('location')).toBe(first.headers.get('location'))
    expect((await apiGet('/accounts')).data).toHaveLength(1)
  })

  test('editing saves every field; a contact row left empty removes that contact; owners edit too', async () => {
    const cookie = await signIn('owner@example.com', api.accountId, 'owner')
    const id = new URL((await post('/accounts', cookie, { ...AAA, 'contacts.1.name': 'Billing', 'contacts.1.email': 'billing@aaa.example' })).headers.get('location')!, ORIGIN).pathname.split('/')[2]!
    expect((await apiGet(`/accounts/${id}`)).contacts).toHaveLength(2)
    const res = await post(`/accounts/${id}`, cookie, { ...AAA, name: 'AAA Oregon & Idaho', kind: 'insurance', 'contacts.0.name': '', 'contacts.0.role': '', 'contacts.0.phone': '', 'contacts.0.email': '', 'contacts.1.name': 'Billing', 'contacts.1.email': 'billing@aaa.example' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`/accounts/${id}?done=saved`)
    expect(await apiGet(`/accounts/${id}`)).toMatchObject({ name: 'AAA Oregon & Idaho', kind: 'insurance', contacts: [{ name: 'Billing', role: null, phone: null, email: 'billing@aaa.example' }] })
  })

  test('two people saving one account: the page opened before the other\'s save is refused (409), nothing overwritten, what was typed kept beside what is saved now; saving again then keeps it', async () => {
    const cookie = await signIn()
    const id = new URL((await post('/accounts', cookie, AAA)).headers.get('location')!, ORIGIN).pathname.split('/')[2]!
    const version = (html: string) => html.match(/<input type="hidden" name="version" value="([A-Za-z0-9_-]{22})">/)?.[1]
    const opened = version(await (await page(`/accounts/${id}`, cookie)).text())!
    expect(opened).toBeDefined()
    // The first saves the rates; the second, from a page opened before that, saves the billing address.
    expect((await post(`/accounts/${id}`, cookie, { ...AAA, version: opened, rates: 'hook 99.00' })).status).toBe(303)
    const before = databaseFingerprint(api.db)
    const stale = await post(`/accounts/${id}`, cookie, { ...AAA, version: opened, billing_address: 'PO Box 9, Salem OR' })
    expect(stale.status).toBe(409)
    const html = await stale.text()
    expect(html).toMatch(/role="alert" data-form-alert tabindex="-1" autofocus>Someone else saved this account after this page was opened; nothing was saved\./)
    expect(databaseFingerprint(api.db)).toEqual(before)
    // What was typed is kept; the saved rates are shown beside it, and only what differs.
    expect(html).toContain('PO Box 9, Salem OR</textarea>')
    expect(html).toContain('<h2 id="h-saved-now">Saved now</h2>')
    expect(html).toContain('<dt>Rates</dt><dd class="pre-line">hook 99.00</dd>')
    expect(html).toContain('<dt>Billing address</dt><dd class="pre-line">PO Box 1, Portland OR</dd>')
    expect(html).not.toContain('<dt>Name</dt><dd class="pre-line">')
    // The refused page carries the version saved now: saving it again is a choice made seeing the other's change.
    const now = version(html)!
    expect(now).not.toBe(opened)
    const fields: Record<string, string> = { ...AAA, rates: 'hook 99.00', billing_address: 'PO Box 9, Salem OR', version: now }
    expect((await post(`/accounts/${id}`, cookie, fields)).status).toBe(303)
    // The same form sent twice (a double click): the second would change nothing, so it is not refused.
    expect((await post(`/accounts/${id}`, cookie, fields)).status).toBe(303)
    expect((await page(`/accounts/${id}`, cookie)).status).toBe(200)
    const saved = await (await page(`/accounts/${id}`, cookie)).text()
    expect(saved).toContain('hook 99.00</textarea>')
    expect(saved).toContain('PO Box 9, Salem OR</textarea>')
  })

  test('a post from another origin is 403 and writes nothing, for adding and for saving', async () => {
    const cookie = await signIn()
    const id = createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'Police', kind: 'police', contacts: [] }).id
    const before = databaseFingerprint(api.db)
    for (const path of ['/accounts', `/accounts/${id}`]) {
      const res = await post(path, cookie, { ...AAA, name: 'Evil' }, 'https://evil.example')
      expect({ path, status: res.status }).toEqual({ path, status: 403 })
    }
    expect(databaseFingerprint(api.db)).toEqual(before)
  })

  test('another tenant\'s user neither sees nor edits an entry: 404, nothing written, not listed', async () => {
    const id = createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'Mine Motor Club', kind: 'motor_club', contacts: [], internal_notes: 'secret note' }).id
    const eve = await signIn('eve@other.example', api.account('Other Towing'))
    expect((await page(`/accounts/${id}`, eve)).status).toBe(404)
    const before = databaseFingerprint(api.db)
    expect((await post(`/accounts/${id}`, eve, { ...AAA, name: 'Taken over' })).status).toBe(404)
    expect(databaseFingerprint(api.db)).toEqual(before)
    const list = await (await page('/accounts', eve)).text()
    expect(list).not.toContain('Mine Motor Club')
    expect(list).not.toContain(id)
  })
})

describe('the job forms\' Commercial account select', () => {
  test('New job offers the directory; the job is created with the chosen account', async () => {
    const cookie = await signIn()
    const club = createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'AAA Oregon', kind: 'motor_club', contacts: [] })
    const form = await (await page('/jobs/new', cookie)).text()
    expect(form).toMatch(/<label for="f-commercial_account_id">Commercial account<\/label>/)
    expect(form).toContain(`<option value="${club.id}">AAA Oregon</option>`)
    const res = await post('/jobs/new', cookie, { customer_name: 'Ann Lee', pickup: 'I-5 exit 12', commercial_account_id: club.id })
    expect(res.status).toBe(303)
    const jobId = res.headers.get('location')!.split('/')[2]!.split('?')[0]!
    expect((await apiGet(`/jobs/${jobId}`)).commercial_account).toEqual({ id: club.id, name: 'AAA Oregon' })
    const refused = await post('/jobs/new', cookie, { customer_name: 'Ann Lee', pickup: 'I-5 exit 12', commercial_account_id: 'cac_01ZZZZZZZZZZZZZZZZZZZZZZZZ' })
    expect(refused.status).toBe(422)
    expect(besideField(await refused.text(), 'commercial_account_id')).toContain('names no commercial account')
  })

  test('the job page shows the job\'s commercial account and its edit form sets and clears it through PATCH', async () => {
    const cookie = await signIn()
    const club = createCommercialAccount(api.contexts.forOperator(api.accountId), { name: 'AAA Oregon', kind: 'motor_club', contacts: [] })
    const job = await apiGet('/jobs').then(async () => (await (await api.request('POST', '/api/v1/jobs', { key, body: { customer: { name: 'Jo' }, pickup: { location: 'I-5' } } })).json()) as any)
    const html = await (await page(`/jobs/${job.id}`, cookie)).text()
    const fields = (name: string) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1] ?? ''
    const edit = { expected_status: job.status, version: fields('version'), customer_name: 'Jo', pickup: 'I-5', commercial_account_id: club.id }
    const res = await post(`/jobs/${job.id}/edit`, cookie, edit)
    expect(res.status).toBe(303)
    expect((await apiGet(`/jobs/${job.id}`)).commercial_account).toEqual({ id: club.id, name: 'AAA Oregon' })
    const shown = await (await page(`/jobs/${job.id}`, cookie)).text()
    expect(shown).toContain(`<dt>Commercial account</dt><dd><a href="/accounts/${club.id}">AAA Oregon</a></dd>`)
    expect(shown).toContain(`<option value="${club.id}" selected>AAA Oregon</option>`)
    const events = (await apiGet(`/jobs/${job.id}/events`)).data
    expect(events.at(-1)).toMatchObject({ type: 'job.updated', actor: 'dispatcher', detail: { fields: ['commercial_account_id'] } })
    const version = shown.match(/name="version" value="(\d+)"/)![1]!
    expect((await post(`/jobs/${job.id}/edit`, cookie, { ...edit, version, commercial_account_id: '' })).status).toBe(303)
    expect((await apiGet(`/jobs/${job.id}`)).commercial_account).toBeNull()
  })
})

import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { readSse } from '../../test/sse-reader'
import { createUser } from '../users/create-user'
import { updateAccount } from '../accounts/update-account'

let api: TestApi
let key: string
beforeEach(() => { api = startTestApi(); key = api.key('all') })
afterEach(() => api.close())

const ORIGIN = 'http://towline.test'

async function signedIn(email = 'ann@example.com', accountId = api.accountId, role: 'owner' | 'dispatcher' = 'dispatcher'): Promise<string> {
  await createUser(api.contexts.forOperator(accountId), { email, role, password: 'correct horse battery' })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=correct+horse+battery` }))
  return res.headers.get('set-cookie')!.split(';')[0]!
}
const page = (path: string, cookie: string, headers: Record<string, string> = {}) => api.raw(new Request(ORIGIN + path, { headers: { cookie, ...headers } }))
async function createJob(name: string, k = key, extra: Record<string, unknown> = {}) {
  const res = await api.request('POST', '/api/v1/jobs', { key: k, body: { customer: { name }, pickup: { location: 'I-5 exit 12' }, vehicle: { make: 'Honda', model: 'Civic', plate: '7ABC123' }, urgency: 'urgent', ...extra } })
  expect(res.status).toBe(201)
  return (await res.json()) as { id: string; status: string }
}


describe('the dispatch board', () => {
  test('shows a job made through the API in the column of its status, with what a dispatcher scans for', async () => {
    const cookie = await signedIn()
    const job = await createJob('Jo <Bloggs>')
    const res = await page('/board', cookie)
    expect(res.status).toBe(200)
    const html = await res.text()
    for (const s of ['pending', 'confirmed', 'dispatched', 'en_route', 'on_scene', 'towing', 'at_destination']) expect(html).toContain(`data-status="${s}"`)
    expect(html).not.toContain('data-status="completed"')
    const confirmed = html.slice(html.indexOf('data-status="confirmed"'), html.indexOf('data-status="dispatched"'))
    expect(confirmed).toContain(`data-job-id="${job.id}"`)
    expect(confirmed).toContain('Jo &lt;Bloggs&gt;')
    expect(confirmed).toContain('I-5 exit 12')
    expect(confirmed).toContain('Honda Civic, 7ABC123')
    expect(confirmed).toContain('No unit')
    expect(confirmed).toContain('urgent')
    expect(confirmed).toContain('0 min')
    expect(html).toMatch(/<h2 id="col-en_route">En route<\/h2>/)
  })

  test('another account\'s jobs never appear, and finished or archived jobs leave the board', async () => {
    const other = api.account('Other Towing')
    const otherKey = api.key('all', { accountId: other })
    const theirs = await createJob('Their customer', otherKey)
    const done = await createJob('Done customer')
    await api.request('PATCH', `/api/v1/jobs/${done.id}`, { key, body: { status: 'cancelled', cancel_reason: 'customer left' } })
    const cookie = await signedIn()
    const html = await (await page('/board', cookie)).text()
    expect(html).not.toContain(theirs.id)
    expect(html).not.toContain(done.id)
  })

  test("a card says when its job came in in the company's time zone, on the page and in the stream's card alike", async () => {
    updateAccount(api.contexts.forOperator(api.accountId), { timeZone: 'America/Los_Angeles' })
    const cookie = await signedIn()
    const s = readSse(await page('/board/events', cookie))
    await s.until((m) => m.some((x) => x.event === 'hello'))
    const job = await createJob('Jo')
    // The test clock: 2026-11-21 09:00 UTC is 01:00 in Los Angeles.
    const title = 'title="Waiting since 2026-11-21 01:00 PST"'
    expect(await (await page('/board', cookie)).text()).toContain(title)
    await s.until((m) => m.some((x) => x.data?.job?.id === job.id))
    expect(s.messages.find((m) => m.data?.job?.id === job.id)!.data.card).toContain(title)
    await s.cancel()
  })

  test('the stream needs a session: 401 in JSON, not a redirect', async () => {
    const res = await api.raw(new Request(`${ORIGIN}/board/events`))
    expect(res.status).toBe(401)
    expect(((await res.json()) as any).error.code).toBe('not_signed_in')
  })

  test('the stream says hello, then every change of the account as it commits, never another account\'s', async () => {
    const cookie = await signedIn()
    const res = await page('/board/events', cookie)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const s = readSse(res)
    await s.until((m) => m.some((x) => x.event === 'hello'))
    const other = api.account('Other Towing')
    await createJob('Not yours', api.key('all', { accountId: other }))
    const job = await createJob('Jo')
    await s.until((m) => m.some((x) => x.data?.job?.id === job.id))
    const mine = s.messages.filter((m) => m.event === 'job')
    expect(mine.every((m) => m.data.job.customer.name === 'Jo')).toBe(true)
    const created = mine.find((m) => m.data.event.type === 'job.created')!
    expect(Number(created.id)).toBe(created.data.position)
    expect(created.data.job.status).toBe('confirmed')
    await s.cancel()
  })

  test('a board that reconnects with Last-Event-ID gets what it missed, in order, once', async () => {
    const cookie = await signedIn()
    const first = readSse(await page('/board/events', cookie))
    const a = await createJob('Before the drop')
    await first.until((m) => m.some((x) => x.data?.job?.id === a.id))
    const last = first.messages.at(-1)!.id!
    await first.cancel()
    // While it is away: a new job, and a change to the first.
    const b = await createJob('While away')
    await api.request('PATCH', `/api/v1/jobs/${a.id}`, { key, body: { status: 'pending' } }).catch(() => {})
    await api.request('POST', `/api/v1/jobs/${a.id}/notes`, { key, body: { text: 'called back' } })
    const again = readSse(await page('/board/events', cookie, { 'last-event-id': last }))
    await again.until((m) => m.some((x) => x.data?.event?.type === 'job.note_added'))
    const replayed = again.messages.filter((m) => m.event === 'job')
    const positions = replayed.map((m) => Number(m.id))
    expect(positions).toEqual([...positions].sort((x, y) => x - y))
    expect(new Set(positions).size).toBe(positions.length)
    expect(positions[0]).toBeGreaterThan(Number(last))
    expect(replayed.some((m) => m.data.job.id === b.id && m.data.event.type === 'job.created')).toBe(true)
    // Nothing from before the drop comes again.
    expect(replayed.some((m) => m.data.job.id === a.id && m.data.event.type === 'job.created')).toBe(false)
    await again.cancel()
  })

  test('a board away longer than the memory holds is caught up from the database', async () => {
    const cookie = await signedIn()
    const s = readSse(await page('/board/events?after=0', cookie))
    const job = await createJob('Old one')
    await s.until((m) => m.some((x) => x.data?.job?.id === job.id))
    await s.cancel()
    // A fresh process's hub has nothing in memory: resume from position 0 reads the database.
    api.close()
    api = startTestApi()
    const cookie2 = await signedIn('bob@example.com')
    key = api.key('all')
    const j1 = await createJob('One')
    const j2 = await createJob('Two')
    const again = readSse(await page('/board/events', cookie2, { 'last-event-id': '0' }))
    await again.until((m) => m.filter((x) => x.event === 'job').length >= 2)
    expect(again.messages.filter((m) => m.event === 'job').map((m) => m.data.job.id)).toEqual([j1.id, j2.id])
    await again.cancel()
  })
})

describe('New job', () => {
  const postForm = (cookie: string, fields: Record<string, string>, origin = ORIGIN) =>
    api.raw(new Request(`${ORIGIN}/jobs/new`, { method: 'POST', headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }))

  test('creates the job through the same operation as POST /jobs: tracking link, request-received text, actor dispatcher with user_id', async () => {
    const cookie = await signedIn()
    const form = await (await page('/jobs/new', cookie)).text()
    for (const label of ['Customer name', 'Phone', 'Texts allowed', 'Pickup', 'Destination']) expect(form).toMatch(new RegExp(`<label for="f-[a-z_]+">${label}</label>`))
    expect(form).toContain('>Create job</button>')
    // Consent is the customer's to give: the box starts unticked, as sms_consent defaults to false in the API.
    expect(form).toMatch(/<input[^>]*name="sms_consent"/)
    expect(form).not.toMatch(/<input[^>]*name="sms_consent"[^>]*checked/)
    const idem = form.match(/name="idempotency_key" value="([0-9A-Za-z]+)"/)![1]!
    const fields = { idempotency_key: idem, customer_name: 'Dana Smith', customer_phone: '503-555-0160', sms_consent: 'on', pickup: 'Hwy 26 mile 40', destination: 'Main St Garage', vehicle_make: 'Ford', urgency: 'urgent' }
    const res = await postForm(cookie, fields)
    expect(res.status).toBe(303)
    // It lands on the new job's page.
    const id = res.headers.get('location')!.match(/^\/jobs\/(job_[0-9A-Za-z]+)\?done=created$/)![1]!
    // Sent twice (a double-click, a resent form): still one job.
    const again = await postForm(cookie, fields)
    expect(again.headers.get('location')).toBe(res.headers.get('location'))
    const list = (await (await api.request('GET', '/api/v1/jobs?limit=10', { key })).json()) as any
    expect(list.data.filter((j: any) => j.customer.name === 'Dana Smith')).toHaveLength(1)
    const job = (await (await api.request('GET', `/api/v1/jobs/${id}`, { key })).json()) as any
    expect(job).toMatchObject({ customer: { name: 'Dana Smith', phone: '+15035550160', sms_consent: true }, pickup: { location: 'Hwy 26 mile 40' }, destination: 'Main St Garage', urgency: 'urgent', status: 'confirmed' })
    expect(job.tracking_url).toMatch(/\/t\/[0-9A-Za-z]{24}$/)
    const events = (await (await api.request('GET', `/api/v1/jobs/${id}/events`, { key })).json()) as any
    const userId = (api.db.$client.query("SELECT id FROM users WHERE email = 'ann@example.com'").get() as any).id
    expect(events.data[0]).toMatchObject({ type: 'job.created', actor: 'dispatcher', detail: { user_id: userId } })
    const texts = (await (await api.request('GET', `/api/v1/jobs/${id}/texts`, { key })).json()) as any
    expect(texts.data.map((t: any) => t.template)).toEqual(['request_received'])
  })

  test('bad input is said beside each field, what was typed is kept, and nothing is created', async () => {
    const cookie = await signedIn()
    const res = await postForm(cookie, { customer_name: '', customer_phone: '12', pickup: '', destination: 'Keep <this>' })
    expect(res.status).toBe(422)
    const html = await res.text()
    expect(html).toMatch(/role="alert" data-form-alert tabindex="-1" autofocus>The job was not created/)
    // Every bad field at the first refusal: the blank ones and the phone that cannot be texted.
    expect(html).toMatch(/id="f-customer_name-error">[^<]+</)
    expect(html).toMatch(/id="f-pickup-error">[^<]+</)
    expect(html).toMatch(/id="f-customer_phone-error">[^<]+</)
    expect(html).toContain('value="Keep &lt;this&gt;"')
    const count = api.db.$client.query('SELECT count(*) AS n FROM jobs').get() as any
    expect(count.n).toBe(0)
    const phone = await postForm(cookie, { customer_name: 'Jo', customer_phone: '12', pickup: 'Exit 3', vehicle_year: '2026-02-30' })
    expect(phone.status).toBe(422)
    const both = await phone.text()
    expect(both).toMatch(/id="f-customer_phone-error">[^<]+</)
    expect(both).toMatch(/id="f-vehicle_year-error">[^<]+</)
    expect((api.db.$client.query('SELECT count(*) AS n FROM jobs').get() as any).n).toBe(0)
  })

  test('a form posted from another origin is refused and writes nothing', async () => {
    const cookie = await signedIn()
    const res = await postForm(cookie, { customer_name: 'Mallory', pickup: 'Anywhere' }, 'http://evil.test')
    expect(res.status).toBe(403)
    expect((api.db.$client.query('SELECT count(*) AS n FROM jobs').get() as any).n).toBe(0)
  })
})

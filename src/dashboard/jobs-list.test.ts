/** The jobs list `/jobs`: search by every kind, filters, archived jobs, accounts kept apart, paging, refusals. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { bringTo, call, makeJob, NO_LIMITS } from '../../test/jobs-helpers'
import { createUser } from '../users/create-user'
import { archiveJob } from '../jobs/archive-job'
import { updateAccount } from '../accounts/update-account'
import { fillSearchText } from '../jobs/fill-search-text'

let api: TestApi
let key: string
let cookie: string
const ORIGIN = 'http://towline.test'
const DAY = 86_400_000

async function signIn(email: string, accountId: string): Promise<string> {
  await createUser(api.contexts.forOperator(accountId), { email, role: 'dispatcher', password: 'correct horse battery' })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=correct+horse+battery` }))
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie')!.split(';')[0]!
}

beforeEach(async () => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
  cookie = await signIn('disp@example.com', api.accountId)
})
afterEach(() => api.close())

/** GET /jobs with the given query (an object, or a query string) as the signed-in dispatcher. */
async function open(query: Record<string, string> | string = {}, as = cookie) {
  const qs = typeof query === 'string' ? query : new URLSearchParams(query).toString()
  const res = await api.raw(new Request(`${ORIGIN}/jobs${qs ? `?${qs}` : ''}`, { headers: { cookie: as } }))
  const html = await res.text()
  return { status: res.status, html, ids: [...html.matchAll(/<tr data-job-id="(job_[^"]+)"/g)].map((m) => m[1]!), next: /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(html)?.[1]?.replaceAll('&amp;', '&') }
}
const found = async (query: Record<string, string>) => (await open(query)).ids

/** Jobs the searches below tell apart: each matches one kind of search only. */
async function makeCast() {
  const ann = await makeJob(api, key, { customer: { name: 'Ann Lee', phone: '(503) 555-0142' }, vehicle: { make: 'Honda', plate: '7ABC123' }, external_ref: 'MC-88412' })
  api.clock.advance(60_000)
  const bob = await makeJob(api, key, { customer: { name: 'Bob Annersley-Smith', phone: '+44 7700 900123' }, vehicle: { make: 'Ford', plate: 'XYZ 9' }, external_ref: 'PD-2231' })
  api.clock.advance(60_000)
  const elo = await makeJob(api, key, { customer: { name: 'Élodie Durand' }, vehicle: { make: 'Renault', plate: 'AB-123-CD' } })
  api.clock.advance(60_000)
  const pct = await makeJob(api, key, { customer: { name: '100% Auto Body' }, vehicle: {} })
  api.clock.advance(60_000)
  return { ann: ann.id as string, bob: bob.id as string, elo: elo.id as string, pct: pct.id as string }
}

describe('the jobs list', () => {
  test('without a session the page sends the browser to sign in, and comes back to the search after', async () => {
    const res = await api.raw(new Request(`${ORIGIN}/jobs?q=Ann`))
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/jobs?q=Ann')}`)
    const stale = await api.raw(new Request(`${ORIGIN}/jobs`, { headers: { cookie: 'towline_session=not-a-session' } }))
    expect(stale.status).toBe(303)
  })

  test('an empty search lists recent jobs newest first, in a table with a caption and column headers and links to each job', async () => {
    const { ann, bob, elo, pct } = await makeCast()
    const page = await open()
    expect(page.status).toBe(200)
    expect(page.ids).toEqual([pct, elo, bob, ann])
    expect(page.html).toContain('<caption id="jobs-caption">Recent jobs, newest first</caption>')
    for (const h of ['Created', 'Status', 'Customer', 'Pickup', 'Vehicle', 'Unit', 'Reference']) expect(page.html).toContain(`<th scope="col">${h}</th>`)
    expect(page.html).toContain(`<a href="/jobs/${ann}">Ann Lee</a>`)
    expect(page.html).toContain('Honda, 7ABC123')
    expect(page.html).toContain('MC-88412')
    expect(page.html).toContain('<a href="/jobs" aria-current="page">Jobs</a>')
    expect(page.next).toBeUndefined()
  })

  test('finds a customer by any part of the name, whatever its case, accents\' case included', async () => {
    const { ann, bob, elo } = await makeCast()
    expect(await found({ q: 'ann' })).toEqual([bob, ann])
    expect(await found({ q: 'LEE' })).toEqual([ann])
    expect(await found({ q: 'ÉLODIE' })).toEqual([elo])
    expect(await found({ q: 'durand' })).toEqual([elo])
    expect(await found({ q: 'Nobody' })).toEqual([])
    // Characters JSON stores escaped (the search reads the stored JSON as text) are found as typed.
    const quoted = (await makeJob(api, key, { customer: { name: 'Dan "Tow Man" O\\Brien' }, vehicle: { plate: 'Q"1\\2' } })).id as string
    expect(await found({ q: '"tow man" o\\b' })).toEqual([quoted])
    expect(await found({ q: 'q"1\\2' })).toEqual([quoted])
    // A key of the stored JSON is not a customer's name.
    expect(await found({ q: 'phone' })).toEqual([])
  })

  test('finds a phone typed any common way, in the account\'s country, or by its last digits', async () => {
    const { ann, bob } = await makeCast()
    for (const typed of ['503-555-0142', '(503) 555 0142', '+1 503 555 0142', '5035550142', '1-503-555-0142', '001 503 555 0142', '0142', '555-0142']) {
      expect({ typed, ids: await found({ q: typed }) }).toEqual({ typed, ids: [ann] })
    }
    expect(await found({ q: '+447700900123' })).toEqual([bob])
    expect(await found({ q: '0044 7700 900123' })).toEqual([bob])
    // Three digits are too few to mean a phone's end; another number matches nothing.
    expect(await found({ q: '142' })).toEqual([])
    expect(await found({ q: '503-555-0199' })).toEqual([])
  })

  test('reads a national number in the account\'s own country', async () => {
    const uk = api.account('Leeds Towing')
    updateAccount(api.contexts.forOperator(uk), { country: 'GB' })
    const ukKey = api.key('all', { accountId: uk })
    const job = await makeJob(api, ukKey, { customer: { name: 'Gwen', phone: '07700 900456' } })
    const ukCookie = await signIn('leeds@example.com', uk)
    expect((await open({ q: '07700900456' }, ukCookie)).ids).toEqual([job.id])
    expect((await open({ q: '+44 7700 900456' }, ukCookie)).ids).toEqual([job.id])
  })

  test('finds a plate whatever its case and spacing, a reference by any part, and a job by its id', async () => {
    const { ann, bob, elo } = await makeCast()
    expect(await found({ q: '7abc 123' })).toEqual([ann])
    expect(await found({ q: '7-ABC-123' })).toEqual([ann])
    expect(await found({ q: 'xyz9' })).toEqual([bob])
    expect(await found({ q: 'ab123cd' })).toEqual([elo])
    expect(await found({ q: 'mc-88412' })).toEqual([ann])
    expect(await found({ q: 'PD-22' })).toEqual([bob])
    expect(await found({ q: bob })).toEqual([bob])
    expect(await found({ q: `job_${bob.slice(4).toLowerCase()}` })).toEqual([bob])
  })

  test('a % or _ in the search is a character, not a wildcard', async () => {
    const { pct } = await makeCast()
    expect(await found({ q: '100%' })).toEqual([pct])
    expect(await found({ q: '%' })).toEqual([pct])
    expect(await found({ q: '_' })).toEqual([])
  })

  test('finished jobs are found; Status narrows to one status, the unfinished or the finished', async () => {
    const open1 = (await bringTo(api, key, 'confirmed')).job.id
    const done = (await bringTo(api, key, 'completed')).job.id
    const gone = (await bringTo(api, key, 'cancelled')).job.id
    expect((await found({})).sort()).toEqual([open1, done, gone].sort())
    expect(await found({ status: 'finished' })).toEqual(expect.arrayContaining([done, gone]))
    expect((await found({ status: 'finished' })).length).toBe(2)
    expect(await found({ status: 'unfinished' })).toEqual([open1])
    expect(await found({ status: 'completed' })).toEqual([done])
    expect(await found({ status: 'cancelled', q: 'Ann' })).toEqual([gone])
  })

  test('archived jobs are left out unless Include archived is ticked, and are marked Archived', async () => {
    const kept = (await bringTo(api, key, 'completed')).job.id
    const old = (await bringTo(api, key, 'completed', { job: { external_ref: 'OLD-1' } })).job.id
    archiveJob(api.contexts.forOperator(api.accountId), old)
    expect(await found({})).toEqual([kept])
    expect(await found({ q: 'OLD-1' })).toEqual([])
    const page = await open({ q: 'OLD-1', archived: 'on' })
    expect(page.ids).toEqual([old])
    expect(page.html).toMatch(/Completed <span class="tag">Archived<\/span>/)
    expect(page.html).toMatch(/<input[^>]*name="archived"[^>]*checked/)
    expect(await found({ archived: 'on' })).toEqual([old, kept])
  })

  test('From and To take whole days of creation in the company\'s time zone (here UTC), both ends included', async () => {
    api.clock.ms = Date.parse('2026-03-01T00:00:00.000Z')
    const first = (await makeJob(api, key)).id
    api.clock.ms = Date.parse('2026-03-01T23:59:59.999Z')
    const late = (await makeJob(api, key)).id
    api.clock.ms = Date.parse('2026-03-02T00:00:00.000Z')
    const next = (await makeJob(api, key)).id
    api.clock.advance(10 * DAY)
    const later = (await makeJob(api, key)).id
    expect(await found({ from: '2026-03-01', to: '2026-03-01' })).toEqual([late, first])
    expect(await found({ from: '2026-03-02' })).toEqual([later, next])
    expect(await found({ to: '2026-03-02' })).toEqual([next, late, first])
    expect(await found({ from: '2026-03-02', to: '2026-03-11' })).toEqual([next])
  })

  test('in a company set to Los Angeles, a day is Los Angeles\' day (23 hours when the clocks go forward), and the list shows its times there', async () => {
    updateAccount(api.contexts.forOperator(api.accountId), { timeZone: 'America/Los_Angeles' })
    // 7 March 2026 (PST, UTC-8) and 8 March, when clocks go forward at 02:00 (PDT, UTC-7 from then).
    const at = async (isoTime: string) => { api.clock.ms = Date.parse(isoTime); return (await makeJob(api, key)).id as string }
    const lateOn7th = await at('2026-03-08T07:59:59.999Z') // 23:59:59.999 on the 7th
    const startOf8th = await at('2026-03-08T08:00:00.000Z') // 00:00 on the 8th
    const endOf8th = await at('2026-03-09T06:59:59.999Z') // 23:59:59.999 PDT on the 8th
    const startOf9th = await at('2026-03-09T07:00:00.000Z')
    expect(await found({ from: '2026-03-08', to: '2026-03-08' })).toEqual([endOf8th, startOf8th])
    expect(await found({ to: '2026-03-07' })).toEqual([lateOn7th])
    expect(await found({ from: '2026-03-09' })).toEqual([startOf9th])
    const page = await open({ from: '2026-03-08', to: '2026-03-08' })
    expect(page.html).toContain(`<time datetime="2026-03-09T06:59:59.999Z">2026-03-08 23:59 PDT</time>`)
    expect(page.html).toContain(`<time datetime="2026-03-08T08:00:00.000Z">2026-03-08 00:00 PST</time>`)
    expect(page.html).toContain('in the company\'s time zone (America/Los_Angeles)')
  })

  test('To before From, a day that does not exist or an unknown status is refused beside its field: 422, and nothing listed', async () => {
    await makeCast()
    const backwards = await open({ from: '2026-03-05', to: '2026-03-01', q: 'Ann' })
    expect(backwards.status).toBe(422)
    expect(backwards.ids).toEqual([])
    expect(backwards.html).toContain('role="alert"')
    expect(backwards.html).toMatch(/<div class="form-alert" role="alert" data-form-alert tabindex="-1" autofocus>The search was not run\. To: must be the same day as From or later\.<\/div>/)
    expect(backwards.html).toMatch(/<input[^>]*id="f-to"[^>]*aria-invalid="true"[^>]*aria-describedby="f-to-error"/)
    expect(backwards.html).toContain('<p class="field-error" id="f-to-error">must be the same day as From or later</p>')
    expect(backwards.html).toMatch(/<input[^>]*id="f-q"[^>]*value="Ann"/)

    const impossible = await open({ from: '2026-02-30' })
    expect(impossible.status).toBe(422)
    expect(impossible.ids).toEqual([])
    expect(impossible.html).toContain('<p class="field-error" id="f-from-error">must be a date that exists, such as 2026-11-21</p>')
    for (const query of [{ to: '21/11/2026' }, { status: 'parked' }, { q: 'x'.repeat(101) }, { cursor: 'not-a-cursor' }] as Record<string, string>[]) {
      const res = await open(query)
      expect({ query, status: res.status, rows: res.ids.length }).toEqual({ query, status: 422, rows: 0 })
      expect(res.html).toContain('The search was not run.')
    }
  })

  test('hostile query strings get a page, never a 5xx', async () => {
    await makeCast()
    for (const qs of ['q=%', 'q=%E0%A4%A', 'q=a&q=b', 'status=&status=finished', 'from[]=x', 'q=%00', 'q=%ED%A0%80', `q=${'%27'.repeat(50)}`, 'cursor=W10', 'cursor=WzEsMl0']) {
      const res = await open(qs)
      expect({ qs, ok: res.status === 200 || res.status === 422 }).toEqual({ qs, ok: true })
    }
  })

  test('another account\'s jobs never appear, whatever is searched', async () => {
    const other = api.account('Other Towing')
    const otherKey = api.key('all', { accountId: other })
    const theirs = await makeJob(api, otherKey, { customer: { name: 'Ann Lee', phone: '(503) 555-0142' }, vehicle: { plate: '7ABC123' }, external_ref: 'MC-88412' })
    const mine = await makeJob(api, key, { customer: { name: 'Someone Else' } })
    for (const q of ['', 'Ann', '503-555-0142', '7ABC123', 'MC-88412', theirs.id]) {
      const page = await open({ q, archived: 'on' })
      expect({ q, status: page.status, leaked: page.ids.includes(theirs.id) || page.html.includes(`/jobs/${theirs.id}`) }).toEqual({ q, status: 200, leaked: false })
    }
    expect(await found({})).toEqual([mine.id])
  })

  test('pages of 50 follow each other through Next page, keeping the search, with no job missed or repeated', async () => {
    const made: string[] = []
    for (let i = 0; i < 123; i++) {
      // Pairs made in the same millisecond: the id orders them.
      made.push((await makeJob(api, key, { customer: { name: i % 3 === 0 ? `Pat ${i}` : `Sam ${i}` } })).id)
      if (i % 2) api.clock.advance(1000)
    }
    const pats = made.filter((_, i) => i % 3 === 0)
    const seen: string[] = []
    let page = await open({ q: 'pat' })
    expect(page.ids.length).toBe(41)
    expect(page.next).toBeUndefined()
    seen.push(...page.ids)
    expect(seen).toEqual(pats.slice().reverse())

    const all: string[] = []
    page = await open()
    const sizes: number[] = []
    for (;;) {
      all.push(...page.ids)
      sizes.push(page.ids.length)
      if (!page.next) break
      expect(page.next).toStartWith('/jobs?cursor=')
      page = await open(page.next.slice('/jobs?'.length))
    }
    expect(sizes).toEqual([50, 50, 23])
    expect(all).toEqual(made.slice().reverse())

    // The next page keeps the query: only Sams, still newest first.
    const sams: string[] = []
    page = await open({ q: 'sam', status: 'unfinished' })
    for (;;) {
      sams.push(...page.ids)
      if (!page.next) break
      expect(page.next).toContain('q=sam')
      expect(page.next).toContain('status=unfinished')
      page = await open(page.next.slice('/jobs?'.length))
    }
    expect(sams).toEqual(made.filter((_, i) => i % 3 !== 0).reverse())
  })

  test('a search the database cannot fold (non-Latin letters) still fills its pages and pages on', async () => {
    const made: string[] = []
    for (let i = 0; i < 60; i++) {
      made.push((await makeJob(api, key, { customer: { name: i % 2 ? `ИВАН ${i}` : `Олег ${i}` } })).id)
      api.clock.advance(1000)
    }
    const ivans = made.filter((_, i) => i % 2).reverse()
    expect(await found({ q: 'иван' })).toEqual(ivans)
    const first = await open({ q: 'о' })
    expect(first.ids.length).toBe(30)
  })

  test('accents and case do not matter either way: zoe finds Zoë, PENA finds Peña, José is found as jose, strasse finds Straße; a reference too', async () => {
    const zoe = (await makeJob(api, key, { customer: { name: 'Zoë Ångström' } })).id
    const pena = (await makeJob(api, key, { customer: { name: 'María Peña' }, external_ref: 'RÉF-Ø12' })).id
    const jose = (await makeJob(api, key, { customer: { name: 'Jose Strasse' } })).id
    const strasse = (await makeJob(api, key, { customer: { name: 'Hauptstraße Garage' } })).id
    expect(await found({ q: 'zoe' })).toEqual([zoe])
    expect(await found({ q: 'angstrom' })).toEqual([zoe])
    expect(await found({ q: 'PENA' })).toEqual([pena])
    expect(await found({ q: 'maria pe' })).toEqual([pena])
    expect(await found({ q: 'José' })).toEqual([jose])
    expect(await found({ q: 'strasse' })).toEqual([strasse, jose])
    expect(await found({ q: 'ref-o12' })).toEqual([pena])
    // A name changed through the API is found by its new spelling, not its old one.
    expect((await call(api, key, 'PATCH', `/jobs/${zoe}`, { customer: { name: 'Chloé Durand' } })).status).toBe(200)
    expect(await found({ q: 'chloe' })).toEqual([zoe])
    expect(await found({ q: 'zoe' })).toEqual([])
  })

  test('jobs written before the search text existed are found all the same, and the server\'s start fills theirs in', async () => {
    const old = (await makeJob(api, key, { customer: { name: 'Renée Old' } })).id
    api.db.$client.exec('UPDATE jobs SET search_text = NULL')
    expect(await found({ q: 'renee' })).toEqual([old])
    expect(fillSearchText(api.db)).toBe(1)
    expect(await found({ q: 'renee' })).toEqual([old])
    expect(fillSearchText(api.db)).toBe(0)
  })

  test('a job made through the API and then finished is found by the list and by GET /jobs alike', async () => {
    const { job } = await bringTo(api, key, 'goa', { job: { customer: { name: 'Gus Oa', phone: '503 555 0177' } } })
    expect(await found({ q: '0177', status: 'goa' })).toEqual([job.id])
    const api1 = await call(api, key, 'GET', `/jobs/${job.id}`)
    expect(api1.body.status).toBe('goa')
  })
})

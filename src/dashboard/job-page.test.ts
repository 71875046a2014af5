/**
 * The job page through HTTP, as its forms post: every action goes through the API's operation
 * (proved by what the API then shows, with actor dispatcher and detail.user_id), a stale page is
 * refused and says so, bad input is said beside its field and writes nothing.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { createUser } from '../users/create-user'
import { addUnit } from '../units/add-unit'
import { captureSignature } from '../jobs/capture-signature'

let api: TestApi
let key: string
beforeEach(() => { api = startTestApi(); key = api.key('all') })
afterEach(() => api.close())

const ORIGIN = 'http://towline.test'
/** A real 1x1 PNG. */
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0))
const PASSWORD = 'correct horse battery'

async function signIn(email = 'ann@example.com', accountId = api.accountId): Promise<{ cookie: string; userId: string }> {
  const { user } = await createUser(api.contexts.forOperator(accountId), { email, role: 'dispatcher', password: PASSWORD })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=${encodeURIComponent(PASSWORD)}` }))
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, userId: user.id }
}
const get = (path: string, cookie: string) => api.raw(new Request(ORIGIN + path, { headers: { cookie } }))
const apiGet = async (path: string) => (await (await api.request('GET', `/api/v1${path}`, { key })).json()) as any
async function newJob(extra: Record<string, unknown> = {}): Promise<any> {
  const res = await api.request('POST', '/api/v1/jobs', { key, body: { customer: { name: 'Jo Bloggs', phone: '503-555-0101', sms_consent: true }, pickup: { location: 'I-5 exit 12' }, ...extra } })
  expect(res.status).toBe(201)
  return res.json()
}

const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
const attr = (tag: string, name: string) => tag.match(new RegExp(`\\s${name}="([^"]*)"`))?.[1]

/** What a browser would send with one action's form as the page rendered it (hidden, text, checked boxes, textareas, selects). */
function formOf(html: string, action: string): Record<string, string> {
  const m = html.match(new RegExp(`<form method="post" action="/jobs/[^/"]+/${action}"[^>]*>([\\s\\S]*?)</form>`))
  if (!m) throw new Error(`no ${action} form on the page`)
  const fields: Record<string, string> = {}
  for (const [tag] of m[1]!.matchAll(/<input\b[^>]*>/g)) {
    const name = attr(tag, 'name')
    if (!name || (attr(tag, 'type') === 'checkbox' && !/\schecked\b/.test(tag))) continue
    fields[name] = unescape(attr(tag, 'value') ?? '')
  }
  for (const t of m[1]!.matchAll(/<textarea\b[^>]*name="([^"]+)"[^>]*>([^<]*)<\/textarea>/g)) fields[t[1]!] = unescape(t[2]!)
  for (const t of m[1]!.matchAll(/<select\b[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) fields[t[1]!] = unescape(t[2]!.match(/<option value="([^"]*)" selected>/)?.[1] ?? '')
  return fields
}
function post(cookie: string, jobId: string, action: string, fields: Record<string, string>, origin = ORIGIN) {
  return api.raw(new Request(`${ORIGIN}/jobs/${jobId}/${action}`, {
    method: 'POST', redirect: 'manual',
    headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  }))
}
/** Opens the page, then posts the action's form with these fields (as a click would). */
async function act(cookie: string, jobId: string, action: string, fields: Record<string, string> = {}) {
  const html = await (await get(`/jobs/${jobId}`, cookie)).text()
  return post(cookie, jobId, action, { ...formOf(html, action), ...fields })
}
const lastEvent = async (id: string) => (await apiGet(`/jobs/${id}/events?limit=100`)).data.at(-1)

describe('the job page', () => {
  test('shows a job entered through the API: its fields, links, timeline with texts, and the actions for its status', async () => {
    const { cookie } = await signIn()
    addUnit(api.db, api.clock, { accountId: api.accountId, name: 'Truck 7' })
    const job = await newJob({ status: 'pending', external_ref: 'MC-77', vehicle: { make: 'Honda', model: 'Civic', plate: '7ABC123' }, destination: 'Main <St> Garage' })
    const res = await get(`/jobs/${job.id}`, cookie)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<h1>Jo Bloggs · MC-77</h1>')
    expect(html).toContain('Main &lt;St&gt; Garage')
    expect(html).toContain('Honda Civic, 7ABC123')
    expect(html).toContain(job.tracking_url)
    expect(html).toContain('data-text-status="')
    for (const button of ['Move to Confirmed', 'Cancel job', 'Assign', 'Add note', 'Archive', 'New tracking link', 'Save changes']) {
      expect(html).toContain(`>${button}</button>`)
    }
    for (const label of ['Reason', 'Unit', 'Note', 'Visible to customer']) expect(html).toMatch(new RegExp(`<label for="f-[a-z_]+">${label}</label>`))
    // Not offered: moves the table refuses here, Reopen for an unfinished job, Restore for an active one.
    expect(html).not.toContain('>Reopen</button>')
    expect(html).not.toContain('>Restore</button>')
    expect(html).not.toContain('>Move to Dispatched</button>')
    expect(html).not.toContain('>Unassign</button>')
  })

  test('without a session the page sends to sign-in; another account\'s job is not found', async () => {
    const job = await newJob()
    const anon = await api.raw(new Request(`${ORIGIN}/jobs/${job.id}`, { redirect: 'manual' }))
    expect(anon.status).toBe(303)
    expect(anon.headers.get('location')).toBe(`/login?next=${encodeURIComponent(`/jobs/${job.id}`)}`)
    const other = api.account('Other Towing')
    const { cookie } = await signIn('eve@other.example', other)
    expect((await get(`/jobs/${job.id}`, cookie)).status).toBe(404)
    // Nor can it act on it, with any action.
    const res = await post(cookie, job.id, 'note', { note: 'mine now', expected_status: 'pending' })
    expect(res.status).toBe(404)
    expect((await apiGet(`/jobs/${job.id}/events`)).data).toHaveLength(1)
  })

  test('every action goes through the API\'s operation, as the dispatcher who clicked', async () => {
    const { cookie, userId } = await signIn()
    const truck = addUnit(api.db, api.clock, { accountId: api.accountId, name: 'Truck 7', driverPhone: '503-555-0177' })
    const job = await newJob()
    const byMe = async (type: string) => {
      const e = await lastEvent(job.id)
      expect(e).toMatchObject({ type, actor: 'dispatcher', detail: { user_id: userId } })
    }
    const done = async (res: Response, word: string) => {
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/jobs/${job.id}?done=${word}`)
      expect(await (await get(res.headers.get('location')!, cookie)).text()).toMatch(/role="status" id="page-done">[^<]+</)
    }

    await done(await act(cookie, job.id, 'assign', { unit_id: truck.id }), 'assigned')
    expect(await apiGet(`/jobs/${job.id}`)).toMatchObject({ status: 'dispatched', unit: { id: truck.id, name: 'Truck 7' } })
    const events = (await apiGet(`/jobs/${job.id}/events`)).data
    expect(events.find((e: any) => e.type === 'job.assigned')).toMatchObject({ actor: 'dispatcher', detail: { user_id: userId } })

    await done(await act(cookie, job.id, 'move', { to: 'en_route' }), 'moved')
    expect((await apiGet(`/jobs/${job.id}`)).status).toBe('en_route')
    await byMe('job.status_changed')

    const texts = (await apiGet(`/jobs/${job.id}/texts`)).data.length
    await done(await act(cookie, job.id, 'driver-link'), 'driver_link')
    const after = (await apiGet(`/jobs/${job.id}/texts`)).data
    expect(after).toHaveLength(texts + 1)
    expect(after.at(-1)).toMatchObject({ recipient: 'driver', template: 'driver_job_link' })

    const oldLink = (await apiGet(`/jobs/${job.id}`)).tracking_url as string
    await done(await act(cookie, job.id, 'tracking-link'), 'tracking_link')
    const newLink = (await apiGet(`/jobs/${job.id}`)).tracking_url
    expect(newLink).not.toBe(oldLink)
    await byMe('job.updated')
    expect((await api.raw(new Request(oldLink.replace(/^https?:\/\/[^/]+/, ORIGIN)))).status).toBe(410)

    await done(await act(cookie, job.id, 'note', { note: 'Gate code 4411', customer_visible: 'on' }), 'note')
    await byMe('job.note_added')
    expect((await lastEvent(job.id)).detail).toMatchObject({ text: 'Gate code 4411', customer_visible: true })

    await done(await act(cookie, job.id, 'edit', { pickup: 'I-5 exit 13, northbound shoulder', quote: '185.00', vehicle_plate: '8XYZ999' }), 'saved')
    expect(await apiGet(`/jobs/${job.id}`)).toMatchObject({ pickup: { location: 'I-5 exit 13, northbound shoulder' }, quote_cents: 18500, vehicle: { plate: '8XYZ999' }, customer: { name: 'Jo Bloggs' } })
    const edits = (await apiGet(`/jobs/${job.id}/events?limit=100`)).data.slice(-2)
    expect(edits.map((e: any) => e.type)).toEqual(['job.quote_updated', 'job.updated'])
    expect(edits[1].detail).toMatchObject({ fields: ['vehicle', 'pickup'], user_id: userId })
    // The same form again, unchanged: nothing written.
    const count = (await apiGet(`/jobs/${job.id}/events?limit=100`)).data.length
    await done(await act(cookie, job.id, 'edit'), 'unchanged')
    expect((await apiGet(`/jobs/${job.id}/events?limit=100`)).data).toHaveLength(count)

    await done(await act(cookie, job.id, 'unassign'), 'unassigned')
    expect(await apiGet(`/jobs/${job.id}`)).toMatchObject({ status: 'confirmed', unit: null })

    await done(await act(cookie, job.id, 'cancel', { to: 'cancelled', reason: 'Customer got a jump' }), 'cancelled')
    expect(await apiGet(`/jobs/${job.id}`)).toMatchObject({ status: 'cancelled', cancel_reason: 'Customer got a jump' })
    await byMe('job.status_changed')

    await done(await act(cookie, job.id, 'reopen', { reason: 'Car died again' }), 'reopened')
    expect(await apiGet(`/jobs/${job.id}`)).toMatchObject({ status: 'confirmed', reopen_count: 1 })

    await done(await act(cookie, job.id, 'archive'), 'archived')
    expect((await apiGet(`/jobs/${job.id}`)).archived).toBe(true)
    await byMe('job.archived')
    // Archived: the page offers only Restore, and the API refuses writes.
    const archived = await (await get(`/jobs/${job.id}`, cookie)).text()
    expect(archived).toContain('>Restore</button>')
    expect(archived).not.toContain('>Add note</button>')
    expect((await api.request('POST', `/api/v1/jobs/${job.id}/notes`, { key, body: { text: 'x' } })).status).toBe(409)

    await done(await act(cookie, job.id, 'restore'), 'restored')
    expect((await apiGet(`/jobs/${job.id}`)).archived).toBe(false)
    await byMe('job.restored')
  })

  test('a page left open while someone else moved the job is refused, says so, and writes nothing', async () => {
    const { cookie } = await signIn()
    const job = await newJob({ status: 'pending' })
    const html = await (await get(`/jobs/${job.id}`, cookie)).text()
    // Someone else (the API) confirms, then cancels... the page still shows pending.
    await api.request('PATCH', `/api/v1/jobs/${job.id}`, { key, body: { status: 'cancelled', cancel_reason: 'Duplicate call' } })
    const before = (await apiGet(`/jobs/${job.id}/events`)).data.length
    for (const [action, fields] of [['move', { to: 'confirmed' }], ['note', { note: 'on my way' }], ['archive', {}], ['tracking-link', {}], ['cancel', { to: 'cancelled', reason: 'my reason' }]] as const) {
      const res = await post(cookie, job.id, action, { ...formOf(html, action), ...fields })
      expect(res.status).toBe(409)
      const page = await res.text()
      expect(page).toMatch(/role="alert" id="page-alert">Someone else changed this job first: it is now Cancelled, not Pending/)
      // The page shows the job as it is now: Reopen offered, not the old moves.
      expect(page).toContain('>Reopen</button>')
    }
    expect((await apiGet(`/jobs/${job.id}`)).status).toBe('cancelled')
    expect((await apiGet(`/jobs/${job.id}/events`)).data).toHaveLength(before)
  })

  test("an Assign or Unassign from a page left open while someone else reassigned the job is refused (the status did not move, the unit did) and writes nothing", async () => {
    const { cookie } = await signIn()
    const [t1, t2, t3] = ['Truck 1', 'Truck 2', 'Truck 3'].map((name) => addUnit(api.db, api.clock, { accountId: api.accountId, name }))
    const job = await newJob()
    const assigned = async (res: Response) => expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 303, location: `/jobs/${job.id}?done=assigned` })
    await assigned(await act(cookie, job.id, 'assign', { unit_id: t1!.id }))
    const html = await (await get(`/jobs/${job.id}`, cookie)).text()
    // Another dispatcher (the API here) hands it to Truck 2; the page still shows Truck 1, status Dispatched as before.
    expect((await api.request('POST', `/api/v1/jobs/${job.id}/assign`, { key, body: { unit_id: t2!.id } })).status).toBe(200)
    const before = (await apiGet(`/jobs/${job.id}/events`)).data.length
    for (const [action, fields] of [['assign', { unit_id: t3!.id }], ['unassign', {}]] as const) {
      const res = await post(cookie, job.id, action, { ...formOf(html, action), ...fields })
      expect(res.status).toBe(409)
      expect(await res.text()).toMatch(/role="alert" id="page-alert">Someone else changed this job&#39;s unit first: it is now with Truck 2, not Truck 1 as this page showed/)
    }
    expect((await apiGet(`/jobs/${job.id}`)).unit.name).toBe('Truck 2')
    expect((await apiGet(`/jobs/${job.id}/events`)).data).toHaveLength(before)
    // From the page as it is now, it goes through.
    await assigned(await act(cookie, job.id, 'assign', { unit_id: t3!.id }))
    expect((await apiGet(`/jobs/${job.id}`)).unit.name).toBe('Truck 3')
  })

  test('an edit made while someone else changed the job is refused and keeps what was typed', async () => {
    const { cookie } = await signIn()
    const job = await newJob()
    const html = await (await get(`/jobs/${job.id}`, cookie)).text()
    await api.request('PATCH', `/api/v1/jobs/${job.id}`, { key, body: { destination: 'Their garage' } })
    const res = await post(cookie, job.id, 'edit', { ...formOf(html, 'edit'), customer_name: 'Jo Bloggs', pickup: 'My typed pickup', destination: '' })
    expect(res.status).toBe(409)
    const page = await res.text()
    expect(page).toContain('role="alert" id="page-alert">Someone else changed this job while you were editing it')
    expect(page).toContain('value="My typed pickup"')
    expect(await apiGet(`/jobs/${job.id}`)).toMatchObject({ destination: 'Their garage', pickup: { location: 'I-5 exit 12' } })
  })

  test('bad input is said beside its field, keeps what was typed, and writes nothing', async () => {
    const { cookie } = await signIn()
    addUnit(api.db, api.clock, { accountId: api.accountId, name: 'Truck 7' })
    const job = await newJob()
    const before = (await apiGet(`/jobs/${job.id}/events`)).data.length
    const cancel = await act(cookie, job.id, 'cancel', { to: 'cancelled', reason: 'no' })
    expect(cancel.status).toBe(422)
    const page = await cancel.text()
    expect(page).toMatch(/id="f-reason-error">[^<]+</)
    expect(page).toContain('id="f-reason" name="reason" aria-invalid="true"')
    expect(page).toMatch(/role="alert" id="page-alert">[^<]+</)

    const note = await act(cookie, job.id, 'note', { note: '   ' })
    expect(note.status).toBe(422)
    expect(await note.text()).toMatch(/id="f-note-error">[^<]+</)

    const assign = await act(cookie, job.id, 'assign', { unit_id: 'unit_nope' })
    expect(assign.status).toBe(422)
    expect(await assign.text()).toMatch(/id="f-unit_id-error">[^<]+</)

    const edit = await act(cookie, job.id, 'edit', { quote: 'a lot', customer_phone: '12', pickup: 'Typed <pickup>' })
    expect(edit.status).toBe(422)
    const editPage = await edit.text()
    expect(editPage).toMatch(/id="f-quote-error">must be dollars and cents/)
    // Every bad field at once: the phone is marked beside the quote, not after it is fixed.
    expect(editPage).toMatch(/id="f-customer_phone-error">is not a phone number/)
    expect(editPage).toContain('value="Typed &lt;pickup&gt;"')
    expect(editPage).toContain('value="a lot"')
    expect((await apiGet(`/jobs/${job.id}/events`)).data).toHaveLength(before)
    expect((await apiGet(`/jobs/${job.id}`)).pickup.location).toBe('I-5 exit 12')
  })

  test('a double-clicked or resent form does its action once', async () => {
    const { cookie } = await signIn()
    const job = await newJob()
    const html = await (await get(`/jobs/${job.id}`, cookie)).text()
    const fields = { ...formOf(html, 'note'), note: 'Bring the jump pack' }
    const [a, b] = await Promise.all([post(cookie, job.id, 'note', fields), post(cookie, job.id, 'note', fields)])
    expect([a.status, b.status]).toEqual([303, 303])
    expect((await apiGet(`/jobs/${job.id}/events`)).data.filter((e: any) => e.type === 'job.note_added')).toHaveLength(1)
  })

  test('Add photo keeps a real image in the database, shows it to the account only, and refuses what is not an image', async () => {
    const { cookie, userId } = await signIn()
    const job = await newJob()
    const html = await (await get(`/jobs/${job.id}`, cookie)).text()
    const hidden = formOf(html, 'photos')
    const upload = (bytes: Uint8Array, name: string, type: string, c = cookie) => {
      const fd = new FormData()
      for (const [k, v] of Object.entries(hidden)) fd.set(k, v)
      fd.set('photo', new File([bytes as Uint8Array<ArrayBuffer>], name, { type }))
      return api.raw(new Request(`${ORIGIN}/jobs/${job.id}/photos`, { method: 'POST', redirect: 'manual', headers: { cookie: c, origin: ORIGIN }, body: fd }))
    }
    // Text calling itself a JPEG: refused beside the field, nothing written.
    const fake = await upload(new TextEncoder().encode('<svg onload=alert(1)>'), 'evil.jpg', 'image/jpeg')
    expect(fake.status).toBe(422)
    expect(await fake.text()).toMatch(/id="f-photo-error">must be a JPEG, PNG or WebP image</)
    expect((await apiGet(`/jobs/${job.id}/events`)).data).toHaveLength(1)

    const res = await upload(PNG, 'bumper.png', 'application/octet-stream')
    expect(res.status).toBe(303)
    const event = await lastEvent(job.id)
    expect(event).toMatchObject({ type: 'job.photo_added', actor: 'dispatcher', detail: { content_type: 'image/png', bytes: PNG.length, by: 'dispatcher', user_id: userId } })
    const src = `/jobs/${job.id}/photos/${event.detail.photo_id}`
    const page = await (await get(`/jobs/${job.id}`, cookie)).text()
    expect(page).toContain(`<a href="${src}"><img src="${src}/thumb"`)
    // A PNG's thumbnail is a WebP (it keeps transparency, which JPEG cannot); asked again with its tag, or with *, 304.
    const thumb = await get(`${src}/thumb`, cookie)
    expect({ status: thumb.status, type: thumb.headers.get('content-type'), cache: thumb.headers.get('cache-control') }).toEqual({ status: 200, type: 'image/webp', cache: 'private, no-cache' })
    for (const tag of [thumb.headers.get('etag')!, '*']) {
      const again = await api.raw(new Request(`${ORIGIN}${src}/thumb`, { headers: { cookie, 'if-none-match': tag } }))
      expect({ tag, status: again.status }).toEqual({ tag, status: 304 })
    }
    const img = await get(src, cookie)
    expect(img.status).toBe(200)
    expect(img.headers.get('content-type')).toBe('image/png')
    expect(new Uint8Array(await img.arrayBuffer())).toEqual(PNG)
    // Kept by the browser only to ask again (after Sign out the next look is refused, not shown from its cache); asking again with its tag costs no bytes.
    expect(img.headers.get('cache-control')).toBe('private, no-cache')
    const again = await api.raw(new Request(ORIGIN + src, { headers: { cookie, 'if-none-match': img.headers.get('etag')! } }))
    expect({ status: again.status, bytes: (await again.arrayBuffer()).byteLength }).toEqual({ status: 304, bytes: 0 })
    // Not to another account, not without a session.
    const { cookie: theirs } = await signIn('eve@other.example', api.account('Other Towing'))
    expect((await get(src, theirs)).status).toBe(404)
    expect((await get(`${src}/thumb`, theirs)).status).toBe(404)
    expect((await api.raw(new Request(ORIGIN + src, { redirect: 'manual' }))).status).toBe(303)
    expect((await api.raw(new Request(`${ORIGIN}${src}/thumb`, { redirect: 'manual' }))).status).toBe(303)
    expect((await upload(PNG, 'x.png', 'image/png', theirs)).status).toBe(404)
  })

  test('WebP photos (lossy and lossless) are kept as image/webp; a picture declaring more than 100 megapixels is refused beside Photo, whatever its few bytes', async () => {
    const { cookie } = await signIn()
    const job = await newJob()
    const upload = async (bytes: Uint8Array) => {
      // Each upload from a freshly loaded page: its form key is new.
      const fd = new FormData()
      for (const [k, v] of Object.entries(formOf(await (await get(`/jobs/${job.id}`, cookie)).text(), 'photos'))) fd.set(k, v)
      fd.set('photo', new File([bytes as Uint8Array<ArrayBuffer>], 'p', { type: 'application/octet-stream' }))
      return api.raw(new Request(`${ORIGIN}/jobs/${job.id}/photos`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: ORIGIN }, body: fd }))
    }
    const bytesOf = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
    for (const webp of ['UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA', 'UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==']) {
      expect((await upload(bytesOf(webp))).status).toBe(303)
      expect(await lastEvent(job.id)).toMatchObject({ type: 'job.photo_added', detail: { content_type: 'image/webp' } })
    }
    const count = (await apiGet(`/jobs/${job.id}/events`)).data.length
    // A PNG header (checksum right) declaring 30000 x 30000: 900 megapixels for any page that shows it.
    const ihdr = new Uint8Array(17)
    ihdr.set(new TextEncoder().encode('IHDR'))
    new DataView(ihdr.buffer).setUint32(4, 30_000)
    new DataView(ihdr.buffer).setUint32(8, 30_000)
    ihdr.set([8, 2, 0, 0, 0], 12)
    const crc = new Uint8Array(4)
    new DataView(crc.buffer).setUint32(0, Bun.hash.crc32(ihdr))
    const bomb = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, ...ihdr, ...crc, ...PNG.subarray(33)])
    const refused = await upload(bomb)
    expect(refused.status).toBe(422)
    expect(await refused.text()).toContain('id="f-photo-error">must be at most 100 megapixels (this one is 30000 × 30000)</p>')
    expect((await apiGet(`/jobs/${job.id}/events`)).data).toHaveLength(count)
  })

  test('a photo over 10 MB sent without the page\'s script gets the job page back (413) with the message beside Photo, nothing written', async () => {
    const { cookie } = await signIn()
    const job = await newJob()
    const fd = new FormData()
    for (const [k, v] of Object.entries(formOf(await (await get(`/jobs/${job.id}`, cookie)).text(), 'photos'))) fd.set(k, v)
    const big = new Uint8Array(10 * 1024 * 1024 + 1)
    big.set([0xff, 0xd8, 0xff, 0xe0])
    fd.set('photo', new File([big], 'huge.jpg', { type: 'image/jpeg' }))
    const before = (await apiGet(`/jobs/${job.id}/events`)).data
    const res = await api.raw(new Request(`${ORIGIN}/jobs/${job.id}/photos`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: ORIGIN }, body: fd }))
    expect(res.status).toBe(413)
    expect(res.headers.get('connection')).toBe('close')
    const html = await res.text()
    expect(html).toMatch(/id="f-photo-error">is larger than 10 MB: choose a smaller photo</)
    expect(html).toMatch(/role="alert"[^>]*>Nothing was done: correct the field marked below\./)
    expect(html).toContain('<h2>Photos</h2>')
    expect((await apiGet(`/jobs/${job.id}/events`)).data).toEqual(before)
  })

  test("a signature the driver captured is listed with who and when, its image for the account's sessions only", async () => {
    const { cookie } = await signIn()
    const truck = addUnit(api.db, api.clock, { accountId: api.accountId, name: 'Truck 9' })
    const job = await newJob()
    await api.request('POST', `/api/v1/jobs/${job.id}/assign`, { key, body: { unit_id: truck.id } })
    const driver = api.contexts.forDriver({ accountId: api.accountId, jobId: job.id, unitId: truck.id })
    const sig = captureSignature(driver, job.id, { signerName: 'Jo <Bloggs>', png: PNG })
    const html = await (await get(`/jobs/${job.id}`, cookie)).text()
    const src = `/jobs/${job.id}/signatures/${sig.id}`
    expect(html).toContain(`<a href="${src}"><img src="${src}" alt="Signature of Jo &lt;Bloggs&gt;"`)
    expect(html).toContain('Jo &lt;Bloggs&gt; · captured by Truck 9')
    expect(html).toContain('Signature of Jo &lt;Bloggs&gt;</p>')
    const img = await get(src, cookie)
    expect(img.headers.get('content-type')).toBe('image/png')
    expect(new Uint8Array(await img.arrayBuffer())).toEqual(PNG)
    const { cookie: theirs } = await signIn('eve@other.example', api.account('Other Towing'))
    expect((await get(src, theirs)).status).toBe(404)
  })

  test('a form posted from another origin is refused and writes nothing', async () => {
    const { cookie } = await signIn()
    const job = await newJob()
    const html = await (await get(`/jobs/${job.id}`, cookie)).text()
    const res = await post(cookie, job.id, 'cancel', { ...formOf(html, 'cancel'), to: 'cancelled', reason: 'forged request' }, 'http://evil.test')
    expect(res.status).toBe(403)
    expect((await apiGet(`/jobs/${job.id}`)).status).toBe('confirmed')
  })
})

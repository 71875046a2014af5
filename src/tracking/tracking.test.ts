/**
 * The customer's tracking page `/t/{token}` (pages.md "The tracking page"): its state per status,
 * what it never shows (page and JSON), each action with actor customer, the rating once per run,
 * the Pay route, the link's lifetime, and the live stream. Through the HTTP API, in process.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { readSse } from '../../test/sse-reader'
import { bringTo, call, makeJob, makeUnit, NO_LIMITS, snapshot, expectNothingWritten } from '../../test/jobs-helpers'
import { updateAccount } from '../accounts/update-account'
import { addNote } from '../jobs/add-note'
import { replaceTrackingLink } from '../jobs/replace-tracking-link'
import { archiveJob } from '../jobs/archive-job'
import { randomBase62 } from '../platform/ids'
import { createUser } from '../users/create-user'
import { issueInvoice } from '../invoices/issue-invoice'
import { recordPayment } from '../invoices/record-payment'
import { payLinkResponse } from './pay-link'
import { TRACKING_STEPS } from './tracking-state'
import { TRACKING_POSTS_PER_MINUTE } from './tracking.routes'

const ORIGIN = 'http://towline.test'
const DAY = 86_400_000
let api: TestApi
let key: string
beforeAll(() => {
  api = startTestApi(NO_LIMITS)
  key = api.key('all')
  updateAccount(api.contexts.forOperator(api.accountId), { name: 'Joe & Sons Towing', phone: '+15035550100' })
})
afterAll(() => api.close())

const pathOf = (url: string) => new URL(url).pathname
const dispatcher = () => api.contexts.forDispatcher({ userId: 'usr_secretdispatcher', role: 'dispatcher', accountId: api.accountId })

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await api.raw(new Request(ORIGIN + path, { headers }))
  return { status: res.status, type: res.headers.get('content-type') ?? '', location: res.headers.get('location'), text: await res.text() }
}
async function stateOf(job: { tracking_url: string }) {
  const res = await get(`${pathOf(job.tracking_url)}/state`)
  expect({ status: res.status, json: res.type.startsWith('application/json') }).toEqual({ status: 200, json: true })
  return JSON.parse(res.text)
}
/** Posts a form as the page does (same origin unless told otherwise). */
async function post(path: string, fields: Record<string, string>, origin = ORIGIN) {
  const res = await api.raw(new Request(ORIGIN + path, { method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }))
  return { status: res.status, location: res.headers.get('location'), text: await res.text() }
}
async function eventsOf(jobId: string): Promise<any[]> {
  return (await call(api, key, 'GET', `/jobs/${jobId}/events?limit=100`)).body.data
}
/** Reports the unit's position through the OsmAnd feed, as its phone does. */
async function ping(deviceId: string, lat: number, lng: number) {
  const res = await api.request('GET', `/osmand?id=${deviceId}&lat=${lat}&lon=${lng}&timestamp=${Math.floor(api.clock.now() / 1000)}`)
  expect(res.status).toBe(200)
}
/** The label of the list item carrying aria-current="step". */
const currentStep = (html: string) => [...html.matchAll(/<li[^>]*aria-current="step"[^>]*>([^<]*)<\/li>/g)].map((m) => m[1])

describe('the page and its state, per status', () => {
  const LABEL: Record<string, string> = { pending: 'Pending', confirmed: 'Confirmed', dispatched: 'Dispatched', en_route: 'En route', on_scene: 'On scene', towing: 'Towing', at_destination: 'At destination', completed: 'Completed', cancelled: 'Cancelled', goa: 'GOA' }

  for (const status of [...TRACKING_STEPS, 'cancelled', 'goa']) {
    test(`${status}: the steps mark it current; the truck's position only while dispatched or en route`, async () => {
      const { job, unit } = await bringTo(api, key, status, { withUnit: ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed'].includes(status) })
      if (unit) await ping(unit.deviceId, 45.51234, -122.65432)
      const state = await stateOf(job)
      const page = await get(pathOf(job.tracking_url))
      expect(page.status).toBe(200)
      expect(page.type).toStartWith('text/html')
      expect(state.status).toBe(status)
      expect(state.steps.filter((s: any) => s.state === 'current').map((s: any) => s.label)).toEqual([LABEL[status]])
      // A step before the current one is done when the job went through it (its milestone), else
      // skipped: a job taken as confirmed was never pending.
      const before = state.steps.slice(0, state.steps.findIndex((s: any) => s.state === 'current'))
      const stamps = (await (await api.request('GET', `/api/v1/jobs/${job.id}`, { key })).json() as any).timestamps
      expect(before.map((s: any) => s.state)).toEqual(before.map((s: any) => (stamps[`${s.status}_at`] ? 'done' : 'skipped')))
      if (before.length) expect(before[0].state).toBe('skipped')
      expect(currentStep(page.text)).toEqual([LABEL[status]])
      // Every status label of the run is listed, in order.
      const labels = state.steps.map((s: any) => s.label)
      expect(labels.slice(0, 7)).toEqual(['Pending', 'Confirmed', 'Dispatched', 'En route', 'On scene', 'Towing', 'At destination'])
      expect(labels[7]).toBe(status === 'cancelled' || status === 'goa' ? LABEL[status] : 'Completed')
      const truckShown = status === 'dispatched' || status === 'en_route'
      expect(state.truck === null).toBe(!truckShown)
      if (truckShown) {
        expect(state.truck).toMatchObject({ lat: 45.51234, lng: -122.65432 })
        expect(page.text).toContain('data-lat="45.51234"')
      } else {
        // Neither the page nor its JSON carries the position, in any form.
        for (const body of [page.text, JSON.stringify(state)]) {
          expect(body).not.toContain('45.51')
          expect(body).not.toContain('122.65')
        }
        expect(page.text).toMatch(/id="truck-map"[^>]*hidden/)
      }
      if (unit) expect(state.unit).toEqual({ name: unit.name })
      expect(state.company).toEqual({ name: 'Joe & Sons Towing', phone: '+15035550100', time_zone: 'UTC' })
      expect(page.text).toContain('href="tel:+15035550100"')
      if (status === 'towing') {
        expect(state.next).toBe("Your vehicle is on the truck, going to Joe's Garage, 1200 SE Grand Ave.")
        expect(page.text).toContain('Your vehicle is on the truck, going to Joe&#39;s Garage, 1200 SE Grand Ave.')
      }
      if (status === 'at_destination' || status === 'completed') {
        expect(state.dropped_off_at).toBe(new Date(api.clock.now()).toISOString())
        expect(page.text).toContain('<dt>Dropped off</dt>')
      } else expect(state.dropped_off_at).toBeNull()
      if (status === 'cancelled') expect(page.text).toContain('This job was cancelled.')
      if (status === 'goa') expect(state.next).toContain('gone on arrival')
      // The rating form is there once the job is completed, and only then.
      expect(page.text.includes('<legend>Rating</legend>')).toBe(status === 'completed')
      expect(page.text.includes('Share my location</button>')).toBe(!['completed', 'cancelled', 'goa'].includes(status))
      expect(page.text).toContain('Send</button>')
    })
  }

  test('the ETA shows until the truck is there; customer-visible notes show, internal ones never', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const eta = new Date(api.clock.now() + 25 * 60_000).toISOString()
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { eta_at: eta })).status).toBe(200)
    await call(api, key, 'POST', `/jobs/${job.id}/notes`, { text: 'Driver will call when close', customer_visible: true })
    await call(api, key, 'POST', `/jobs/${job.id}/notes`, { text: 'INTERNAL gate code 4471', customer_visible: false })
    const state = await stateOf(job)
    expect(state.eta_at).toBe(eta)
    expect(state.notes.map((n: any) => n.text)).toEqual(['Driver will call when close'])
    const page = await get(pathOf(job.tracking_url))
    expect(page.text).toContain(`datetime="${eta}"`)
    expect(page.text).toContain('Driver will call when close')
    expect(page.text).not.toContain('4471')
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    expect((await stateOf(job)).eta_at).toBeNull()
  })
})

describe('privacy: never on the page or in its JSON', () => {
  test('the driver\'s phone, internal notes, prices, payment method, unit, key and user ids, the driver link and other jobs', async () => {
    const unit = makeUnit(api, { name: 'Flatbed 7', driverPhone: '+15035559876' })
    const job = await makeJob(api, key, { quote_cents: 12345, customer: { name: 'Ann Lee', phone: '(503) 555-0142', sms_consent: true } })
    expect((await call(api, key, 'POST', `/jobs/${job.id}/assign`, { unit_id: unit.id })).status).toBe(200)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { final_price_cents: 67890, payment_method: 'zelle_private_pm' })).status).toBe(200)
    const note = addNote(dispatcher(), job.id, { text: 'Internal: customer was rude, bill extra', customer_visible: false })
    addNote(dispatcher(), job.id, { text: 'We are on our way', customer_visible: true })
    await ping(unit.deviceId, 45.5, -122.6)
    const other = await makeJob(api, key, { customer: { name: 'Zebediah Otherjob', sms_consent: false } })
    const driverToken = (api.db.$client.query('SELECT driver_token_sealed FROM jobs WHERE id = ?').get(job.id) as any).driver_token_sealed
    const { driverUrlOf } = await import('../jobs/job-links')
    const driverUrl = driverUrlOf(api.links, { driverTokenSealed: driverToken })!
    const keyId = (api.db.$client.query('SELECT id FROM api_keys LIMIT 1').get() as any).id

    const state = await stateOf(job)
    const page = await get(pathOf(job.tracking_url))
    expect(page.text).toContain('We are on our way')
    expect(page.text).toContain('Flatbed 7')
    const forbidden = [
      '+15035559876', '555-9876', '5559876', // the driver's phone
      'customer was rude', note.id, // an internal note
      '12345', '123.45', '67890', '678.90', // quote and final price
      'zelle_private_pm', // payment method
      unit.id, keyId, 'usr_secretdispatcher', // unit, key and user ids
      pathOf(driverUrl).slice(3), // the driver's link
      'Zebediah', other.id, // another job
      '555-0142', // the customer's own phone is not shown either
    ]
    for (const [where, body] of [['json', JSON.stringify(state)], ['html', page.text]] as const) {
      for (const secret of forbidden) expect({ where, secret, found: body.includes(secret) }).toEqual({ where, secret, found: false })
    }
    // The state's fields are exactly these: nothing private can hide under another name.
    expect(Object.keys(state).sort()).toEqual(['can_share_location', 'company', 'destination', 'dropped_off_at', 'eta_at', 'invoice', 'next', 'notes', 'object', 'rating', 'status', 'status_label', 'steps', 'stream_position', 'truck', 'unit'])
    expect(state.invoice).toBeNull()
    expect(page.text).not.toContain('>Pay</a>')
  })
})

describe('the customer\'s actions', () => {
  test('Share my location: job.customer_located with actor customer and lat, lng, accuracy_m; out-of-range values refused, nothing written', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const path = pathOf(job.tracking_url)
    const ok = await post(`${path}/location`, { lat: '45.5231', lng: '-122.6765', accuracy_m: '12.5' })
    expect({ status: ok.status, location: ok.location }).toEqual({ status: 303, location: `${path}?done=location` })
    const last = (await eventsOf(job.id)).at(-1)
    expect(last).toMatchObject({ type: 'job.customer_located', actor: 'customer', detail: { lat: 45.5231, lng: -122.6765, accuracy_m: 12.5 } })
    expect((await get(ok.location!)).text).toContain('Your location was sent.')

    const before = await snapshot(api, key, job.id)
    for (const fields of [{ lat: '91', lng: '0', accuracy_m: '5' }, { lat: '45', lng: '-181', accuracy_m: '' }, { lat: '', lng: '', accuracy_m: '' }, { lat: 'NaN', lng: '1', accuracy_m: '' }, { lat: '1', lng: '1', accuracy_m: '-3' }, { lat: '1e999', lng: '1', accuracy_m: '' }]) {
      const res = await post(`${path}/location`, fields)
      expect({ fields, status: res.status }).toEqual({ fields, status: 422 })
      expect(res.text).toMatch(/<div class="form-alert" role="alert" data-form-alert tabindex="-1" autofocus>Your phone did not give a usable location/)
    }
    await expectNothingWritten(api, key, before)
  })

  test('a link sends 20 at once, then one every 3 seconds: the next is 429 with Retry-After and writes nothing, a new link does not reset it, and the allowance refills', async () => {
    const { job } = await bringTo(api, key, 'confirmed')
    const path = pathOf(job.tracking_url)
    for (let i = 0; i < TRACKING_POSTS_PER_MINUTE; i++) expect((await post(`${path}/message`, { message: `Still here ${i}` })).status).toBe(303)
    const before = await snapshot(api, key, job.id)
    const over = await post(`${path}/message`, { message: 'One too many' })
    expect(over.status).toBe(429)
    expect(over.text).toContain('Too many requests from this page. Nothing was sent; please wait 3 seconds and try again.')
    await expectNothingWritten(api, key, before)
    replaceTrackingLink(dispatcher(), job.id)
    const fresh = pathOf((await call(api, key, 'GET', `/jobs/${job.id}`)).body.tracking_url)
    expect(fresh).not.toBe(path)
    expect((await post(`${fresh}/message`, { message: 'From the new link' })).status).toBe(429)
    api.clock.advance(3_000)
    expect((await post(`${fresh}/message`, { message: 'After a pause' })).status).toBe(303)
  })

  test('Message + Send: job.customer_message with detail.text and via tracking_page; a blank or too long one is refused beside the field, text kept', async () => {
    const { job } = await bringTo(api, key, 'confirmed')
    const path = pathOf(job.tracking_url)
    const ok = await post(`${path}/message`, { message: '  I am by the blue <gate>  ' })
    expect({ status: ok.status, location: ok.location }).toEqual({ status: 303, location: `${path}?done=message` })
    expect((await eventsOf(job.id)).at(-1)).toMatchObject({ type: 'job.customer_message', actor: 'customer', detail: { text: 'I am by the blue <gate>', via: 'tracking_page' } })
    const before = await snapshot(api, key, job.id)
    const blank = await post(`${path}/message`, { message: '   ' })
    expect(blank.status).toBe(422)
    expect(blank.text).toContain('<p class="field-error" id="f-message-error">Write a message first.</p>')
    const long = await post(`${path}/message`, { message: `Where ${'x'.repeat(1001)}` })
    expect(long.status).toBe(422)
    expect(long.text).toContain('at most 1000 characters')
    expect(long.text).toContain(`>Where ${'x'.repeat(1001)}</textarea>`)
    await expectNothingWritten(api, key, before)
  })

  test('the job page shows the customer\'s messages by text and from the tracking page together, with their location and rating', async () => {
    const { job } = await bringTo(api, key, 'on_scene')
    const path = pathOf(job.tracking_url)
    const { addCustomerMessage } = await import('../jobs/add-customer-message')
    addCustomerMessage(api.contexts.forCustomer({ accountId: api.accountId, jobId: job.id }), job.id, { text: 'Texted: running late', via: 'sms', from: '+15035550142' })
    expect((await post(`${path}/message`, { message: 'Typed: by the gate' })).status).toBe(303)
    expect((await post(`${path}/location`, { lat: '45.5', lng: '-122.6', accuracy_m: '30' })).status).toBe(303)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'completed' })).status).toBe(200)
    expect((await post(`${path}/rating`, { rating: '5', comment: 'Great' })).status).toBe(303)
    await createUser(api.contexts.forOperator(api.accountId), { email: 'disp@example.com', role: 'dispatcher', password: 'correct horse battery' })
    const login = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=disp%40example.com&password=correct+horse+battery' }))
    expect(login.status).toBe(303)
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!
    const jobPage = await get(`/jobs/${job.id}`, { cookie })
    expect(jobPage.status).toBe(200)
    expect(jobPage.text).toContain('Customer wrote by text: Texted: running late')
    expect(jobPage.text).toContain('Customer wrote on the tracking page: Typed: by the gate')
    expect(jobPage.text).toContain('Customer shared their location: 45.50000, -122.60000 (within 30 m)')
    expect(jobPage.text).toContain('Customer rated the job 5 out of 5: Great')
  })

  test('a post from another origin is refused (403) and writes nothing', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const path = pathOf(job.tracking_url)
    const before = await snapshot(api, key, job.id)
    for (const [action, fields] of [['message', { message: 'hi' }], ['rating', { rating: '5' }], ['location', { lat: '1', lng: '1' }]] as const) {
      const res = await post(`${path}/${action}`, fields as Record<string, string>, 'http://evil.test')
      expect({ action, status: res.status }).toEqual({ action, status: 403 })
    }
    await expectNothingWritten(api, key, before)
  })

  test('Share my location is refused once the job is finished (409), nothing written', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const before = await snapshot(api, key, job.id)
    const res = await post(`${pathOf(job.tracking_url)}/location`, { lat: '1', lng: '1', accuracy_m: '' })
    expect(res.status).toBe(409)
    expect(res.text).toContain('This job is finished')
    await expectNothingWritten(api, key, before)
  })
})

describe('an archived job', () => {
  test('refuses every write its tracking link can make: Share my location, Message and Pay answer 409 with the page saying why; nothing is written', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const done = await bringTo(api, key, 'completed')
    issueInvoice(dispatcher(), done.job.id, { lines: [{ description: 'Tow', amount_cents: 18500 }] })
    archiveJob(dispatcher(), job.id)
    archiveJob(dispatcher(), done.job.id)
    const before = [await snapshot(api, key, job.id), await snapshot(api, key, done.job.id)]
    const answers = [
      await post(`${pathOf(job.tracking_url)}/location`, { lat: '45.5', lng: '-122.6', accuracy_m: '10' }),
      await post(`${pathOf(job.tracking_url)}/message`, { message: 'Are you close?' }),
      await get(`${pathOf(done.job.tracking_url)}/pay`),
    ]
    for (const res of answers) {
      expect({ status: res.status, location: res.location }).toEqual({ status: 409, location: null })
      expect(res.text).toContain('This job is archived')
    }
    for (const b of before) await expectNothingWritten(api, key, b)
  })
})

describe('the rating', () => {
  test('only once completed; sets rating, rating_comment, rated_at and emits job.rating_received; one per run; a reopen clears it and the next run may be rated', async () => {
    const { job } = await bringTo(api, key, 'towing')
    const path = pathOf(job.tracking_url)
    const early = await snapshot(api, key, job.id)
    const tooEarly = await post(`${path}/rating`, { rating: '5' })
    expect(tooEarly.status).toBe(409)
    await expectNothingWritten(api, key, early)

    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'completed' })).status).toBe(200)
    const page = await get(path)
    expect(page.text).toContain('<legend>Rating</legend>')
    expect([...page.text.matchAll(/<input type="radio"[^>]*name="rating" value="(\d)"/g)].map((m) => m[1])).toEqual(['1', '2', '3', '4', '5'])
    expect(page.text).toContain('<label for="f-comment">Comment</label>')

    const bad = await snapshot(api, key, job.id)
    for (const rating of ['0', '6', '4.5', '', 'five']) {
      const res = await post(`${path}/rating`, { rating, comment: 'kept text' })
      expect({ rating, status: res.status }).toEqual({ rating, status: 422 })
      expect(res.text).toContain('<p class="field-error" id="f-rating-error">Choose a rating from 1 to 5.</p>')
      expect(res.text).toContain('>kept text</textarea>')
    }
    await expectNothingWritten(api, key, bad)

    const ok = await post(`${path}/rating`, { rating: '4', comment: 'Quick and kind' })
    expect({ status: ok.status, location: ok.location }).toEqual({ status: 303, location: `${path}?done=rating` })
    const rated = (await call(api, key, 'GET', `/jobs/${job.id}`)).body
    expect({ rating: rated.rating, comment: rated.rating_comment, at: rated.rated_at }).toEqual({ rating: 4, comment: 'Quick and kind', at: new Date(api.clock.now()).toISOString() })
    expect((await eventsOf(job.id)).at(-1)).toMatchObject({ type: 'job.rating_received', actor: 'customer', detail: { rating: 4, comment: 'Quick and kind' } })
    const after = await get(`${path}?done=rating`)
    expect(after.text).toContain('You rated this job 4 out of 5.')
    expect(after.text).not.toContain('<legend>Rating</legend>')

    const once = await snapshot(api, key, job.id)
    const second = await post(`${path}/rating`, { rating: '1' })
    expect(second.status).toBe(409)
    expect(second.text).toContain('already rated')
    await expectNothingWritten(api, key, once)

    expect((await call(api, key, 'POST', `/jobs/${job.id}/reopen`, { reason: 'Customer called back' })).status).toBe(200)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body).toMatchObject({ rating: null, rating_comment: null, rated_at: null })
    expect((await stateOf(job)).rating).toEqual({ open: false, value: null, comment: null, rated_at: null })
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'completed' })).status).toBe(200)
    expect((await post(`${path}/rating`, { rating: '2' })).status).toBe(303)
    expect((await call(api, key, 'GET', `/jobs/${job.id}`)).body.rating).toBe(2)
  })
})

describe('Pay', () => {
  test('with no invoice the route says there is nothing to pay and emits nothing', async () => {
    updateAccount(api.contexts.forOperator(api.accountId), { paymentUrl: 'https://pay.example.com/towline' })
    const { job } = await bringTo(api, key, 'completed')
    const before = await snapshot(api, key, job.id)
    const res = await get(`${pathOf(job.tracking_url)}/pay`)
    expect(res.status).toBe(200)
    expect(res.text).toContain('<h1>Nothing to pay</h1>')
    await expectNothingWritten(api, key, before)
  })

  test('given an issued unpaid invoice and the payment link: job.payment_link_opened (actor customer), then 303 with the invoice number and the amount due', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const invoice = issueInvoice(dispatcher(), job.id, { lines: [{ description: 'Tow', amount_cents: 18505 }] })
    recordPayment(dispatcher(), invoice.id, { amountCents: 5000, method: 'cash' })
    updateAccount(api.contexts.forOperator(api.accountId), { paymentUrl: 'https://pay.example.com/towline?ref=joe' })
    const res = await get(`${pathOf(job.tracking_url)}/pay`)
    expect(res.status).toBe(303)
    expect(res.location).toBe(`https://pay.example.com/towline?ref=joe&invoice=${invoice.number}&amount=135.05`)
    const opened = (await eventsOf(job.id)).at(-1)
    expect(opened).toMatchObject({ type: 'job.payment_link_opened', actor: 'customer' })
    expect(opened.detail).toEqual({ invoice_id: invoice.id, invoice_number: invoice.number, total_cents: 18505, amount_due_cents: 13505 })
    updateAccount(api.contexts.forOperator(api.accountId), { paymentUrl: null })

    const before = await snapshot(api, key, job.id)
    const ctx = api.contexts.forCustomer({ accountId: api.accountId, jobId: job.id })
    expect(payLinkResponse(ctx, job.id, null, 'https://pay.example.com/towline', '/t/x/invoice')).toBeNull()
    await expectNothingWritten(api, key, before)
  })
})

describe('the link\'s lifetime', () => {
  test('works until the setting\'s 7 days after the job finished, then 410 on the page, its JSON, stream and forms', async () => {
    const { job } = await bringTo(api, key, 'completed')
    const path = pathOf(job.tracking_url)
    api.clock.advance(7 * DAY)
    expect((await get(path)).status).toBe(200)
    api.clock.advance(1)
    const page = await get(path)
    expect(page.status).toBe(410)
    expect(page.text).toContain('This tracking link has expired')
    for (const p of [`${path}/state`, `${path}/events`, `${path}/pay`]) expect({ p, status: (await get(p)).status }).toEqual({ p, status: 410 })
    expect((await post(`${path}/message`, { message: 'hello?' })).status).toBe(410)
  })

  test('a replaced link answers 410 at once; an unknown token answers exactly as an address with no page', async () => {
    const job = await makeJob(api, key)
    replaceTrackingLink(dispatcher(), job.id)
    const gone = await get(pathOf(job.tracking_url))
    expect(gone.status).toBe(410)
    expect(gone.text).toContain('This tracking link was replaced.')
    const nowhere = await get('/t/nowhere/at/all/here')
    const sentence = (html: string) => /<p role="alert">([^<]*)<\/p>/.exec(html)?.[1]
    for (const p of [`/t/${randomBase62(24)}`, '/t/short', `/t/${randomBase62(24)}/state`]) {
      const res = await get(p)
      expect(res.status).toBe(404)
      if (!p.endsWith('/state')) expect(sentence(res.text)).toBe(sentence(nowhere.text))
    }
    const fresh = (await call(api, key, 'GET', `/jobs/${job.id}`)).body
    expect((await get(pathOf(fresh.tracking_url))).status).toBe(200)
  })
})


describe('live', () => {
  test('the stream sends the new state on each change of its job only, the page\'s markup with it; resumes by Last-Event-ID', async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const path = pathOf(job.tracking_url)
    const res = await api.raw(new Request(`${ORIGIN}${path}/events`))
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    const s = readSse(res)
    await s.until(() => s.messages.some((m) => m.event === 'hello'))
    await makeJob(api, key, { customer: { name: 'Somebody Else', sms_consent: false } })
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' })).status).toBe(200)
    await s.until(() => s.messages.some((m) => m.event === 'state'))
    const states = s.messages.filter((m) => m.event === 'state')
    expect(states.length).toBe(1) // the other job's creation sent nothing
    expect(states[0]!.data.state.status).toBe('en_route')
    expect(states[0]!.data.live_html).toContain('aria-current="step">En route</li>')
    expect(JSON.stringify(states[0]!.data)).not.toContain('Somebody Else')
    const lastId = states[0]!.id!
    await s.cancel()

    // Missed while away: on reconnect the current state comes at once.
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'on_scene' })).status).toBe(200)
    const again = readSse(await api.raw(new Request(`${ORIGIN}${path}/events`, { headers: { 'last-event-id': lastId } })))
    await again.until(() => again.messages.some((m) => m.event === 'state'))
    const resumed = again.messages.find((m) => m.event === 'state')!
    expect(resumed.data.state.status).toBe('on_scene')
    expect(resumed.data.state.truck).toBeNull()
    expect(Number(resumed.id)).toBeGreaterThan(Number(lastId))
    await again.cancel()
  })

  test("the stream's positions are the job's own event count, not the service's: other jobs' events move nothing a tracking link shows", async () => {
    const { job } = await bringTo(api, key, 'dispatched')
    const path = pathOf(job.tracking_url)
    const own = () => eventsOf(job.id).then((e) => e.length)
    const before = await stateOf(job)
    expect(before.stream_position).toBe(await own())
    // Busy elsewhere: twenty other jobs and their events.
    for (let i = 0; i < 20; i++) await makeJob(api, key, { customer: { name: `Other ${i}`, sms_consent: false } })
    const page = await get(path)
    expect(page.text).toContain(`data-position="${before.stream_position}"`)
    expect((await stateOf(job)).stream_position).toBe(before.stream_position)
    const s = readSse(await api.raw(new Request(`${ORIGIN}${path}/events?after=${before.stream_position}`)))
    await s.until(() => s.messages.some((m) => m.event === 'hello'))
    expect(s.messages.find((m) => m.event === 'hello')!.data.position).toBe(before.stream_position)
    expect((await call(api, key, 'PATCH', `/jobs/${job.id}`, { status: 'en_route' })).status).toBe(200)
    await s.until(() => s.messages.some((m) => m.event === 'state'))
    expect(Number(s.messages.find((m) => m.event === 'state')!.id)).toBe(await own())
    await s.cancel()
  })

  test('a link replaced while its page is open: the stream says so (gone) and ends', async () => {
    const { job } = await bringTo(api, key, 'en_route')
    const s = readSse(await api.raw(new Request(`${ORIGIN}${pathOf(job.tracking_url)}/events`)))
    await s.until(() => s.messages.some((m) => m.event === 'hello'))
    replaceTrackingLink(dispatcher(), job.id)
    await s.until(() => s.messages.some((m) => m.event === 'gone'))
    expect(s.messages.find((m) => m.event === 'gone')!.data.message).toBe('This tracking link was replaced. Ask Joe & Sons Towing for the new one.')
    await s.until(() => s.ended())
  })
})

/**
 * The directory's private fields (rates, billing address, internal notes) never leave the
 * dashboard: commercial accounts are made holding unique marker strings in them, jobs are
 * linked to them, and then every GET of the OpenAPI document (with real ids), the job write
 * responses, /me, the timeline, webhook deliveries as the receiver got them (bodies and headers)
 * and the delivery log are read: no marker appears anywhere.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApi, until, type TestApi } from '../../test/kit'
import { makeTestCa, startReceiver } from '../../test/https-receiver'
import { kindOf, makeResources } from '../../test/resources'
import { pathParams } from '../../test/scope-checks'
import { createLogger } from '../platform/log'
import { DeliveryScheduler } from '../webhooks/scheduler'
import { createCommercialAccount } from './create-commercial-account'
import { updateCommercialAccount } from './update-commercial-account'

const ca = makeTestCa()
const receiver = startReceiver(ca)
let api: TestApi
let scheduler: DeliveryScheduler
beforeAll(() => {
  api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_RATE_LIMIT_READS: '100000', TOWLINE_RATE_LIMIT_WRITES: '100000' }, { webhookSend: { tls: { ca: ca.ca } } })
  scheduler = new DeliveryScheduler({ db: api.db, clock: api.clock, logger: createLogger('silent'), schedule: [1_000, 2_000, 3_000, 4_000, 5_000, 6_000], send: { timeoutMs: 5_000, allowPrivate: true, tls: { ca: ca.ca } }, owner: 'test-host:1', links: api.links })
})
afterAll(async () => {
  await scheduler?.stop(0)
  receiver.stop()
  api?.close()
})

const nonce = crypto.randomUUID().slice(0, 8)
const MARKERS = [`rates-marker-${nonce}`, `billing-marker-${nonce}`, `notes-marker-${nonce}`, `rates2-marker-${nonce}`, `billing2-marker-${nonce}`, `notes2-marker-${nonce}`]

test('no API response, header or webhook delivery carries a commercial account\'s rates, billing address or internal notes', async () => {
  const key = api.key('all')
  const operator = api.contexts.forOperator(api.accountId)
  const club = createCommercialAccount(operator, {
    name: 'AAA Oregon', kind: 'motor_club', contacts: [{ name: 'Dispatch desk', role: 'dispatch', phone: '+15035550150', email: 'desk@aaa.example' }],
    rates: `hook 95.00 ${MARKERS[0]}`, billing_address: `PO Box 1 ${MARKERS[1]}`, internal_notes: `slow payer ${MARKERS[2]}`,
  })
  const police = createCommercialAccount(operator, { name: 'Portland Police', kind: 'police', contacts: [], rates: MARKERS[3], billing_address: MARKERS[4], internal_notes: MARKERS[5] })

  const seen: { what: string; text: string }[] = []
  const record = async (what: string, res: Response) => {
    seen.push({ what: `${what} (headers)`, text: JSON.stringify([...res.headers]) })
    seen.push({ what, text: await res.text() })
    return res
  }
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await record(`${method} ${path}`, await api.request(method, `/api/v1${path}`, { key, body }))
    expect({ call: `${method} ${path}`, status: res.status < 300 }).toEqual({ call: `${method} ${path}`, status: true })
    return JSON.parse(seen.at(-1)!.text)
  }

  const endpoint = await call('POST', '/webhooks', { url: `${receiver.url}/hooks`, events: ['*'] })
  scheduler.start()
  const own = await makeResources(api, key, api.accountId, 'mine')
  const job = await call('POST', '/jobs', { customer: { name: 'Ann Lee' }, pickup: { location: 'I-5 exit 12' }, commercial_account_id: club.id })
  await call('PATCH', `/jobs/${job.id}`, { commercial_account_id: police.id, urgency: 'urgent' })
  await call('POST', `/jobs/${job.id}/assign`, { unit_id: own.units })
  await call('POST', `/jobs/${job.id}/notes`, { text: 'Gate code 4411' })
  // Saving the directory entry (as the dashboard does) writes no event, but the next change carries the new name.
  updateCommercialAccount(operator, police.id, { name: 'Portland Police Bureau', kind: 'police', contacts: [], rates: MARKERS[3], billing_address: MARKERS[4], internal_notes: MARKERS[5] })
  await call('PATCH', `/jobs/${job.id}`, { status: 'en_route' })
  await call('POST', `/webhooks/${endpoint.id}/test`)
  scheduler.wake()

  // Every GET of the document, each path id naming a real resource (the job and directory entry above).
  const ids: Record<string, string> = { ...own, jobs: job.id, accounts: police.id, webhooks: endpoint.id }
  const doc = await call('GET', '/openapi.json')
  const gets = Object.entries<any>(doc.paths).filter(([, methods]) => methods.get).map(([path]) => path)
  expect(gets).toEqual(expect.arrayContaining(['/me', '/jobs', '/jobs/{id}', '/accounts', '/accounts/{id}', '/webhooks/{id}/deliveries']))
  await until(async () => receiver.received.filter((r) => r.body?.data?.job?.id === job.id).length >= 6, 15_000, 'the job\'s webhook deliveries')
  for (const path of gets) {
    const concrete = path.replace(/\{([^}]+)\}/g, (_, p: string) => ids[kindOf(path, p)]!)
    expect({ path, every: pathParams(path).every((p) => ids[kindOf(path, p)] !== undefined) }).toEqual({ path, every: true })
    const paged = (doc.paths[path].get.parameters ?? []).some((p: any) => p.name === 'limit')
    await call('GET', `${concrete}${paged ? '?limit=100' : ''}`)
  }
  for (const r of receiver.received) {
    seen.push({ what: `webhook ${r.body?.type} (body)`, text: r.raw })
    seen.push({ what: `webhook ${r.body?.type} (headers)`, text: JSON.stringify(r.headers) })
  }

  // The sweep did see the directory: names and contacts are there, in the API and the deliveries.
  const all = seen.map((s) => s.text).join('\n')
  expect(all).toContain('"commercial_account":{"id":"' + police.id + '","name":"Portland Police Bureau"}')
  expect(all).toContain('desk@aaa.example')
  expect(receiver.received.some((r) => r.body?.data?.job?.commercial_account?.id === club.id)).toBe(true)
  expect(seen.length).toBeGreaterThan(40)
  const leaks = seen.flatMap((s) => MARKERS.filter((m) => s.text.includes(m)).map((m) => `${s.what}: ${m}`))
  expect(leaks).toEqual([])
}, 60_000)

/**
 * An integrator's program written only against the types openapi-typescript generates from
 * the served document (`./towline.d.ts`, written beside this file by the typed-client test):
 * it drives one job's whole life and an endpoint's with openapi-fetch, under `strict`, with
 * no casts. The test typechecks it with the generated types, then runs it against the
 * service, so the types are shown to be what the API really sends.
 */
import createClient from 'openapi-fetch'
import type { components, paths } from './towline'

type Job = components['schemas']['Job']
type JobStatus = Job['status']
type JobEvent = components['schemas']['JobEvent']
type CreatedWebhookEndpoint = components['schemas']['CreatedWebhookEndpoint']
type CommercialAccount = components['schemas']['CommercialAccount']

/** The data of a call that must succeed; its error otherwise. */
function must<D, E>(result: { data?: D; error?: E; response: Response }, what: string): D {
  if (result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`)
  return result.data
}

/** What the program saw, for the test to compare with what it asked for. */
export interface Trip {
  scopes: string[]
  readsPerMinute: number
  jobId: string
  replayed: boolean
  positionShown: boolean
  statuses: JobStatus[]
  refusal: string
  refusalStatus: number
  reopenCount: number
  quoteCents: number | null
  eventTypes: string[]
  sequences: number[]
  texts: number
  listed: boolean
  services: number
  pausedReason: 'manual' | 'failures' | null
  deliveries: number
  deleted: boolean
  commercialAccount: string | null
  directory: { name: string; kind: CommercialAccount['kind']; contacts: number }[]
  clearedCommercialAccount: boolean
}

/** Drives a job from creation to reopen, and a webhook endpoint from creation to deletion. */
export async function driveAJob(baseUrl: string, key: string, unitId: string, webhookUrl: string, commercialAccountId: string): Promise<Trip> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } })

  const me = must(await client.GET('/me'), 'getMe')
  const readsPerMinute: number = me.rate_limits.reads_per_minute

  const newJob = {
    external_ref: 'TC-1',
    customer: { name: 'Ann Lee', phone: '+15035550142', sms_consent: true },
    vehicle: { year: 2019, make: 'Subaru', model: 'Outback' },
    pickup: { location: 'I-5 N at exit 299B', lat: 45.5, lng: -122.6 },
    quote_cents: 12500,
    commercial_account_id: commercialAccountId,
  }
  const idempotency = { header: { 'Idempotency-Key': 'tc-create-1' } }
  const created: Job = must(await client.POST('/jobs', { params: idempotency, body: newJob }), 'createJob')
  const again = await client.POST('/jobs', { params: idempotency, body: newJob })
  const replayed = must(again, 'createJob again').id === created.id && again.response.headers.get('Idempotent-Replayed') === 'true'
  const id = { path: { id: created.id } }

  const fetched = must(await client.GET('/jobs/{id}', { params: id }), 'getJob')
  const commercialAccountName: string | null = fetched.commercial_account?.name ?? null
  const accounts: CommercialAccount[] = must(await client.GET('/accounts', { params: { query: { limit: 10 } } }), 'listCommercialAccounts').data
  const one = must(await client.GET('/accounts/{id}', { params: { path: { id: commercialAccountId } } }), 'getCommercialAccount')
  if (one.id !== commercialAccountId) throw new Error('not that account')
  const quoteCents: number | null = fetched.quote_cents
  const lat: number | undefined = fetched.position?.lat

  const statuses: JobStatus[] = [fetched.status]
  const assigned = must(await client.POST('/jobs/{id}/assign', { params: id, body: { unit_id: unitId } }), 'assignJob')
  statuses.push(assigned.status)
  const unitName: string | undefined = assigned.unit?.name
  const steps: JobStatus[] = ['en_route', 'on_scene', 'towing', 'at_destination', 'completed']
  for (const status of steps) {
    const moved = must(await client.PATCH('/jobs/{id}', { params: id, body: { status, expected_status: statuses[statuses.length - 1] } }), `updateJob ${status}`)
    statuses.push(moved.status)
  }
  must(await client.PATCH('/jobs/{id}', { params: id, body: { final_price_cents: 14000, payment_method: 'card' } }), 'updateJob price')
  const cleared = must(await client.PATCH('/jobs/{id}', { params: id, body: { commercial_account_id: null } }), 'updateJob commercial account')

  // A finished job refuses a move: the error is typed too.
  const refused = await client.PATCH('/jobs/{id}', { params: id, body: { status: 'pending' } })
  const refusal = refused.error?.error.code ?? 'none'

  const note = must(await client.POST('/jobs/{id}/notes', { params: id, body: { text: 'Customer paid by card', customer_visible: true } }), 'addJobNote')
  if (note.object !== 'note') throw new Error('not a note')
  const reopened = must(await client.POST('/jobs/{id}/reopen', { params: { ...id, header: { 'Idempotency-Key': 'tc-reopen-1' } }, body: { reason: 'Customer called back' } }), 'reopenJob')
  statuses.push(reopened.status)
  const reopenCount: number = reopened.reopen_count
  const unassigned = must(await client.DELETE('/jobs/{id}/assign', { params: id }), 'unassignJob')
  statuses.push(unassigned.status)

  const events: JobEvent[] = must(await client.GET('/jobs/{id}/events', { params: { ...id, query: { limit: 100 } } }), 'listJobEvents').data
  const texts = must(await client.GET('/jobs/{id}/texts', { params: { ...id, query: { limit: 100 } } }), 'listJobTexts').data
  const page = must(await client.GET('/jobs', { params: { query: { status: 'confirmed', limit: 10, external_ref: 'TC-1' } } }), 'listJobs')
  const units = must(await client.GET('/units', { params: { query: { limit: 5 } } }), 'listUnits').data
  const services = must(await client.GET('/services'), 'listServices').data

  const endpoint: CreatedWebhookEndpoint = must(await client.POST('/webhooks', { body: { url: webhookUrl, events: ['*'], description: 'typed client' } }), 'createWebhookEndpoint')
  // The secret is always in the creation's answer: typed as a string, no check or cast needed.
  const secret: string = endpoint.secret
  const hook = { path: { id: endpoint.id } }
  const ping = must(await client.POST('/webhooks/{id}/test', { params: hook }), 'testWebhookEndpoint')
  const durationMs: number = ping.duration_ms
  must(await client.POST('/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path: { id: endpoint.id, delivery_id: ping.delivery_id } } }), 'retryWebhookDelivery')
  const attempts = must(await client.GET('/webhooks/{id}/deliveries', { params: { ...hook, query: { limit: 10 } } }), 'listWebhookDeliveries').data
  const paused = must(await client.PATCH('/webhooks/{id}', { params: hook, body: { status: 'paused' } }), 'updateWebhookEndpoint')
  must(await client.GET('/webhooks/{id}', { params: hook }), 'getWebhookEndpoint')
  const endpoints = must(await client.GET('/webhooks', { params: { query: { limit: 100 } } }), 'listWebhookEndpoints').data
  const deleted = must(await client.DELETE('/webhooks/{id}', { params: hook }), 'deleteWebhookEndpoint')

  if (!secret.startsWith('whsec_') || durationMs < 0 || unitName === undefined || !units.length || !endpoints.length) throw new Error('unexpected shapes')
  return {
    scopes: me.scopes,
    readsPerMinute,
    jobId: created.id,
    replayed,
    positionShown: lat !== undefined,
    statuses,
    refusal,
    refusalStatus: refused.response.status,
    reopenCount,
    quoteCents,
    eventTypes: events.map((e) => e.type),
    sequences: events.map((e) => e.sequence),
    texts: texts.length,
    listed: page.data.some((j) => j.id === created.id),
    services: services.length,
    pausedReason: paused.paused_reason,
    deliveries: attempts.length,
    deleted: deleted.deleted,
    commercialAccount: commercialAccountName,
    directory: accounts.map((a) => ({ name: a.name, kind: a.kind, contacts: a.contacts.length })),
    clearedCommercialAccount: cleared.commercial_account === null,
  }
}

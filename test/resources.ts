/**
 * One of every resource a path can name, made for an account through the API (and the one
 * write the API has no route for, a unit), plus a valid body for every operation that takes
 * one: what the fuzz suite and the cross-account checks start from.
 */
import { expect } from 'bun:test'
import type { TestApi } from './kit'
import { addUnit } from '../src/units/add-unit'
import { createCommercialAccount } from '../src/commercial-accounts/create-commercial-account'

/** A webhook target that refuses connections at once: nothing ever leaves this machine. */
export const CLOSED_TARGET = 'https://127.0.0.1:9/hook'

/** Ids of one resource of each kind, by the kind a path parameter names (`jobs` for `/jobs/{id}`, `delivery` for `{delivery_id}`). */
export type ResourceIds = Record<string, string>

/**
 * Makes a job, a unit, a webhook endpoint, a delivery and a commercial account (made as the console
 * would: the API only reads the directory) for the key's account. Needs TOWLINE_WEBHOOK_ALLOW_PRIVATE=1.
 */
export async function makeResources(api: TestApi, key: string, accountId: string, name: string, opts: { siteIds?: string[] } = {}): Promise<ResourceIds> {
  const send = async (method: string, path: string, body: unknown) => {
    const res = await api.request(method, `/api/v1${path}`, { key, body })
    const json: any = await res.json()
    expect({ step: `${method} ${path}`, status: res.status }).toEqual({ step: `${method} ${path}`, status: 201 })
    return json
  }
  const endpoint = await send('POST', '/webhooks', { url: CLOSED_TARGET, events: ['*'], description: name })
  const job = await send('POST', '/jobs', { customer: { name: `${name} customer` }, pickup: { location: `${name} yard` }, external_ref: `${name}-1` })
  const unit = addUnit(api.db, api.clock, { accountId, name: `${name} truck`, siteIds: opts.siteIds })
  // A delivery to name: the endpoint's test ping (job events become deliveries when the scheduler takes them up).
  const ping = await api.request('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key })
  const delivery = ((await ping.json()) as { delivery_id?: string }).delivery_id
  expect({ step: 'POST /webhooks/{id}/test', status: ping.status, delivery }).toEqual({ step: 'POST /webhooks/{id}/test', status: 200, delivery: expect.stringMatching(/^dlv_/) })
  const commercial = createCommercialAccount(api.contexts.forOperator(accountId), { name: `${name} motor club`, kind: 'motor_club', contacts: [{ name: `${name} desk`, phone: '+15035550100' }] })
  return { jobs: job.id, units: unit.id, webhooks: endpoint.id, delivery: delivery!, device: unit.deviceId, accounts: commercial.id }
}

/** The kind of resource a path parameter names: the segment before `{id}`, or the name of `{x_id}`. */
export function kindOf(path: string, param: string): string {
  if (param !== 'id') return param.replace(/_id$/, '')
  const before = path.slice(0, path.indexOf(`{${param}}`)).split('/').filter(Boolean)
  return before[before.length - 1] ?? param
}

/** A syntactically plausible id of a kind that names nothing. */
export function unknownIdOf(kind: string, ids: ResourceIds): string {
  const real = ids[kind]
  const prefix = real ? real.slice(0, real.indexOf('_') + 1) : `${kind}_`
  return `${prefix}01ZZZZZZZZZZZZZZZZZZZZZZZZ`
}

/** A body each operation accepts (keyed `METHOD /path` as the OpenAPI document spells it), given the caller's own resources. */
export function validBodyFor(method: string, path: string, own: ResourceIds): unknown {
  const bodies: Record<string, unknown> = {
    'POST /jobs': { customer: { name: 'Ann Lee', phone: '+15035550142', sms_consent: true }, pickup: { location: 'I-5 N at exit 299B' }, quote_cents: 12500 },
    'PATCH /jobs/{id}': { urgency: 'low' },
    'POST /jobs/{id}/assign': { unit_id: own.units },
    'POST /jobs/{id}/notes': { text: 'Called the customer', customer_visible: false },
    'POST /jobs/{id}/reopen': { reason: 'Customer called back' },
    'POST /webhooks': { url: CLOSED_TARGET, events: ['job.created'] },
    'PATCH /webhooks/{id}': { description: 'renamed' },
  }
  return bodies[`${method} ${path}`]
}

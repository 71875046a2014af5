import { inTransaction } from '../db/client'
import { iso } from '../platform/clock'
import { AppError, validationFailed } from '../platform/errors'
import { parseTimeField, phoneField } from './create-job'
import { applyMove, commitJobChange, consentSource, loadWritableJob, requireReason, statusText, type JobContext } from './job-context'
import { recordConsent } from '../texts/consent'
import type { NewJobEvent } from './job-events'
import type { JobStatus } from './job-status'
import type { UpdateJobBody } from './job.model'
import type { JobRow } from './job.view'

const clean = (s: string | null | undefined) => (s === undefined ? undefined : s === null || s.trim() === '' ? null : s.trim())

function stale(expected: string, current: string): AppError {
  return new AppError('job_stale', `The job is ${current}, not ${expected} as expected; nothing was written.`, { expected_status: expected, current_status: current })
}

/**
 * PATCH /jobs/{id}. A status change and the other fields are two writes, in that order: the
 * move (through the transition table, stamping its milestone and texting the customer), then
 * the fields. If the second fails, its error carries details.transition_applied.
 */
export function updateJob(ctx: JobContext, id: string, input: UpdateJobBody): JobRow {
  let job = loadWritableJob(ctx, ctx.db, id)
  if (input.expected_status && job.status !== input.expected_status) throw stale(input.expected_status, job.status)
  const wantsMove = input.status !== undefined && input.status !== job.status
  if (input.cancel_reason !== undefined && input.status !== 'cancelled' && input.status !== 'goa') {
    throw validationFailed([{ path: 'cancel_reason', message: 'can only be sent with status cancelled or goa' }])
  }

  let applied: { from: string; to: string } | null = null
  if (wantsMove) {
    const to = input.status as JobStatus
    const from = job.status
    job = inTransaction(ctx.db, (tx) => {
      const fresh = loadWritableJob(ctx, tx, id)
      if (input.expected_status && fresh.status !== input.expected_status) throw stale(input.expected_status, fresh.status)
      const move = applyMove(fresh, to, 'patch', fresh.unitId !== null, ctx.clock.now())
      // The reason is checked once the move is known to be allowed: a finished job answers 409, reason or not.
      const cancelReason = to === 'cancelled' ? requireReason(input.cancel_reason, 'cancel_reason', 'Cancelling a job')
        : to === 'goa' && input.cancel_reason !== undefined ? requireReason(input.cancel_reason, 'cancel_reason', 'A goa')
        : undefined
      const set: Partial<JobRow> = { ...move, ...(cancelReason !== undefined ? { cancelReason } : {}) }
      return commitJobChange(tx, ctx, fresh, set, [{ type: 'job.status_changed', from: fresh.status, to, detail: cancelReason ? { cancel_reason: cancelReason } : {} }],
        (after, events) => [statusText(ctx, after, events[0])]).after
    })
    applied = { from, to }
  }

  try {
    return updateFields(ctx, job, input, applied === null)
  } catch (err) {
    if (applied && err instanceof AppError) {
      throw new AppError(err.errorCode, `The status change was saved (${applied.from} to ${applied.to}), but the other changes were not: ${err.message}`,
        { ...err.details, transition_applied: applied }, err.headers)
    }
    throw err
  }
}

type FieldCol = 'source' | 'payerType' | 'serviceType' | 'urgency' | 'destination' | 'paymentMethod'
const SIMPLE: [keyof UpdateJobBody, FieldCol][] = [
  ['source', 'source'], ['payer_type', 'payerType'], ['service_type', 'serviceType'], ['urgency', 'urgency'], ['destination', 'destination'], ['payment_method', 'paymentMethod'],
]

/** Applies the writable fields other than status as one write with its events; no-op when nothing changes. */
function updateFields(ctx: JobContext, job: JobRow, input: UpdateJobBody, checkExpected: boolean): JobRow {
  const set: Partial<JobRow> = {}
  const updated: string[] = []
  for (const [field, col] of SIMPLE) {
    const v = clean(input[field] as string | null | undefined)
    if (v !== undefined && v !== job[col]) { set[col] = v; updated.push(field) }
  }
  if (input.cancel_reason !== undefined && input.status === job.status && (job.status === 'cancelled' || job.status === 'goa')) {
    const reason = requireReason(input.cancel_reason, 'cancel_reason', 'A cancel reason')
    if (reason !== job.cancelReason) { set.cancelReason = reason; updated.push('cancel_reason') }
  }
  if (input.customer) {
    const c = { ...job.customer }
    if (input.customer.name !== undefined) {
      const name = input.customer.name.trim()
      if (!name) throw validationFailed([{ path: 'customer.name', message: 'must not be blank' }])
      c.name = name
    }
    if (input.customer.phone !== undefined) c.phone = phoneField('customer.phone', input.customer.phone, ctx.defaultCountry)
    if (input.customer.sms_consent !== undefined) c.sms_consent = input.customer.sms_consent
    if (JSON.stringify(c) !== JSON.stringify(job.customer)) { set.customer = c; updated.push('customer') }
  }
  if (input.vehicle) {
    const v = { ...job.vehicle }
    for (const [k, val] of Object.entries(input.vehicle)) (v as Record<string, unknown>)[k] = val === null ? null : String(val).trim() || null
    if (JSON.stringify(v) !== JSON.stringify(job.vehicle)) { set.vehicle = v; updated.push('vehicle') }
  }
  if (input.pickup) {
    const p = { ...job.pickup }
    if (input.pickup.location !== undefined) {
      const location = input.pickup.location.trim()
      if (!location) throw validationFailed([{ path: 'pickup.location', message: 'must not be blank' }])
      p.location = location
    }
    if (input.pickup.lat !== undefined) p.lat = input.pickup.lat
    if (input.pickup.lng !== undefined) p.lng = input.pickup.lng
    if (JSON.stringify(p) !== JSON.stringify(job.pickup)) { set.pickup = p; updated.push('pickup') }
  }
  const events: NewJobEvent[] = []
  const eta = parseTimeField('eta_at', input.eta_at)
  if (eta !== undefined && eta !== job.etaAt) {
    set.etaAt = eta
    events.push({ type: 'job.eta_updated', detail: { eta_at: iso(eta), previous_eta_at: iso(job.etaAt) } })
  }
  if (input.quote_cents !== undefined && input.quote_cents !== job.quoteCents) {
    set.quoteCents = input.quote_cents
    events.push({ type: 'job.quote_updated', detail: { quote_cents: input.quote_cents, previous_quote_cents: job.quoteCents } })
  }
  if (input.final_price_cents !== undefined && input.final_price_cents !== job.finalPriceCents) set.finalPriceCents = input.final_price_cents
  if ('finalPriceCents' in set || updated.includes('payment_method')) {
    events.push({ type: 'job.payment_updated', detail: { final_price_cents: set.finalPriceCents ?? job.finalPriceCents, payment_method: set.paymentMethod ?? job.paymentMethod } })
  }
  const others = updated.filter((f) => f !== 'payment_method')
  if (others.length) events.push({ type: 'job.updated', detail: { fields: others } })
  if (!events.length) return job
  return inTransaction(ctx.db, (tx) => {
    const fresh = loadWritableJob(ctx, tx, job.id)
    if (fresh.eventSeq !== job.eventSeq) throw new AppError('job_stale', 'The job changed while this request was being handled; the field changes were not written. Re-read it and retry.', { expected_status: job.status, current_status: fresh.status })
    if (checkExpected && input.expected_status && fresh.status !== input.expected_status) throw stale(input.expected_status, fresh.status)
    const after = commitJobChange(tx, ctx, fresh, set, events).after
    // A caller that sets (or keeps) consent on a new number records it for that number.
    if (set.customer && after.customer.phone && after.customer.sms_consent && !(fresh.customer.sms_consent && fresh.customer.phone === after.customer.phone)) {
      recordConsent(tx, after.accountId, after.customer.phone, consentSource(ctx), ctx.clock.now())
    }
    return after
  })
}

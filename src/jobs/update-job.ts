import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { iso } from '../platform/clock'
import { AppError, validationFailed } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { commercialAccountIdForJob } from '../commercial-accounts/commercial-account-for-job'
import { checkMove, commitJobChange, type JobFields } from './commit-job-change'
import { cleanText, parseTimeField, phoneField } from './create-job'
import { checkExpected, loadWritableJob, requireReason } from './job-context'
import type { NewJobEvent } from './job-events'
import type { JobStatus } from './job-status'
import type { UpdateJobBody } from './job.model'
import type { JobRow } from './job.view'

type FieldCol = 'source' | 'payerType' | 'serviceType' | 'urgency' | 'destination' | 'paymentMethod'
const SIMPLE: [keyof UpdateJobBody & string, FieldCol][] = [
  ['source', 'source'], ['payer_type', 'payerType'], ['service_type', 'serviceType'], ['urgency', 'urgency'], ['destination', 'destination'], ['payment_method', 'paymentMethod'],
]

/** A PATCH body's values, checked and normalised before anything is written. */
interface FieldInput {
  simple: [keyof UpdateJobBody & string, FieldCol, string | null][]
  customer?: { name?: string; phone?: string | null; sms_consent?: boolean }
  vehicle?: Record<string, string | null>
  pickup?: { location?: string; lat?: number | null; lng?: number | null }
  /** undefined: not sent; null: cleared. */
  etaAt?: number | null
  quoteCents?: number | null
  finalPriceCents?: number | null
  /** undefined: not sent; null: cleared; else a commercial account of the account. */
  commercialAccountId?: string | null
}

/** Checks every field of a PATCH body (all problems at once, at most 10); of the job, only its status is needed (a cancel reason sent alone). */
export function readFieldInput(ctx: OperationContext, input: UpdateJobBody, currentStatus?: string): FieldInput {
  const problems: { path: string; message: string }[] = []
  const attempt = <T>(fn: () => T): T | undefined => {
    try { return fn() } catch (err) {
      if (err instanceof AppError && err.errorCode === 'validation_failed') { problems.push(...(err.details.fields as typeof problems)); return undefined }
      throw err
    }
  }
  const out: FieldInput = { simple: [] }
  for (const [field, col] of SIMPLE) {
    const v = input[field] as string | null | undefined
    if (v !== undefined) out.simple.push([field, col, cleanText(v)])
  }
  if (input.customer) {
    const c: FieldInput['customer'] = {}
    if (input.customer.name !== undefined) {
      c.name = input.customer.name.trim()
      if (!c.name) problems.push({ path: 'customer.name', message: 'must not be blank' })
    }
    if (input.customer.phone !== undefined) c.phone = attempt(() => phoneField('customer.phone', input.customer!.phone, ctx.account.defaultCountry)) ?? null
    if (input.customer.sms_consent !== undefined) c.sms_consent = input.customer.sms_consent
    out.customer = c
  }
  if (input.vehicle) out.vehicle = Object.fromEntries(Object.entries(input.vehicle).map(([k, v]) => [k, v === null || v === undefined ? null : String(v).trim() || null]))
  if (input.pickup) {
    const p: FieldInput['pickup'] = {}
    if (input.pickup.location !== undefined) {
      p.location = input.pickup.location.trim()
      if (!p.location) problems.push({ path: 'pickup.location', message: 'must not be blank' })
    }
    if (input.pickup.lat !== undefined) p.lat = input.pickup.lat
    if (input.pickup.lng !== undefined) p.lng = input.pickup.lng
    out.pickup = p
  }
  if (input.eta_at !== undefined) out.etaAt = attempt(() => parseTimeField('eta_at', input.eta_at))
  if (input.quote_cents !== undefined) out.quoteCents = input.quote_cents
  if (input.final_price_cents !== undefined) out.finalPriceCents = input.final_price_cents
  if (input.commercial_account_id !== undefined) out.commercialAccountId = attempt(() => commercialAccountIdForJob(ctx.db, ctx.scope.accountId, input.commercial_account_id))
  // Alone, it corrects the reason of a job that is already cancelled or goa.
  const endedWithReason = (status: string | undefined) => status === 'cancelled' || status === 'goa'
  if (input.cancel_reason !== undefined && !endedWithReason(input.status) && !(input.status === undefined && endedWithReason(currentStatus))) {
    problems.push({ path: 'cancel_reason', message: 'can only be sent with status cancelled or goa, or alone to correct the reason of a job that is already cancelled or goa' })
  }
  if (problems.length) throw validationFailed(problems.slice(0, 10))
  return out
}

/** The ETA part of a change: its column and job.eta_updated, or nothing when it does not change. */
function etaChange(job: JobRow, etaAt: number | null | undefined): { set: JobFields; events: NewJobEvent[] } {
  if (etaAt === undefined || etaAt === job.etaAt) return { set: {}, events: [] }
  return { set: { etaAt }, events: [{ type: 'job.eta_updated', detail: { eta_at: iso(etaAt), previous_eta_at: iso(job.etaAt) } }] }
}

/**
 * PATCH /jobs/{id}. Every input error is found before anything is written. Then, as the spec
 * says, a status change and the other fields are two writes, in that order: the move (through
 * the transition table, stamping its milestone; the new ETA rides with it so the customer's text
 * names it), then the fields. Only a race can fail the second; its error carries
 * details.transition_applied.
 */
export function updateJob(ctx: OperationContext, id: string, input: UpdateJobBody): JobRow {
  requirePermission(ctx.actor, 'jobs:write')
  const guard = { expectedStatus: input.expected_status }
  let job = loadWritableJob(ctx, ctx.db, id, 'jobs:write', guard)
  const fields = readFieldInput(ctx, input, job.status)
  const to = input.status as JobStatus | undefined
  const wantsMove = to !== undefined && to !== job.status
  // The move is checked before its reason: a finished job answers 409, reason or not.
  if (wantsMove) checkMove(job, to, 'patch')
  const cancelReason = wantsMove && to === 'cancelled' ? requireReason(input.cancel_reason, 'cancel_reason', 'Cancelling a job')
    // A goa's reason is optional: null there is none. Anywhere else null is a reason it cannot use.
    : input.cancel_reason === null && wantsMove ? undefined
    : input.cancel_reason !== undefined ? requireReason(input.cancel_reason, 'cancel_reason', wantsMove ? 'A GOA (gone on arrival)' : 'A cancel reason')
    : undefined

  let applied: { from: string; to: string } | null = null
  if (wantsMove) {
    const from = job.status
    job = inTransaction(ctx.db, (tx) => {
      const fresh = loadWritableJob(ctx, tx, id, 'jobs:write', guard)
      const eta = etaChange(fresh, fields.etaAt)
      return commitJobChange(tx, ctx, fresh, {
        set: { ...eta.set, ...(cancelReason !== undefined ? { cancelReason } : {}) },
        move: { to, via: 'patch', detail: cancelReason !== undefined ? { cancel_reason: cancelReason } : {} },
        eventsAfterMove: eta.events,
      }).after
    })
    applied = { from, to }
  }

  try {
    return updateFields(ctx, job, fields, { expected: applied === null ? input.expected_status : undefined, cancelReason: applied === null ? cancelReason : undefined })
  } catch (err) {
    if (!applied) throw err
    if (err instanceof AppError) {
      throw new AppError(err.errorCode, `The status change was saved (${applied.from} to ${applied.to}), but the other changes were not: ${err.message}`,
        { ...err.details, transition_applied: applied }, err.headers)
    }
    // Not a refusal (the disk, the database): still say what was committed; the log has the cause.
    throw new AppError('internal_error', `The status change was saved (${applied.from} to ${applied.to}), but the other changes were not. Re-read the job before retrying.`,
      { transition_applied: applied }, {}, err)
  }
}

/**
 * Writes the fields other than status as one change with its events; no write when nothing
 * changes. The change is worked out against the job as it is inside the write transaction: a
 * PATCH without expected_status is unconditional, so a write that came in meanwhile (another
 * request, another instance, a driver) is built upon, never a reason to refuse this one.
 */
function updateFields(ctx: OperationContext, job: JobRow, input: FieldInput, opts: { expected?: string; cancelReason?: string }): JobRow {
  return inTransaction(ctx.db, (tx) => {
    const fresh = loadWritableJob(ctx, tx, job.id)
    const { set, events } = fieldChange(fresh, input, opts)
    if (!events.length) return fresh
    checkExpected(fresh, { expectedStatus: opts.expected })
    return commitJobChange(tx, ctx, fresh, { set, events }).after
  })
}

/** The fields a PATCH changes on `job` as it is, and the events that say so (none: nothing changes). */
function fieldChange(job: JobRow, input: FieldInput, opts: { cancelReason?: string }): { set: JobFields; events: NewJobEvent[] } {
  const set: JobFields = {}
  const updated: string[] = []
  for (const [field, col, v] of input.simple) if (v !== job[col]) { set[col] = v; updated.push(field) }
  if (opts.cancelReason !== undefined && opts.cancelReason !== job.cancelReason && (job.status === 'cancelled' || job.status === 'goa')) {
    set.cancelReason = opts.cancelReason
    updated.push('cancel_reason')
  }
  if (input.customer) {
    const c = { ...job.customer, ...input.customer }
    if (JSON.stringify(c) !== JSON.stringify(job.customer)) { set.customer = c; updated.push('customer') }
  }
  if (input.vehicle) {
    const v = { ...job.vehicle, ...input.vehicle }
    if (JSON.stringify(v) !== JSON.stringify(job.vehicle)) { set.vehicle = v; updated.push('vehicle') }
  }
  if (input.pickup) {
    const p = { ...job.pickup, ...input.pickup }
    if (JSON.stringify(p) !== JSON.stringify(job.pickup)) { set.pickup = p; updated.push('pickup') }
  }
  if (input.commercialAccountId !== undefined && input.commercialAccountId !== job.commercialAccountId) {
    set.commercialAccountId = input.commercialAccountId
    updated.push('commercial_account_id')
  }
  const eta = etaChange(job, input.etaAt)
  Object.assign(set, eta.set)
  const events: NewJobEvent[] = [...eta.events]
  if (input.quoteCents !== undefined && input.quoteCents !== job.quoteCents) {
    set.quoteCents = input.quoteCents
    events.push({ type: 'job.quote_updated', detail: { quote_cents: input.quoteCents, previous_quote_cents: job.quoteCents } })
  }
  if (input.finalPriceCents !== undefined && input.finalPriceCents !== job.finalPriceCents) set.finalPriceCents = input.finalPriceCents
  if ('finalPriceCents' in set || updated.includes('payment_method')) {
    events.push({ type: 'job.payment_updated', detail: { final_price_cents: 'finalPriceCents' in set ? set.finalPriceCents : job.finalPriceCents, payment_method: 'paymentMethod' in set ? set.paymentMethod : job.paymentMethod } })
  }
  const others = updated.filter((f) => f !== 'payment_method')
  if (others.length) events.push({ type: 'job.updated', detail: { fields: others } })
  return { set, events }
}

import { inTransaction, type Db } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import { mintLinkToken } from './job-links'
import { normalizePhone } from '../platform/phone'
import { readIsoTime } from '../platform/time'
import { queueText } from '../texts/queue-text'
import { recordConsent } from '../texts/consent'
import { fanOutJobEvents } from '../webhooks/fan-out'
import { consentSource, customerText, type JobContext } from './job-context'
import { appendJobEvents } from './job-events'
import { findJobByExternalRef } from './job.queries'
import type { CreateJobBody } from './job.model'
import type { JobRow } from './job.view'

/** Reads an optional ISO time field; 422 naming it if it is not a real instant of years 0000-9999. */
export function parseTimeField(path: string, raw: string | null | undefined): number | null | undefined {
  if (raw === undefined || raw === null) return raw
  const ms = readIsoTime(raw)
  if (ms === null) throw validationFailed([{ path, message: 'must be an ISO 8601 time with a zone, such as 2026-11-21T09:30:00Z, on a date that exists' }])
  return ms
}

/** Normalises a phone field to E.164, or throws 422 naming it. */
export function phoneField(path: string, raw: string | null | undefined, country: string): string | null {
  if (raw === undefined || raw === null || raw.trim() === '') return null
  const e164 = normalizePhone(raw, country)
  if (!e164) throw validationFailed([{ path, message: 'is not a phone number we can text (use the +country form, e.g. +15552013344)' }])
  return e164
}

const clean = (s: string | null | undefined) => (s === undefined || s === null || s.trim() === '' ? null : s.trim())

/**
 * Creates a job: mints its tracking link, writes job.created and queues the customer's
 * 'request received' text, all in one transaction. Options serve imports and the demo.
 */
export function createJob(ctx: JobContext, input: CreateJobBody, opts: { imported?: boolean; createdAt?: number } = {}): JobRow {
  const now = opts.createdAt ?? ctx.clock.now()
  const phone = phoneField('customer.phone', input.customer.phone, ctx.defaultCountry)
  const etaAt = parseTimeField('eta_at', input.eta_at)
  const externalRef = clean(input.external_ref)
  const status = input.status ?? 'confirmed'

  return inTransaction(ctx.db, (tx) => {
    const accountSites = tx.$client.query<{ id: string }, [string]>('SELECT id FROM sites WHERE account_id = ? ORDER BY created_at, id').all(ctx.scope.accountId)
    const allowed = ctx.scope.siteIds ? accountSites.filter((s) => ctx.scope.siteIds!.includes(s.id)) : accountSites
    const siteId = input.site_id ?? allowed[0]?.id
    if (!siteId || !allowed.some((s) => s.id === siteId)) throw validationFailed([{ path: 'site_id', message: 'is not a site this key can use' }])
    if (externalRef) {
      const existing = findJobByExternalRef(tx, ctx.scope.accountId, externalRef)
      if (existing) {
        // A key limited to sites learns that the reference is taken, never which job of another site holds it.
        if (ctx.scope.siteIds && !ctx.scope.siteIds.includes(existing.siteId)) {
          throw new AppError('conflict', `Another job of this account already has external_ref "${externalRef}" (at a site this key cannot see).`, { external_ref: externalRef })
        }
        throw new AppError('conflict', `Another job (${existing.id}) already has external_ref "${externalRef}".`, { existing_job_id: existing.id, external_ref: externalRef })
      }
    }
    const tracking = mintLinkToken(ctx.links)
    const row: JobRow = {
      id: newId('job', now),
      accountId: ctx.scope.accountId,
      siteId,
      externalRef,
      source: clean(input.source),
      payerType: clean(input.payer_type),
      serviceType: clean(input.service_type),
      urgency: clean(input.urgency),
      customer: { name: input.customer.name.trim(), phone, sms_consent: input.customer.sms_consent ?? false },
      vehicle: Object.fromEntries(Object.entries(input.vehicle ?? {}).map(([k, v]) => [k, v === null || v === undefined ? null : String(v).trim() || null])),
      pickup: { location: input.pickup.location.trim(), lat: input.pickup.lat ?? null, lng: input.pickup.lng ?? null },
      destination: clean(input.destination),
      status,
      cancelReason: null,
      rating: null,
      ratingComment: null,
      ratedAt: null,
      reopenCount: 0,
      etaAt: etaAt ?? null,
      quoteCents: input.quote_cents ?? null,
      finalPriceCents: null,
      paymentMethod: null,
      unitId: null,
      trackingTokenHash: tracking.hash,
      trackingTokenSealed: tracking.sealed,
      driverTokenHash: null,
      driverTokenSealed: null,
      milestones: { [`${status}_at`]: now },
      eventSeq: 0,
      imported: opts.imported ?? false,
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
    }
    if (!row.customer.name) throw validationFailed([{ path: 'customer.name', message: 'must not be blank' }])
    if (!row.pickup.location) throw validationFailed([{ path: 'pickup.location', message: 'must not be blank' }])
    insertJob(tx, { ...row, eventSeq: 1 })
    const [created] = appendJobEvents(tx, row, 0, ctx.actor, [{ type: 'job.created', to: status, detail: { status, imported: row.imported, external_ref: externalRef } }], now)
    const job = { ...row, eventSeq: 1 }
    if (phone && job.customer.sms_consent) recordConsent(tx, job.accountId, phone, consentSource(ctx), now)
    queueText(tx, customerText(ctx, job, 'request_received', created), now)
    fanOutJobEvents(tx, ctx.links, job, [created!], now)
    return job
  })
}


const JOB_COLUMNS = [
  'id', 'account_id', 'site_id', 'external_ref', 'source', 'payer_type', 'service_type', 'urgency', 'customer', 'vehicle', 'pickup',
  'destination', 'status', 'cancel_reason', 'rating', 'rating_comment', 'rated_at', 'reopen_count', 'eta_at', 'quote_cents',
  'final_price_cents', 'payment_method', 'unit_id', 'tracking_token_hash', 'tracking_token_sealed', 'driver_token_hash', 'driver_token_sealed', 'milestones', 'event_seq', 'imported',
  'archived_at', 'created_at', 'updated_at',
] as const
const INSERT_JOB = `INSERT INTO jobs (${JOB_COLUMNS.join(', ')}) VALUES (${JOB_COLUMNS.map(() => '?').join(', ')})`

/** Inserts a job row with a cached statement (creation is the hot write path). */
function insertJob(tx: Db, r: JobRow) {
  tx.$client.query(INSERT_JOB).run(
    r.id, r.accountId, r.siteId, r.externalRef, r.source, r.payerType, r.serviceType, r.urgency, JSON.stringify(r.customer),
    JSON.stringify(r.vehicle), JSON.stringify(r.pickup), r.destination, r.status, r.cancelReason, r.rating, r.ratingComment,
    r.ratedAt, r.reopenCount, r.etaAt, r.quoteCents, r.finalPriceCents, r.paymentMethod, r.unitId, r.trackingTokenHash, r.trackingTokenSealed, r.driverTokenHash, r.driverTokenSealed,
    JSON.stringify(r.milestones), r.eventSeq, r.imported ? 1 : 0, r.archivedAt, r.createdAt, r.updatedAt,
  )
}

import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import { normalizePhone } from '../platform/phone'
import { readIsoTime } from '../platform/time'
import type { OperationContext } from '../operations/operation-context'
import { commercialAccountIdForJob } from '../commercial-accounts/commercial-account-for-job'
import { commitNewJob } from './commit-job-change'
import { mintLinkToken } from './job-links'
import { findJobByExternalRef } from './job.queries'
import type { CreateJobBody } from './job.model'
import type { JobStatus } from './job-status'
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

/** Trims a text field; blank is null. */
export const cleanText = (s: string | null | undefined) => (s === undefined || s === null || s.trim() === '' ? null : s.trim())

/** Checks a create body's values before anything is written (422 naming each field); returns them normalised. */
export function readCreateInput(ctx: OperationContext, input: CreateJobBody) {
  const problems: { path: string; message: string }[] = []
  const attempt = <T>(fn: () => T): T | undefined => {
    try { return fn() } catch (err) {
      if (err instanceof AppError && err.errorCode === 'validation_failed') { problems.push(...(err.details.fields as typeof problems)); return undefined }
      throw err
    }
  }
  const phone = attempt(() => phoneField('customer.phone', input.customer.phone, ctx.account.defaultCountry)) ?? null
  const etaAt = attempt(() => parseTimeField('eta_at', input.eta_at)) ?? null
  const commercialAccountId = attempt(() => commercialAccountIdForJob(ctx.db, ctx.scope.accountId, input.commercial_account_id)) ?? null
  const name = input.customer.name.trim()
  if (!name) problems.push({ path: 'customer.name', message: 'must not be blank' })
  const location = input.pickup.location.trim()
  if (!location) problems.push({ path: 'pickup.location', message: 'must not be blank' })
  if (problems.length) throw validationFailed(problems.slice(0, 10))
  return { phone, etaAt, name, location, commercialAccountId }
}

/**
 * A job's history, as an import brings it: the job arrives in its historic status with its
 * milestone times and outcome, marked `imported` (so the texts policy sends nothing for it),
 * and its job.created carries `imported: true`. The caller has checked every value.
 */
export interface HistoricJob {
  status: JobStatus
  /** `<status>_at`, closed_at, reopened_at, in epoch ms. */
  milestones: Record<string, number>
  cancelReason: string | null
  finalPriceCents: number | null
  paymentMethod: string | null
  unitId: string | null
  commercialAccountId: string | null
  rating: number | null
  ratingComment: string | null
  ratedAt: number | null
  reopenCount: number
  archivedAt: number | null
}

/**
 * Creates a job as if a dispatcher had entered it: mints its tracking link and writes
 * job.created, in one transaction, through the same commit as every change (its writers queue
 * the customer's 'request received' text and the webhook events). `createdAt` serves the demo
 * and imports; `historic` makes the job an imported one (see HistoricJob): its job.created is
 * dated `createdAt`, its updated_at is now (so `updated_since` readers see it arrive).
 */
export function createJob(ctx: OperationContext, input: CreateJobBody, opts: { createdAt?: number; historic?: HistoricJob } = {}): JobRow {
  requirePermission(ctx.actor, 'jobs:write')
  const now = opts.createdAt ?? ctx.clock.now()
  const { phone, etaAt, name, location, commercialAccountId } = readCreateInput(ctx, input)
  const externalRef = cleanText(input.external_ref)
  const past = opts.historic
  const status = past?.status ?? input.status ?? 'confirmed'

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
      source: cleanText(input.source),
      payerType: cleanText(input.payer_type),
      serviceType: cleanText(input.service_type),
      urgency: cleanText(input.urgency),
      customer: { name, phone, sms_consent: input.customer.sms_consent ?? false },
      vehicle: Object.fromEntries(Object.entries(input.vehicle ?? {}).map(([k, v]) => [k, v === null || v === undefined ? null : String(v).trim() || null])),
      pickup: { location, lat: input.pickup.lat ?? null, lng: input.pickup.lng ?? null },
      destination: cleanText(input.destination),
      status,
      cancelReason: past?.cancelReason ?? null,
      rating: past?.rating ?? null,
      ratingComment: past?.ratingComment ?? null,
      ratedAt: past?.ratedAt ?? null,
      reopenCount: past?.reopenCount ?? 0,
      etaAt,
      quoteCents: input.quote_cents ?? null,
      finalPriceCents: past?.finalPriceCents ?? null,
      paymentMethod: past?.paymentMethod ?? null,
      unitId: past?.unitId ?? null,
      commercialAccountId: past?.commercialAccountId ?? commercialAccountId,
      trackingTokenHash: tracking.hash,
      trackingTokenSealed: tracking.sealed,
      driverTokenHash: null,
      driverTokenSealed: null,
      milestones: past ? { ...past.milestones } : { [`${status}_at`]: now },
      eventSeq: 0,
      imported: past !== undefined,
      archivedAt: past?.archivedAt ?? null,
      createdAt: now,
      updatedAt: past ? ctx.clock.now() : now,
    }
    return commitNewJob(tx, ctx, row, { type: 'job.created', to: status, detail: { status, imported: past !== undefined, external_ref: externalRef } }).after
  })
}

import { iso } from '../platform/clock'
import { STATUSES, type JobStatus } from './job-status'
import type { jobs } from './job.table'
import { trackingUrlOf, type JobLinks } from './job-links'

/** A job as the code reads and writes it; `search_text` is derived from it at every write (commit-job-change.ts). */
export type JobRow = Omit<typeof jobs.$inferSelect, 'searchText'>

export interface UnitRef { id: string; name: string }
/** The commercial account a job is done for, as the job shows it. */
export interface CommercialAccountRef { id: string; name: string }
/** What a job view names beside the job's own row: its unit and its commercial account. */
export interface JobRefs { unit: UnitRef | null; commercialAccount: CommercialAccountRef | null }
export interface Position { lat: number; lng: number; accuracy_m: number | null; heading: number | null; speed_kph: number | null; recorded_at: string }


/** The job's milestones as the API shows them: every `<status>_at`, closed_at and reopened_at. */
export function timestampsView(row: JobRow) {
  const m = row.milestones
  const out: Record<string, string | null> = { created_at: iso(row.createdAt) }
  for (const key of MILESTONE_KEYS) out[key] = iso(m[key])
  return out
}

/** Every milestone a job shows, in the order the API shows them. */
const MILESTONE_KEYS = [...STATUSES.map((s) => `${s}_at`), 'closed_at', 'reopened_at']

/**
 * The job as the API returns it. `position` is added for the single job (GET /jobs/{id},
 * webhook payloads); lists leave it out.
 */
export function jobView(row: JobRow, links: JobLinks, refs: JobRefs, position?: Position | null) {
  const view = {
    object: 'job' as const,
    id: row.id,
    external_ref: row.externalRef,
    site_id: row.siteId,
    status: row.status as JobStatus,
    source: row.source,
    payer_type: row.payerType,
    service_type: row.serviceType,
    urgency: row.urgency,
    customer: { name: row.customer.name, phone: row.customer.phone ?? null, sms_consent: row.customer.sms_consent },
    vehicle: {
      year: row.vehicle.year ?? null, make: row.vehicle.make ?? null, model: row.vehicle.model ?? null,
      drive_type: row.vehicle.drive_type ?? null, color: row.vehicle.color ?? null, plate: row.vehicle.plate ?? null, vin: row.vehicle.vin ?? null,
    },
    pickup: { location: row.pickup.location, lat: row.pickup.lat ?? null, lng: row.pickup.lng ?? null },
    destination: row.destination,
    cancel_reason: row.cancelReason,
    rating: row.rating,
    rating_comment: row.ratingComment,
    rated_at: iso(row.ratedAt),
    reopen_count: row.reopenCount,
    eta_at: iso(row.etaAt),
    quote_cents: row.quoteCents,
    final_price_cents: row.finalPriceCents,
    payment_method: row.paymentMethod,
    unit: refs.unit,
    commercial_account: refs.commercialAccount,
    tracking_url: trackingUrlOf(links, row),
    imported: row.imported,
    archived: row.archivedAt !== null,
    archived_at: iso(row.archivedAt),
    timestamps: timestampsView(row),
    created_at: iso(row.createdAt)!,
    updated_at: iso(row.updatedAt)!,
  }
  return position === undefined ? view : { ...view, position }
}

export type JobView = ReturnType<typeof jobView>

import { requirePermission } from '../accounts/actor'
import { isAcknowledged } from '../jobs/acknowledge-job'
import { findJobOrThrow } from '../jobs/job.queries'
import { listJobPhotos, type PhotoListing } from '../jobs/job-photos'
import { listJobSignatures, type SignatureListing } from '../jobs/job-signatures'
import { nextMoves, type JobStatus } from '../jobs/job-status'
import type { JobRow } from '../jobs/job.view'
import type { OperationContext } from '../operations/operation-context'
import { iso } from '../platform/clock'
import { findUnit } from '../units/unit.queries'

/** Statuses in which the page shares the phone's position as the unit's. */
export const SHARING_STATUSES: readonly JobStatus[] = ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination']

/** A note as the driver sees it: internal notes too (the driver works the job), marked as such. */
export interface DriverNote { text: string; customer_visible: boolean; created_at: string }

/** Everything the driver's page shows: this job only. */
export interface DriverPageData {
  job: JobRow
  unitName: string | null
  acknowledged: boolean
  /** The statuses the driver's buttons move to: exactly the table's `driver` moves from here. */
  moves: JobStatus[]
  notes: DriverNote[]
  photos: PhotoListing[]
  signatures: SignatureListing[]
  /** True while the page shares the phone's position. */
  sharing: boolean
  /** Where the customer last said they are (the tracking page's Share my location), or null. */
  customerLocation: { lat: number; lng: number; accuracy_m: number | null; at: string } | null
}

/** Reads the driver's page for a driver context (made from the link: its job only). */
export function readDriverPage(ctx: OperationContext, jobId: string): DriverPageData {
  requirePermission(ctx.actor, 'jobs:drive')
  const job = findJobOrThrow(ctx.db, ctx.scope, jobId)
  const status = job.status as JobStatus
  const notes = ctx.db.$client.query<{ text: string; customer_visible: number; created_at: number }, [string]>(
    'SELECT text, customer_visible, created_at FROM job_notes WHERE job_id = ? ORDER BY created_at, id',
  ).all(job.id).map((n) => ({ text: n.text, customer_visible: n.customer_visible === 1, created_at: iso(n.created_at)! }))
  return {
    job,
    unitName: job.unitId ? findUnit(ctx.db, job.accountId, job.unitId)?.name ?? null : null,
    acknowledged: isAcknowledged(ctx.db, job.id),
    moves: job.archivedAt === null ? nextMoves(status, 'driver', job.unitId !== null).map((m) => m.to) : [],
    notes,
    photos: listJobPhotos(ctx, job.id),
    signatures: listJobSignatures(ctx, job.id),
    sharing: job.archivedAt === null && SHARING_STATUSES.includes(status),
    customerLocation: lastCustomerLocation(ctx, job.id),
  }
}

/** The last position the customer shared for the job (job.customer_located), or null. */
function lastCustomerLocation(ctx: OperationContext, jobId: string): DriverPageData['customerLocation'] {
  const row = ctx.db.$client.query<{ detail: string; created_at: number }, [string]>(
    "SELECT detail, created_at FROM job_events WHERE job_id = ? AND type = 'job.customer_located' ORDER BY seq DESC LIMIT 1",
  ).get(jobId)
  if (!row) return null
  const d = JSON.parse(row.detail) as { lat?: unknown; lng?: unknown; accuracy_m?: unknown }
  if (typeof d.lat !== 'number' || typeof d.lng !== 'number') return null
  return { lat: d.lat, lng: d.lng, accuracy_m: typeof d.accuracy_m === 'number' ? d.accuracy_m : null, at: iso(row.created_at)! }
}

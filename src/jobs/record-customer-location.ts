import { loadWritableJob } from './job-context'
import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { isFinished } from './job-status'
import type { JobRow } from './job.view'

/** A customer's position as their phone gave it: degrees, and the fix's uncertainty in metres when known. */
export interface CustomerLocation {
  lat: number
  lng: number
  accuracyM: number | null
}

/** Larger than any real fix's uncertainty (a cell-tower fix is a few kilometres). */
const MAX_ACCURACY_M = 1_000_000

/**
 * Puts the customer's shared position on their job's timeline (job.customer_located, actor
 * customer, detail lat, lng, accuracy_m): what the dispatcher and the driver look at to find
 * them. Each value is range-checked (422 naming the field); a finished job takes none (409).
 */
export function recordCustomerLocation(ctx: OperationContext, jobId: string, loc: CustomerLocation): JobRow {
  requirePermission(ctx.actor, 'jobs:track')
  const problems: { path: string; message: string }[] = []
  if (!Number.isFinite(loc.lat) || Math.abs(loc.lat) > 90) problems.push({ path: 'lat', message: 'The latitude must be a number from -90 to 90.' })
  if (!Number.isFinite(loc.lng) || Math.abs(loc.lng) > 180) problems.push({ path: 'lng', message: 'The longitude must be a number from -180 to 180.' })
  if (loc.accuracyM !== null && (!Number.isFinite(loc.accuracyM) || loc.accuracyM < 0 || loc.accuracyM > MAX_ACCURACY_M)) {
    problems.push({ path: 'accuracy_m', message: `The accuracy must be a number of metres from 0 to ${MAX_ACCURACY_M}.` })
  }
  if (problems.length) throw validationFailed(problems, 'Your phone did not give a usable location; try again.')
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:track')
    // Once the job is over nobody is coming to find the customer: a position now would mislead.
    if (isFinished(job.status)) throw new AppError('invalid_state', 'This job is finished, so your location is no longer needed.', { reason: 'job_finished', status: job.status })
    const detail = { lat: loc.lat, lng: loc.lng, accuracy_m: loc.accuracyM === null ? null : Math.round(loc.accuracyM * 10) / 10 }
    return commitJobChange(tx, ctx, job, { events: [{ type: 'job.customer_located', detail }] }).after
  })
}

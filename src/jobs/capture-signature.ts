import { inTransaction } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import type { OperationContext } from '../operations/operation-context'
import { photoTypeOf } from './add-photo'
import { commitJobChange } from './commit-job-change'
import { loadWritableJob, type ActionGuard } from './job-context'
import { charCount } from '../platform/chars'

/** The largest signature image taken: a phone's drawing as PNG is tens of kilobytes. */
export const MAX_SIGNATURE_BYTES = 1024 * 1024

/** Signatures one job keeps at most (pickup, drop-off, a few do-overs). */
export const MAX_SIGNATURES_PER_JOB = 20

/**
 * Keeps a signature drawn on the driver's page: a PNG (checked by its bytes) of at most 1 MB
 * and the signer's name (1 to 200 characters), in the database; the timeline gets
 * job.signature_captured (detail.signer_name, detail.signature_id). Only the driver whose link
 * it is captures one.
 */
export function captureSignature(ctx: OperationContext, jobId: string, input: { signerName: string; png: Uint8Array }, guard: ActionGuard = {}): { id: string; bytes: number } {
  const actor = ctx.actor
  if (actor.kind !== 'driver') throw new AppError('forbidden', 'Signatures are captured on the driver\'s page.', { actor: actor.kind, required_permission: 'jobs:drive' })
  const signerName = input.signerName.trim()
  const problems = []
  if (signerName.length < 1 || charCount(signerName) > 200) problems.push({ path: 'signer_name', message: 'must be 1 to 200 characters' })
  if (input.png.length === 0) problems.push({ path: 'signature', message: 'is blank: draw it first' })
  else if (input.png.length > MAX_SIGNATURE_BYTES) problems.push({ path: 'signature', message: 'must be at most 1 MB' })
  else if (photoTypeOf(input.png) !== 'image/png') problems.push({ path: 'signature', message: 'must be a PNG image' })
  if (problems.length) throw validationFailed(problems)
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:drive', guard)
    if (job.unitId !== actor.unitId) throw new AppError('forbidden', 'This job was handed to another driver.', { actor: 'driver', required_permission: 'jobs:drive' })
    const kept = tx.$client.query<{ n: number }, [string]>('SELECT count(*) AS n FROM job_signatures WHERE job_id = ?').get(job.id)!.n
    if (kept >= MAX_SIGNATURES_PER_JOB) throw validationFailed([{ path: 'signature', message: `cannot be saved: this job already has ${MAX_SIGNATURES_PER_JOB} signatures, the most one job keeps` }])
    const now = ctx.clock.now()
    const id = newId('sig', now)
    tx.$client.query('INSERT INTO job_signatures (id, account_id, job_id, signer_name, content_type, bytes, data, unit_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, job.accountId, job.id, signerName, 'image/png', input.png.length, input.png, actor.unitId, now)
    commitJobChange(tx, ctx, job, { events: [{ type: 'job.signature_captured', detail: { signer_name: signerName, signature_id: id } }] })
    return { id, bytes: input.png.length }
  })
}

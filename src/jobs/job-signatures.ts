import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { iso } from '../platform/clock'
import { notFound } from '../platform/errors'
import { findJobOrThrow } from './job.queries'

/** A signature as the pages list it: who signed, which unit captured it, when (never through the API). */
export interface SignatureListing { id: string; signer_name: string; bytes: number; unit_id: string | null; created_at: string }

const permissionOf = (ctx: OperationContext) => (ctx.actor.kind === 'driver' ? 'jobs:drive' : 'jobs:read')

/** The job's signatures, oldest first; 404 for a job the caller cannot see. */
export function listJobSignatures(ctx: OperationContext, jobId: string): SignatureListing[] {
  requirePermission(ctx.actor, permissionOf(ctx))
  const job = findJobOrThrow(ctx.db, ctx.scope, jobId)
  return ctx.db.$client.query<Record<string, any>, [string]>('SELECT id, signer_name, bytes, unit_id, created_at FROM job_signatures WHERE job_id = ? ORDER BY created_at, id').all(job.id)
    .map((r) => ({ id: r.id, signer_name: r.signer_name, bytes: r.bytes, unit_id: r.unit_id, created_at: iso(r.created_at)! }))
}

/** One signature's PNG; 404 unless it belongs to this job and the caller sees the job. */
export function readJobSignature(ctx: OperationContext, jobId: string, signatureId: string): { contentType: string; data: Uint8Array } {
  requirePermission(ctx.actor, permissionOf(ctx))
  const job = findJobOrThrow(ctx.db, ctx.scope, jobId)
  const row = ctx.db.$client.query<{ content_type: string; data: Uint8Array }, [string, string]>('SELECT content_type, data FROM job_signatures WHERE id = ? AND job_id = ?').get(signatureId, job.id)
  if (!row) throw notFound('signature', signatureId)
  return { contentType: row.content_type, data: row.data }
}

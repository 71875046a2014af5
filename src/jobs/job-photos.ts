import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { iso } from '../platform/clock'
import { notFound } from '../platform/errors'
import { findJobOrThrow } from './job.queries'

/** A photo as the job page lists it (never through the API, which sees only job.photo_added). */
export interface PhotoListing { id: string; content_type: string; bytes: number; taken_by: string; user_id: string | null; unit_id: string | null; created_at: string }

/** The job's photos, oldest first; 404 for a job the caller cannot see. */
export function listJobPhotos(ctx: OperationContext, jobId: string): PhotoListing[] {
  requirePermission(ctx.actor, ctx.actor.kind === 'driver' ? 'jobs:drive' : 'jobs:read')
  const job = findJobOrThrow(ctx.db, ctx.scope, jobId)
  return ctx.db.$client.query<Record<string, any>, [string]>('SELECT id, content_type, bytes, taken_by, user_id, unit_id, created_at FROM job_photos WHERE job_id = ? ORDER BY created_at, id').all(job.id)
    .map((r) => ({ id: r.id, content_type: r.content_type, bytes: r.bytes, taken_by: r.taken_by, user_id: r.user_id, unit_id: r.unit_id, created_at: iso(r.created_at)! }))
}

/** One photo's bytes and type; 404 unless it belongs to this job and the caller sees the job. */
export function readJobPhoto(ctx: OperationContext, jobId: string, photoId: string): { contentType: string; data: Uint8Array; sha256: string } {
  requirePermission(ctx.actor, ctx.actor.kind === 'driver' ? 'jobs:drive' : 'jobs:read')
  const job = findJobOrThrow(ctx.db, ctx.scope, jobId)
  const row = ctx.db.$client.query<{ content_type: string; data: Uint8Array; sha256: string }, [string, string]>('SELECT content_type, data, sha256 FROM job_photos WHERE id = ? AND job_id = ?').get(photoId, job.id)
  if (!row) throw notFound('photo', photoId)
  return { contentType: row.content_type, data: row.data, sha256: row.sha256 }
}

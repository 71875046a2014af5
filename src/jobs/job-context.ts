import { and, eq } from 'drizzle-orm'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { AppError } from '../platform/errors'
import { queueText, type TextRequest } from '../texts/queue-text'
import { fanOutJobEvents } from '../webhooks/fan-out'
import type { TemplateName } from '../texts/templates'
import { appendJobEvents, type Actor, type JobEventRow, type NewJobEvent } from './job-events'
import { findMove, isFinished, type JobStatus, type MoveVia } from './job-status'
import { findJobOrThrow, type JobScope } from './job.queries'
import { jobs } from './job.table'
import type { JobRow } from './job.view'
import { sealedLinkOf, trackingUrlOf, type JobLinks } from './job-links'

/** What every job operation runs with: storage, time, who acts, and what they may see. */
export interface JobContext {
  db: Db
  clock: Clock
  /** The public URL and link key job links are made with. */
  links: JobLinks
  scope: JobScope
  actor: Actor
  /** The account's name, used in texts. */
  companyName: string
  /** Country phone numbers without +country are read in. */
  defaultCountry: string
}

/** Loads a job the caller may change: 404 if unseen, 409 invalid_state if archived. */
export function loadWritableJob(ctx: JobContext, db: Db, id: string): JobRow {
  const job = findJobOrThrow(db, ctx.scope, id)
  if (job.archivedAt !== null) throw new AppError('invalid_state', 'This job is archived and cannot be changed. Restore it first.', { archived_at: new Date(job.archivedAt).toISOString() })
  return job
}

const REFUSALS: Record<string, string> = {
  job_finished: 'is finished; only a reopen can move it',
  not_finished: 'is not finished; only completed, cancelled or goa jobs can be reopened',
  unit_required: 'needs a unit before it can move on; assign one first',
  backward: 'cannot move backwards; take the job off its unit (DELETE /jobs/{id}/assign) to go back to confirmed',
  not_allowed: 'cannot make that move',
}

/** Checks a move against the transition table and returns the status columns it sets; 409 job_transition_refused otherwise. */
export function applyMove(job: JobRow, to: JobStatus, via: MoveVia, hasUnit: boolean, nowMs: number): Pick<JobRow, 'status' | 'milestones'> {
  const from = job.status as JobStatus
  const found = findMove(from, to, via, hasUnit)
  if ('refused' in found) {
    throw new AppError('job_transition_refused', `The job is ${from} and ${REFUSALS[found.refused]} (${from} to ${to}).`, { from, to, reason: found.refused })
  }
  const milestones = { ...job.milestones }
  // Milestones are write-once: a reopened job keeps its first run's values.
  milestones[`${to}_at`] ??= nowMs
  if (isFinished(to)) milestones.closed_at ??= nowMs
  if (via === 'reopen') milestones.reopened_at = nowMs
  return { status: to, milestones }
}

/**
 * Writes a change to a job with its timeline events and texts, in the caller's transaction.
 * The update is conditional on the job's event sequence, so of two racing writers exactly one
 * wins; the loser gets 409 job_stale and writes nothing.
 */
export function commitJobChange(
  tx: Db,
  ctx: JobContext,
  before: JobRow,
  set: Partial<JobRow>,
  events: NewJobEvent[],
  texts: (after: JobRow, events: JobEventRow[]) => TextRequest[] = () => [],
): { after: JobRow; events: JobEventRow[] } {
  const now = ctx.clock.now()
  const after: JobRow = { ...before, ...set, updatedAt: now, eventSeq: before.eventSeq + events.length }
  const { id: _id, accountId: _a, createdAt: _c, ...columns } = after
  const updated = tx.update(jobs).set(columns).where(and(eq(jobs.id, before.id), eq(jobs.eventSeq, before.eventSeq))).returning({ id: jobs.id }).all()
  if (updated.length === 0) {
    const current = tx.select({ status: jobs.status }).from(jobs).where(eq(jobs.id, before.id)).get()
    throw new AppError('job_stale', 'The job changed while this request was being handled; nothing was written. Re-read it and retry.', {
      expected_status: before.status, current_status: current?.status ?? null,
    })
  }
  const rows = appendJobEvents(tx, before, before.eventSeq, ctx.actor, events, now)
  for (const text of texts(after, rows)) queueText(tx, text, now)
  fanOutJobEvents(tx, ctx.links, after, rows, now)
  return { after, events: rows }
}

/** Where a customer's text consent came from, for the consent record. */
export function consentSource(ctx: JobContext): string {
  return ctx.actor.keyId ? `api:${ctx.actor.keyId}` : ctx.actor.userId ? `${ctx.actor.kind}:${ctx.actor.userId}` : ctx.actor.kind
}

/** Why a customer text must not go out, or null. */
export function customerSkipReason(job: JobRow): string | null {
  if (job.imported) return 'imported'
  if (!job.customer.sms_consent) return 'no_consent'
  if (!job.customer.phone) return 'no_phone'
  return null
}

/** The values a text template can use for a job; its links keep their tokens sealed, as the outbox stores them. */
export function textValues(ctx: JobContext, job: JobRow): Record<string, string | undefined> {
  const minutes = job.etaAt !== null ? Math.round((job.etaAt - ctx.clock.now()) / 60_000) : null
  return {
    company: ctx.companyName,
    pickup: job.pickup.location.length > 60 ? job.pickup.location.slice(0, 57) + '...' : job.pickup.location,
    tracking_url: sealedLinkOf(ctx.links, 't', job.trackingTokenSealed) ?? trackingUrlOf(ctx.links, job),
    driver_url: sealedLinkOf(ctx.links, 'd', job.driverTokenSealed) ?? undefined,
    eta: minutes !== null && minutes > 0 ? `, arriving in about ${minutes} min` : '',
    job_ref: job.externalRef ?? job.id.slice(-6),
  }
}

/** The customer's text for a job event (queued or skipped). */
export function customerText(ctx: JobContext, job: JobRow, template: TemplateName, event: JobEventRow | undefined): TextRequest {
  return {
    accountId: job.accountId, jobId: job.id, eventId: event?.id, recipient: 'customer', toPhone: job.customer.phone,
    template, values: textValues(ctx, job), skipReason: customerSkipReason(job),
  }
}

/** The customer's text for a status change. */
export function statusText(ctx: JobContext, job: JobRow, event: JobEventRow | undefined): TextRequest {
  return customerText(ctx, job, `status_${job.status}` as TemplateName, event)
}

/** A driver's text (job link, or job taken off them). */
export function driverText(ctx: JobContext, job: JobRow, unit: { id: string; driverPhone: string | null }, template: 'driver_job_link' | 'driver_job_removed', event: JobEventRow | undefined): TextRequest {
  return {
    accountId: job.accountId, jobId: job.id, unitId: unit.id, eventId: event?.id, recipient: 'driver', toPhone: unit.driverPhone,
    template, values: textValues(ctx, job), skipReason: job.imported ? 'imported' : null,
  }
}

/** Validates a cancel or reopen reason: 3 to 500 characters after trimming; 422 job_reason_required otherwise. */
export function requireReason(raw: string | undefined | null, field: 'cancel_reason' | 'reason', what: string): string {
  const reason = (raw ?? '').trim()
  if (reason.length < 3 || reason.length > 500) {
    throw new AppError('job_reason_required', `${what} needs a ${field} of 3 to 500 characters.`, { field, length: reason.length })
  }
  return reason
}

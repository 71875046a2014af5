import type { Db } from '../db/client'
import { newId } from '../platform/ids'
import { jobEvents } from './job.table'

/**
 * The event catalog: every job event type the service emits (webhooks use the same names).
 * `ping` is not a job event: it goes to one webhook endpoint and never on a timeline.
 */
export const JOB_EVENT_TYPES = [
  'job.created', 'job.status_changed', 'job.assigned', 'job.reassigned', 'job.unassigned', 'job.quote_updated',
  'job.eta_updated', 'job.note_added', 'job.customer_located', 'job.photo_added', 'job.payment_updated',
  'job.driver_acknowledged', 'job.customer_message', 'job.rating_received', 'job.payment_link_opened',
  'job.archived', 'job.restored', 'job.signature_captured', 'job.reopened', 'job.updated',
] as const
export type JobEventType = (typeof JOB_EVENT_TYPES)[number]
/** Every type a webhook endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = ['ping', ...JOB_EVENT_TYPES] as const

/** Who caused an event: API keys and the service itself are `system`. */
export interface Actor {
  kind: 'system' | 'dispatcher' | 'driver' | 'customer'
  keyId?: string
  userId?: string
}

export interface NewJobEvent {
  type: JobEventType
  from?: string | null
  to?: string | null
  detail?: Record<string, unknown>
}

export type JobEventRow = typeof jobEvents.$inferSelect

/**
 * Appends events to a job's timeline inside the caller's transaction, numbering them after
 * `seqBefore`. Returns the rows written; the caller stores the new `event_seq` on the job.
 */
export function appendJobEvents(
  tx: Db,
  job: { id: string; accountId: string },
  seqBefore: number,
  actor: Actor,
  events: NewJobEvent[],
  nowMs: number,
): JobEventRow[] {
  const who: Record<string, unknown> = {}
  if (actor.keyId) who.key_id = actor.keyId
  if (actor.userId) who.user_id = actor.userId
  const rows: JobEventRow[] = events.map((e, i) => ({
    id: newId('evt', nowMs),
    accountId: job.accountId,
    jobId: job.id,
    seq: seqBefore + i + 1,
    type: e.type,
    fromStatus: e.from ?? null,
    toStatus: e.to ?? null,
    actor: actor.kind,
    detail: { ...(e.detail ?? {}), ...who },
    createdAt: nowMs,
  }))
  if (rows.length) tx.insert(jobEvents).values(rows).run()
  return rows
}

/** The timeline event as the API shows it. */
export function jobEventView(e: JobEventRow) {
  return {
    object: 'job_event' as const,
    id: e.id,
    job_id: e.jobId,
    type: e.type,
    from: e.fromStatus,
    to: e.toStatus,
    actor: e.actor as Actor['kind'],
    detail: e.detail,
    sequence: e.seq,
    created_at: new Date(e.createdAt).toISOString(),
  }
}

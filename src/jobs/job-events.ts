import type { Db } from '../db/client'
import { newId } from '../platform/ids'
import type { jobEvents } from './job.table'

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
  const insert = tx.$client.query<unknown, [string, string, string, number, string, string | null, string | null, string, string, number]>(
    'INSERT INTO job_events (id, account_id, job_id, seq, type, from_status, to_status, actor, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  for (const r of rows) insert.run(r.id, r.accountId, r.jobId, r.seq, r.type, r.fromStatus, r.toStatus, r.actor, JSON.stringify(r.detail), r.createdAt)
  return rows
}

/** Lists a job's timeline oldest first after a sequence number (cached statement, no builder). */
export function listJobEventRows(db: Db, jobId: string, afterSeq: number, limit: number): JobEventRow[] {
  return db.$client.query<Record<string, any>, [string, number, number]>('SELECT * FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?')
    .all(jobId, afterSeq, limit)
    .map((r) => ({ id: r.id, accountId: r.account_id, jobId: r.job_id, seq: r.seq, type: r.type, fromStatus: r.from_status, toStatus: r.to_status, actor: r.actor, detail: JSON.parse(r.detail), createdAt: r.created_at }))
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

import type { ActorKind } from '../accounts/actor'
import type { Db } from '../db/client'
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

export interface NewJobEvent {
  type: JobEventType
  from?: string | null
  to?: string | null
  detail?: Record<string, unknown>
}

export type JobEventRow = typeof jobEvents.$inferSelect

/** Maps a raw job_events row (snake_case, detail as JSON text) to a JobEventRow. */
export function toJobEventRow(r: Record<string, any>): JobEventRow {
  return { id: r.id, accountId: r.account_id, jobId: r.job_id, seq: r.seq, type: r.type, fromStatus: r.from_status, toStatus: r.to_status, actor: r.actor, detail: JSON.parse(r.detail), createdAt: r.created_at, position: r.position }
}

/** Lists a job's timeline oldest first after a sequence number (cached statement, no builder). */
export function listJobEventRows(db: Db, jobId: string, afterSeq: number, limit: number): JobEventRow[] {
  return db.$client.query<Record<string, any>, [string, number, number]>('SELECT * FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?')
    .all(jobId, afterSeq, limit)
    .map(toJobEventRow)
}

/** The job's latest event of one of these types, or undefined. */
export function findLatestJobEvent(db: Db, jobId: string, types: readonly JobEventType[]): JobEventRow | undefined {
  const raw = db.$client.query<Record<string, any>, string[]>(
    `SELECT * FROM job_events WHERE job_id = ? AND type IN (${types.map(() => '?').join(', ')}) ORDER BY seq DESC LIMIT 1`,
  ).get(jobId, ...types)
  return raw ? toJobEventRow(raw) : undefined
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
    actor: e.actor as ActorKind,
    detail: e.detail,
    sequence: e.seq,
    created_at: new Date(e.createdAt).toISOString(),
  }
}

import { actorDetail } from '../accounts/actor'
import type { Db } from '../db/client'
import { AppError } from '../platform/errors'
import { searchFold } from '../platform/chars'
import { newId } from '../platform/ids'
import type { OperationContext } from '../operations/operation-context'
import type { JobEventRow, NewJobEvent } from './job-events'
import type { LinkKind, RetireReason } from './job-links'
import { findMove, isFinished, type JobStatus, type MoveVia } from './job-status'
import type { JobRow } from './job.view'

/** Columns a change may set as plain fields: everything but the status, its milestones and the bookkeeping the commit owns. */
export type JobFields = Partial<Omit<JobRow, 'id' | 'accountId' | 'createdAt' | 'updatedAt' | 'status' | 'milestones' | 'eventSeq'>>

/** One change to a job, as an operation asks for it. */
export interface JobChange {
  /** Plain fields. A status here is refused: statuses change only through `move`. */
  set?: JobFields
  /** The operation's own events, in order (never job.status_changed: the move writes it). */
  events?: NewJobEvent[]
  /** A status move through the transition table: stamps its milestone and appends job.status_changed after `events`. */
  move?: { to: JobStatus; via: MoveVia; detail?: Record<string, unknown> }
  /** When it happened; the clock's now unless the operation read it already (and named it in an event). */
  nowMs?: number
  /** Events that follow the status event (a PATCH's new ETA, told after the move it came with). */
  eventsAfterMove?: NewJobEvent[]
  /**
   * The links this change takes away, and why: each one's hash (the job's before the change) is
   * kept in retired_links, so its page answers 410 instead of 404. A change that replaces or
   * clears a live link must name it here (the commit refuses one that does not).
   */
  retireLinks?: Partial<Record<LinkKind, RetireReason>>
}

/** A change as it was written, handed to each writer inside the transaction. */
export interface CommittedJobChange {
  ctx: OperationContext
  /** The job before the change, or null when it was just created. */
  before: JobRow | null
  after: JobRow
  /** The timeline events written, in order, with their global positions. */
  events: JobEventRow[]
  nowMs: number
}

/** Turns a committed change into outbox rows (webhook events, texts) inside the same transaction. */
export type JobWriter = (tx: Db, change: CommittedJobChange) => void

const REFUSALS: Record<string, string> = {
  job_finished: 'is finished; only a reopen can move it',
  not_finished: 'is not finished; only completed, cancelled or goa jobs can be reopened',
  unit_required: 'needs a unit before it can move on; assign one first',
  backward: 'cannot move backwards; take the job off its unit (DELETE /jobs/{id}/assign) to go back to confirmed',
  not_allowed: 'cannot make that move',
}

/** Checks a move against the transition table; 409 job_transition_refused (details.from, to, reason) when it is not there. */
export function checkMove(job: Pick<JobRow, 'status' | 'unitId'>, to: JobStatus, via: MoveVia, unitId: string | null = job.unitId): void {
  const from = job.status as JobStatus
  const found = findMove(from, to, via, unitId !== null)
  if ('refused' in found) {
    throw new AppError('job_transition_refused', `The job is ${from} and ${REFUSALS[found.refused]} (${from} to ${to}).`, { from, to, reason: found.refused })
  }
}

const OWNED_BY_COMMIT = ['status', 'milestones', 'eventSeq', 'id', 'accountId', 'createdAt', 'updatedAt']

/**
 * Writes a change to a job, inside the caller's transaction: the move (checked against the
 * transition table, its milestone stamped once, job.status_changed after the operation's own
 * events), the fields, the timeline, then every registered writer (webhook outbox, texts). The
 * update is conditional on the job's event sequence, so of two racing writers exactly one wins;
 * the loser gets 409 job_stale and writes nothing. After the transaction commits, the bus hears.
 */
export function commitJobChange(tx: Db, ctx: OperationContext, before: JobRow, change: JobChange): { after: JobRow; events: JobEventRow[] } {
  for (const key of Object.keys(change.set ?? {})) {
    if (OWNED_BY_COMMIT.includes(key)) {
      throw new AppError('internal_error', `A job's ${key} is not a plain field: the commit owns it${key === 'status' ? ' (statuses change only through a move)' : ''}.`, { field: key })
    }
  }
  checkRetiredLinks(before, change.set ?? {}, change.retireLinks ?? {})
  const own = change.events ?? []
  const later = change.eventsAfterMove ?? []
  if ([...own, ...later].some((e) => e.type === 'job.status_changed')) throw new AppError('internal_error', 'job.status_changed is written by the move, not by an operation.')
  const now = change.nowMs ?? ctx.clock.now()
  let status = before.status
  let milestones = before.milestones
  const events = [...own]
  if (change.move) {
    const { to, via } = change.move
    checkMove({ status: before.status, unitId: change.set && 'unitId' in change.set ? change.set.unitId ?? null : before.unitId }, to, via)
    milestones = { ...milestones }
    // Milestones are write-once: a reopened job keeps its first run's values.
    milestones[`${to}_at`] ??= now
    if (isFinished(to)) milestones.closed_at ??= now
    if (via === 'reopen') milestones.reopened_at = now
    status = to
    events.push({ type: 'job.status_changed', from: before.status, to, detail: change.move.detail ?? {} })
  }
  events.push(...later)
  const after: JobRow = { ...before, ...change.set, status, milestones, updatedAt: now, eventSeq: before.eventSeq + events.length }
  if (!updateJobRow(tx, before, after)) {
    const current = tx.$client.query<{ status: string }, [string]>('SELECT status FROM jobs WHERE id = ?').get(before.id)
    throw new AppError('job_stale', 'The job changed while this request was being handled; nothing was written. Re-read it and retry.', {
      expected_status: before.status, current_status: current?.status ?? null,
    })
  }
  retireLinks(tx, before, after, change.retireLinks ?? {}, now)
  const rows = appendJobEvents(tx, after, before.eventSeq, ctx, events, now)
  return finish(tx, ctx, before, after, rows, now)
}

const HASH_OF: Record<LinkKind, 'trackingTokenHash' | 'driverTokenHash'> = { tracking: 'trackingTokenHash', driver: 'driverTokenHash' }

/** Checks that a live link is changed only with a reason, before anything is written; internal_error otherwise. */
function checkRetiredLinks(before: JobRow, set: JobFields, retire: Partial<Record<LinkKind, RetireReason>>): void {
  for (const kind of Object.keys(HASH_OF) as LinkKind[]) {
    const col = HASH_OF[kind]
    const old = before[col]
    const changes = col in set && set[col] !== old
    if (retire[kind] && !(old && changes)) throw new AppError('internal_error', `The change retires the job's ${kind} link but does not replace or clear a live one.`, { kind })
    // A link that dies without a record would answer 404 like one that never existed.
    if (old && changes && !retire[kind]) throw new AppError('internal_error', `The change replaces the job's ${kind} link without saying why (retireLinks).`, { kind })
  }
}

/** Keeps the hashes of the links the change took away (retired_links), in the change's transaction. */
function retireLinks(tx: Db, before: JobRow, after: JobRow, retire: Partial<Record<LinkKind, RetireReason>>, nowMs: number): void {
  for (const [kind, reason] of Object.entries(retire) as [LinkKind, RetireReason][]) {
    tx.$client.query('INSERT INTO retired_links (token_hash, kind, account_id, job_id, reason, retired_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(before[HASH_OF[kind]]!, kind, after.accountId, after.id, reason, nowMs)
  }
}

/**
 * Writes a new job and its job.created event, inside the caller's transaction, through the same
 * writers as every change. Its status and first milestone are the caller's (a create or an import).
 */
export function commitNewJob(tx: Db, ctx: OperationContext, row: JobRow, created: NewJobEvent & { type: 'job.created' }): { after: JobRow; events: JobEventRow[] } {
  const after: JobRow = { ...row, eventSeq: 1 }
  insertJobRow(tx, after)
  const rows = appendJobEvents(tx, after, 0, ctx, [created], after.createdAt)
  return finish(tx, ctx, null, after, rows, after.createdAt)
}

function finish(tx: Db, ctx: OperationContext, before: JobRow | null, after: JobRow, events: JobEventRow[], nowMs: number) {
  const committed: CommittedJobChange = { ctx, before, after, events, nowMs }
  for (const write of ctx.jobWriters) write(tx, committed)
  // A microtask runs once the caller's synchronous transaction has committed (or rolled back:
  // the bus then reads nothing new).
  queueMicrotask(ctx.afterCommit)
  return { after, events }
}

/**
 * Appends events to a job's timeline, numbering them after `seqBefore` and giving each the next
 * global position (MAX + 1 in this write transaction: positions grow in commit order).
 */
function appendJobEvents(tx: Db, job: JobRow, seqBefore: number, ctx: OperationContext, events: NewJobEvent[], nowMs: number): JobEventRow[] {
  const who = actorDetail(ctx.actor)
  const insert = tx.$client.query<{ position: number }, [string, string, string, number, string, string | null, string | null, string, string, number]>(
    `INSERT INTO job_events (id, account_id, job_id, seq, type, from_status, to_status, actor, detail, created_at, position)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT IFNULL(MAX(position), 0) + 1 FROM job_events)) RETURNING position`,
  )
  return events.map((e, i) => {
    const row: JobEventRow = {
      id: newId('evt', nowMs), accountId: job.accountId, jobId: job.id, seq: seqBefore + i + 1, type: e.type,
      fromStatus: e.from ?? null, toStatus: e.to ?? null, actor: ctx.actor.kind, detail: { ...(e.detail ?? {}), ...who }, createdAt: nowMs, position: 0,
    }
    row.position = insert.get(row.id, row.accountId, row.jobId, row.seq, row.type, row.fromStatus, row.toStatus, row.actor, JSON.stringify(row.detail), row.createdAt)!.position
    return row
  })
}

const JOB_COLUMNS = [
  'id', 'account_id', 'site_id', 'external_ref', 'source', 'payer_type', 'service_type', 'urgency', 'customer', 'vehicle', 'pickup',
  'destination', 'status', 'cancel_reason', 'rating', 'rating_comment', 'rated_at', 'reopen_count', 'eta_at', 'quote_cents',
  'final_price_cents', 'payment_method', 'unit_id', 'commercial_account_id', 'tracking_token_hash', 'tracking_token_sealed', 'driver_token_hash', 'driver_token_sealed', 'milestones', 'event_seq', 'imported',
  'archived_at', 'created_at', 'updated_at', 'search_text',
] as const

/** The jobs list's search text of a row (search-jobs.ts): its customer's name and its reference, folded. */
export function searchTextOf(r: Pick<JobRow, 'customer' | 'externalRef'>): string {
  return `${searchFold(r.customer.name)}\n${searchFold(r.externalRef ?? '')}`
}

/** The row's values in JOB_COLUMNS order. */
function columnValues(r: JobRow) {
  return [
    r.id, r.accountId, r.siteId, r.externalRef, r.source, r.payerType, r.serviceType, r.urgency, JSON.stringify(r.customer),
    JSON.stringify(r.vehicle), JSON.stringify(r.pickup), r.destination, r.status, r.cancelReason, r.rating, r.ratingComment,
    r.ratedAt, r.reopenCount, r.etaAt, r.quoteCents, r.finalPriceCents, r.paymentMethod, r.unitId, r.commercialAccountId, r.trackingTokenHash, r.trackingTokenSealed, r.driverTokenHash, r.driverTokenSealed,
    JSON.stringify(r.milestones), r.eventSeq, r.imported ? 1 : 0, r.archivedAt, r.createdAt, r.updatedAt, searchTextOf(r),
  ] as const
}

const INSERT_JOB = `INSERT INTO jobs (${JOB_COLUMNS.join(', ')}) VALUES (${JOB_COLUMNS.map(() => '?').join(', ')})`
const UPDATE_JOB = `UPDATE jobs SET ${JOB_COLUMNS.slice(1).map((c) => `${c} = ?`).join(', ')} WHERE id = ? AND event_seq = ?`

/** Inserts a job row with a cached statement (creation is the hot write path). */
function insertJobRow(tx: Db, r: JobRow): void {
  tx.$client.query(INSERT_JOB).run(...columnValues(r))
}

/** Writes every column of `after` if the row still has `before`'s event sequence; false when another writer came first. */
function updateJobRow(tx: Db, before: JobRow, after: JobRow): boolean {
  const [, ...values] = columnValues(after)
  return tx.$client.query(UPDATE_JOB).run(...values, before.id, before.eventSeq).changes === 1
}

import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { AppError, validationFailed } from '../platform/errors'
import { iso } from '../platform/clock'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { loadWritableJob } from './job-context'
import type { JobRow } from './job.view'
import { charCount } from '../platform/chars'

/** The longest rating comment kept. */
export const RATING_COMMENT_MAX = 1000

/** A customer's rating as the tracking page posts it. */
export interface RatingInput {
  /** A whole number from 1 to 5. */
  rating: number
  /** Free text, or null. */
  comment: string | null
}

/**
 * The customer rates a completed job: sets rating, rating_comment and rated_at and emits
 * job.rating_received (actor customer). One rating per run: a second is refused (409
 * invalid_state, reason already_rated) until a reopen clears it (reopen-job.ts).
 */
export function rateJob(ctx: OperationContext, jobId: string, input: RatingInput): JobRow {
  requirePermission(ctx.actor, 'jobs:track')
  const problems: { path: string; message: string }[] = []
  if (!Number.isInteger(input.rating) || input.rating < 1 || input.rating > 5) problems.push({ path: 'rating', message: 'Choose a rating from 1 to 5.' })
  const comment = input.comment?.trim() || null
  if (comment !== null && charCount(comment) > RATING_COMMENT_MAX) problems.push({ path: 'comment', message: `The comment can be at most ${RATING_COMMENT_MAX} characters.` })
  if (problems.length) throw validationFailed(problems, problems[0]!.message)
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, jobId, 'jobs:track')
    if (job.status !== 'completed') throw new AppError('invalid_state', 'The job can be rated once it is completed.', { reason: 'not_completed', status: job.status })
    if (job.rating !== null) throw new AppError('invalid_state', 'Thank you: this job was already rated, and one rating is kept.', { reason: 'already_rated', rated_at: iso(job.ratedAt) })
    const now = ctx.clock.now()
    return commitJobChange(tx, ctx, job, {
      set: { rating: input.rating, ratingComment: comment, ratedAt: now },
      events: [{ type: 'job.rating_received', detail: { rating: input.rating, comment, rated_at: iso(now) } }],
      nowMs: now,
    }).after
  })
}

import type { Config } from '../config'
import { findAccountById } from '../accounts/account.queries'
import type { Db } from '../db/client'
import { findJobByLink } from '../jobs/find-job-by-link'
import type { JobRow } from '../jobs/job.view'
import type { Clock } from '../platform/clock'
import { AppError } from '../platform/errors'
import { goneSentence } from '../pages/gone-links'

/** What a tracking token leads to now: the job while the link lives, the sentence of a dead one, or nothing at all. */
export type TrackingLookup = { job: JobRow } | { gone: string; reason: string } | null

/** Looks a tracking token up (findJobByLink: by its hash, the lifetime setting applied at the clock's now). */
export function lookUpTracking(deps: { db: Db; clock: Clock; config: Pick<Config, 'trackingLinkMs'> }, token: string): TrackingLookup {
  const found = findJobByLink(deps.db, 'tracking', token, { nowMs: deps.clock.now(), trackingLinkMs: deps.config.trackingLinkMs })
  if (!found) return null
  if ('job' in found) return found
  const company = findAccountById(deps.db, found.accountId)?.name ?? 'the towing company'
  return { gone: goneSentence('tracking', found.gone, company), reason: found.gone }
}

/**
 * The job of a live tracking link, or the error its page answers: 410 link_gone for a link that
 * was replaced or expired, and for a token that never was one the same 404 as any address
 * with no page, so nothing tells a live token from a guess.
 */
export function trackedJob(deps: Parameters<typeof lookUpTracking>[0], token: string): JobRow {
  const found = lookUpTracking(deps, token)
  if (found && 'job' in found) return found.job
  if (found) throw new AppError('link_gone', found.gone, { reason: found.reason })
  throw new AppError('not_found', 'There is no page at this address.')
}

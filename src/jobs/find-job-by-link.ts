import type { Db } from '../db/client'
import { hashToken } from '../platform/sealed'
import { LINK_TOKEN, type LinkKind, type RetireReason } from './job-links'
import { toJobRow, type RawJob } from './job.queries'
import { isFinished } from './job-status'
import type { JobRow } from './job.view'

/** How long a driver's link works after the job finished (pages.md: 24 hours). */
export const DRIVER_LINK_AFTER_FINISH_MS = 24 * 3_600_000

/** Why a link leads nowhere any more: retired (replaced, reassigned, unassigned) or expired after the job finished. */
export type GoneReason = RetireReason | 'expired'

/** What a link leads to: its job while live, or the job it belonged to and why it is gone. */
export type LinkLookup = { job: JobRow } | { gone: GoneReason; accountId: string; jobId: string }

/** How long links live after their job finished, at this moment (the clock's now, TOWLINE_TRACKING_LINK_DAYS). */
export interface LinkLife { nowMs: number; trackingLinkMs: number }

// One statement probes both the live links and the retired ones, whatever the token: a live link
// and an unknown one cost the same two index lookups. Only the token's SHA-256 is compared, in
// SQLite's index, so timing says nothing about how much of a guess was right.
const LOOKUP: Record<LinkKind, string> = {
  tracking: `SELECT j.*, NULL AS retired_reason FROM jobs j WHERE j.tracking_token_hash = ?1
    UNION ALL SELECT j.*, r.reason AS retired_reason FROM retired_links r JOIN jobs j ON j.id = r.job_id WHERE r.token_hash = ?1 AND r.kind = 'tracking'`,
  driver: `SELECT j.*, NULL AS retired_reason FROM jobs j WHERE j.driver_token_hash = ?1
    UNION ALL SELECT j.*, r.reason AS retired_reason FROM retired_links r JOIN jobs j ON j.id = r.job_id WHERE r.token_hash = ?1 AND r.kind = 'driver'`,
}

/**
 * Finds what a tracking or driver link's token leads to: `{ job }` while it is live, `{ gone }`
 * once it was retired or expired (a driver's link 24 hours after the job finished, a tracking
 * link `trackingLinkMs` after), null for a token that never was one. A token that is not 24
 * base62 characters is null without a lookup.
 */
export function findJobByLink(db: Db, kind: LinkKind, token: string, life: LinkLife): LinkLookup | null {
  if (!LINK_TOKEN.test(token)) return null
  const raw = db.$client.query<RawJob & { retired_reason: RetireReason | null }, [string]>(LOOKUP[kind]).get(hashToken(token))
  if (!raw) return null
  const job = toJobRow(raw)
  if (raw.retired_reason) return { gone: raw.retired_reason, accountId: job.accountId, jobId: job.id }
  const finished = finishedAt(db, job)
  const lifetime = kind === 'driver' ? DRIVER_LINK_AFTER_FINISH_MS : life.trackingLinkMs
  if (finished !== null && life.nowMs - finished > lifetime) return { gone: 'expired', accountId: job.accountId, jobId: job.id }
  return { job }
}

/** When the job last finished, or null while it runs. */
function finishedAt(db: Db, job: JobRow): number | null {
  if (!isFinished(job.status)) return null
  const m = job.milestones
  if (m.reopened_at === undefined) return m[`${job.status}_at`] ?? m.closed_at ?? job.updatedAt
  // Milestones keep the first run's times after a reopen; a finished job moves only by reopen,
  // so its latest status change is the finish of this run.
  const last = db.$client.query<{ created_at: number }, [string]>(
    "SELECT created_at FROM job_events WHERE job_id = ? AND type = 'job.status_changed' ORDER BY seq DESC LIMIT 1",
  ).get(job.id)
  return last?.created_at ?? job.updatedAt
}

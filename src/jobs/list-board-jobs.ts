import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { FINISHED, STATUSES } from './job-status'
import { toJobRow } from './job.queries'
import { presentJobs } from './present-job'
import { latestCustomerMessages, type LatestCustomerMessage } from './customer-messages'

/** The statuses the board shows, one column each, in board order. */
export const BOARD_STATUSES = STATUSES.filter((s) => !FINISHED.includes(s))

/** At most this many jobs on a board (oldest first); a company past it has a backlog to clear, not a board to read. */
export const BOARD_LIMIT = 1000

/** The dispatch board: every unfinished, unarchived job the actor may see, oldest first, as GET /jobs shows each. */
export function listBoardJobs(ctx: OperationContext) {
  requirePermission(ctx.actor, 'jobs:read')
  const { scope } = ctx
  const params: (string | number)[] = [scope.accountId, ...BOARD_STATUSES]
  let sites = ''
  if (scope.siteIds) { sites = ` AND site_id IN (${scope.siteIds.map(() => '?').join(',')})`; params.push(...scope.siteIds) }
  const rows = ctx.db.$client.query<Record<string, any>, (string | number)[]>(
    `SELECT * FROM jobs WHERE account_id = ? AND status IN (${BOARD_STATUSES.map(() => '?').join(',')}) AND archived_at IS NULL${sites} ORDER BY created_at, id LIMIT ?`,
  ).all(...params, BOARD_LIMIT).map(toJobRow)
  return presentJobs(ctx.db, ctx.links, rows)
}

/** The newest customer message of each of these board jobs (the caller's own listing), for their cards. */
export function boardCustomerMessages(ctx: OperationContext, jobs: readonly { id: string }[]): Map<string, LatestCustomerMessage> {
  requirePermission(ctx.actor, 'jobs:read')
  return latestCustomerMessages(ctx.db, jobs.map((j) => j.id))
}

import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { findAccountById } from '../accounts/account.queries'
import { findJobByLink, type GoneReason } from '../jobs/find-job-by-link'
import type { LinkKind } from '../jobs/job-links'
import { AppError } from '../platform/errors'
import { routeProps } from '../platform/route-props'

/** What the holder of a dead link is told, by kind and reason. */
export function goneSentence(kind: LinkKind, reason: GoneReason, company: string): string {
  if (kind === 'tracking') {
    return reason === 'expired'
      ? `This tracking link has expired: the job finished some time ago. Contact ${company} if you need anything more.`
      : `This tracking link was replaced. Ask ${company} for the new one.`
  }
  if (reason === 'expired') return 'This job link has expired: the job finished more than 24 hours ago.'
  if (reason === 'replaced') return 'This job link was replaced by a newer one: open the link in the latest text.'
  return 'This job was handed to another driver.'
}

/**
 * GET /t/{token} and /d/{token}: a tracking or driver link that was replaced, taken back or
 * expired answers 410 with a page saying so, at once. A live link answers like a token that
 * never was one (404) until the tracking and driver pages are built.
 */
export function linkRoutes(deps: RouteDeps) {
  const open = (kind: LinkKind, token: string): never => {
    const found = findJobByLink(deps.db, kind, token, { nowMs: deps.clock.now(), trackingLinkMs: deps.config.trackingLinkMs })
    if (found && 'gone' in found) {
      const company = findAccountById(deps.db, found.accountId)?.name ?? 'the towing company'
      throw new AppError('link_gone', goneSentence(kind, found.gone, company), { reason: found.gone })
    }
    // Worded as for any address with no page: nothing tells a live token from a guess.
    throw new AppError('not_found', 'There is no page at this address.')
  }
  return new Elysia().use(routeProps)
    .get('/t/:token', ({ params }) => open('tracking', params.token), { detail: { hide: true } })
}

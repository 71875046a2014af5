import type { GoneReason } from '../jobs/find-job-by-link'
import type { LinkKind } from '../jobs/job-links'

/**
 * What the holder of a dead link is told, by kind and reason: the 410 pages of the tracking
 * page (src/tracking) and the driver's page (src/driver) say it, so a dead link reads the same
 * wherever it is opened.
 */
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

import { randomBase62 } from '../platform/ids'
import { hashToken, seal, unseal } from '../platform/sealed'
import type { JobRow } from './job.view'

/**
 * What a job's secret links are made with: the public URL they start with, and the key their
 * tokens are sealed under. The database keeps each token's SHA-256 (for lookups) and the token
 * sealed with this key (to show the link again); never the token in clear.
 */
export interface JobLinks {
  publicUrl: string
  key: Buffer
}

/** A fresh link token (24 base62 characters, 142 bits) with its hash and sealed form. */
export function mintLinkToken(links: JobLinks): { token: string; hash: string; sealed: string } {
  const token = randomBase62(24)
  return { token, hash: hashToken(token), sealed: seal(links.key, token) }
}

// Opening a sealed token costs a few microseconds; job reads are hot, so opened tokens are kept.
const opened = new Map<string, string>()

/** Opens a sealed token (cached); null when it was sealed under another key. */
function open(links: JobLinks, sealed: string): string | null {
  const hit = opened.get(sealed)
  if (hit !== undefined) return hit
  const token = unseal(links.key, sealed)
  if (token === null) return null
  if (opened.size >= 50_000) opened.clear()
  opened.set(sealed, token)
  return token
}

/** The absolute URL of the customer's tracking page (rendering never throws; a link sealed under another key shows as unavailable). */
export function trackingUrlOf(links: JobLinks, row: Pick<JobRow, 'trackingTokenSealed'>): string {
  const token = row.trackingTokenSealed ? open(links, row.trackingTokenSealed) : null
  return `${links.publicUrl}/t/${token ?? 'link-unavailable'}`
}

/** The absolute URL of the driver's page for the job, or null when no driver holds it. */
export function driverUrlOf(links: JobLinks, row: Pick<JobRow, 'driverTokenSealed'>): string | null {
  if (!row.driverTokenSealed) return null
  const token = open(links, row.driverTokenSealed)
  return token === null ? null : `${links.publicUrl}/d/${token}`
}

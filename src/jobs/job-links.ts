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

/** The two kinds of job link: the customer's tracking page (`/t/`) and the driver's page (`/d/`). */
export type LinkKind = 'tracking' | 'driver'

/**
 * Why a link that was live stopped working, as `retired_links.reason` keeps it: a new tracking
 * link (`replaced`; also a driver link re-minted for the same unit), or a driver link taken
 * back by giving the job to another unit (`reassigned`) or to none (`unassigned`).
 */
export type RetireReason = 'replaced' | 'reassigned' | 'unassigned'

/** A link token as the pages take it from a URL: 24 base62 characters, exactly what mintLinkToken makes. */
export const LINK_TOKEN = /^[0-9A-Za-z]{24}$/

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

/** A job link as a stored text holds it: the token left sealed as the job keeps it (openLinksIn shows it), or null. */
export function sealedLinkOf(links: JobLinks, kind: 't' | 'd', sealed: string | null): string | null {
  return sealed ? `${links.publicUrl}/${kind}/{sealed:${sealed}}` : null
}

/** A tracking (`/t/`) or driver (`/d/`) link's token in a text, and the sealed form stored in its place. */
const CLEAR_LINK = /\/([td])\/([0-9A-Za-z]{24})(?![0-9A-Za-z])/g
const SEALED_LINK = /\/([td])\/\{sealed:([0-9A-Za-z_-]+)\}/g

/**
 * Seals the link tokens in a text about to be stored (a text's body, a webhook payload, a kept
 * response): `/t/<token>` becomes `/t/{sealed:...}`, so the row holds no token in clear.
 */
export function sealLinksIn(links: JobLinks, text: string): string {
  return text.replace(CLEAR_LINK, (_, kind: string, token: string) => `/${kind}/{sealed:${seal(links.key, token)}}`)
}

/** Puts back the links `sealLinksIn` sealed (one sealed under another key shows as link-unavailable). */
export function openLinksIn(links: JobLinks, text: string): string {
  if (!text.includes('{sealed:')) return text
  return text.replace(SEALED_LINK, (_, kind: string, sealed: string) => `/${kind}/${open(links, sealed) ?? 'link-unavailable'}`)
}

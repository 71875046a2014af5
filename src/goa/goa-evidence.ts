import { requirePermission } from '../accounts/actor'
import { listKeys } from '../accounts/account.queries'
import { jobEventView, listJobEventRows } from '../jobs/job-events'
import { listJobPhotos, type PhotoListing } from '../jobs/job-photos'
import { listJobSignatures, type SignatureListing } from '../jobs/job-signatures'
import { findJobOrThrow } from '../jobs/job.queries'
import type { JobView } from '../jobs/job.view'
import { presentJob } from '../jobs/present-job'
import type { OperationContext } from '../operations/operation-context'
import { AppError } from '../platform/errors'
import { listJobTexts } from '../texts/list-texts'
import type { TextMessage } from '../texts/text.model'
import { findUnit } from '../units/unit.queries'
import { nearestFix } from '../units/position-history'
import { listUsers } from '../users/user.queries'

/** A timeline event as the pack reads it. */
type PackEvent = ReturnType<typeof jobEventView>

/** Who did something, in words: the actor and the user, key or unit it names. */
export interface Doer { actor: string; name: string | null }

/** A place and time someone's phone reported, with how it stands to the pickup and the arrival. */
export interface Fix {
  lat: number
  lng: number
  accuracy_m: number | null
  at: string
  /** Metres from the pickup's coordinates; null when the pickup has none. */
  from_pickup_m: number | null
  /** Milliseconds after the arrival (negative: before); null without an arrival. */
  from_arrival_ms: number | null
}

/** The unit's fix, and where it falls in the job's run. */
export interface UnitFix extends Fix {
  /** Before the arrival, between the arrival and the GOA, or after the GOA. */
  when: 'before_arrival' | 'on_scene' | 'after_goa'
}

/** One line of the conversation with the customer. */
export interface ConversationLine {
  at: string
  /** `in`: the customer wrote; `out`: a text or a customer-visible note went to them. */
  direction: 'in' | 'out'
  /** `sms` / `tracking_page` for theirs; `text` (the outbox) or `note` (shown on their tracking page) for ours. */
  via: 'sms' | 'tracking_page' | 'text' | 'note'
  text: string
  /** Where a text got to (queued, sent, delivered, failed, skipped), with why it was skipped or failed. */
  status?: string
  why?: string | null
  /** The number texted. */
  to?: string | null
}

/** Everything the GOA evidence pack shows, read for a session of the job's account. */
export interface GoaEvidence {
  job: JobView
  /** The status change that ended the job GOA (the latest), who made it (null for an imported job: its milestone) and the reason given. */
  goa: { at: string; by: Doer | null; reason: string | null }
  /** The arrival on scene (the on_scene move) of the same run, before the GOA; null when the job never arrived in that run. */
  arrival: { at: string; by: Doer | null } | null
  /** Milliseconds from the arrival to the GOA. */
  on_scene_ms: number | null
  unit: { id: string; name: string; driver_name: string | null } | null
  /** The unit's kept fix nearest in time to the arrival (within 30 minutes; units/position-history.ts), or null. */
  unit_fix: UnitFix | null
  /** The customer's shared locations (job.customer_located), oldest first. */
  customer_fixes: Fix[]
  photos: (PhotoListing & { by: string })[]
  signatures: (SignatureListing & { by: string })[]
  /** Texts and messages exchanged with the customer, oldest first (ours first on a tie). */
  conversation: ConversationLine[]
}

/** The tracking link in a text's body: a capability to act as the customer, kept out of a pack that leaves the company. */
const TRACKING_LINK = /\bhttps?:\/\/\S+?\/t\/[A-Za-z0-9_-]+/g

/** Metres between two points on the Earth (haversine, mean radius). */
export function metresBetween(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180
  const dLat = (b.lat - a.lat) * rad
  const dLng = (b.lng - a.lng) * rad
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)))
}

/** Every event of the job's timeline, oldest first. */
function wholeTimeline(ctx: OperationContext, jobId: string): PackEvent[] {
  const out: PackEvent[] = []
  for (let after = 0; ;) {
    const rows = listJobEventRows(ctx.db, jobId, after, 500)
    out.push(...rows.map(jobEventView))
    if (rows.length < 500) return out
    after = rows[rows.length - 1]!.seq
  }
}

/** Every text of the job, oldest first. */
function allTexts(ctx: OperationContext, jobId: string): TextMessage[] {
  const out: TextMessage[] = []
  let cursor: string | undefined
  do {
    const page = listJobTexts(ctx, jobId, { limit: '100', ...(cursor ? { cursor } : {}) })
    out.push(...page.data)
    cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined
  } while (cursor)
  return out
}

/**
 * Reads the GOA evidence pack of a job: 404 for a job outside the caller's account (as any
 * unknown id) and for one that did not end GOA. The arrival and the GOA are the last run's
 * status changes (after the latest reopen); the position is the unit's kept fix nearest in time
 * to that arrival, before or after it (see src/goa/README.md).
 */
export function readGoaEvidence(ctx: OperationContext, jobId: string): GoaEvidence {
  requirePermission(ctx.actor, 'jobs:read')
  const row = findJobOrThrow(ctx.db, ctx.scope, jobId)
  if (row.status !== 'goa') {
    throw new AppError('not_found', `This job did not end GOA (it is ${row.status.replace('_', ' ')}), so it has no GOA evidence pack.`, { id: row.id, status: row.status })
  }
  const job = presentJob(ctx.db, ctx.links, row)
  const events = wholeTimeline(ctx, row.id)

  const names = new Map<string, string>()
  for (const u of listUsers(ctx.db, row.accountId)) names.set(u.id, u.email)
  for (const k of listKeys(ctx.db, row.accountId)) names.set(k.id, `key ${k.name}`)
  const unitRow = row.unitId ? findUnit(ctx.db, row.accountId, row.unitId) : undefined
  const unitName = (id: string) => (id === unitRow?.id ? unitRow.name : findUnit(ctx.db, row.accountId, id)?.name ?? id)
  const doer = (e: PackEvent): Doer => {
    const d = e.detail as Record<string, unknown>
    const id = (d.user_id ?? d.key_id ?? d.unit_id) as string | undefined
    return { actor: e.actor, name: id === undefined ? null : typeof d.unit_id === 'string' && id === d.unit_id ? unitName(id) : names.get(id) ?? id }
  }

  const moved = (to: string) => (e: PackEvent) => e.type === 'job.status_changed' && e.to === to
  // An imported job has its milestones but no status changes on its timeline: the milestones say when.
  const goaEvent = events.findLast(moved('goa'))
  const runStart = goaEvent ? events.findLast((e) => e.type === 'job.reopened' && e.sequence < goaEvent.sequence)?.sequence ?? 0 : 0
  const arrivalEvent = goaEvent ? events.findLast((e) => moved('on_scene')(e) && e.sequence > runStart && e.sequence < goaEvent.sequence) : undefined
  const goaAt = goaEvent?.created_at ?? job.timestamps.goa_at ?? job.updated_at
  const arrivalAt = arrivalEvent?.created_at ?? (goaEvent ? null : job.timestamps.on_scene_at)
  const goaMs = Date.parse(goaAt)
  const arrivalMs = arrivalAt ? Date.parse(arrivalAt) : null
  const reason = (goaEvent?.detail as { cancel_reason?: unknown } | undefined)?.cancel_reason

  const pickup = job.pickup.lat !== null && job.pickup.lng !== null ? { lat: job.pickup.lat, lng: job.pickup.lng } : null
  const fixOf = (p: { lat: number; lng: number; accuracy_m: number | null; at: string }): Fix => ({
    ...p,
    from_pickup_m: pickup ? Math.round(metresBetween(pickup, p)) : null,
    from_arrival_ms: arrivalMs === null ? null : Date.parse(p.at) - arrivalMs,
  })
  const kept = unitRow && arrivalMs !== null ? nearestFix(ctx.db, unitRow.id, arrivalMs) : null
  const unitFix: UnitFix | null = kept && arrivalMs !== null
    ? { ...fixOf({ lat: kept.lat, lng: kept.lng, accuracy_m: kept.accuracyM, at: new Date(kept.at).toISOString() }), when: kept.at < arrivalMs ? 'before_arrival' : kept.at <= goaMs ? 'on_scene' : 'after_goa' }
    : null
  const customerFixes = events.filter((e) => e.type === 'job.customer_located').map((e) => {
    const d = e.detail as { lat?: unknown; lng?: unknown; accuracy_m?: unknown }
    return fixOf({ lat: Number(d.lat), lng: Number(d.lng), accuracy_m: typeof d.accuracy_m === 'number' ? d.accuracy_m : null, at: e.created_at })
  }).filter((f) => Number.isFinite(f.lat) && Number.isFinite(f.lng))

  const conversation: ConversationLine[] = [
    ...allTexts(ctx, row.id).filter((t) => t.recipient === 'customer').map((t): ConversationLine => ({
      at: t.created_at, direction: 'out', via: 'text', text: t.body.replace(TRACKING_LINK, '[tracking link]'), status: t.status, why: t.skip_reason ?? t.error, to: t.to,
    })),
    ...events.filter((e) => e.type === 'job.note_added' && (e.detail as { customer_visible?: unknown }).customer_visible === true).map((e): ConversationLine => ({
      at: e.created_at, direction: 'out', via: 'note', text: String((e.detail as { text?: unknown }).text ?? ''),
    })),
    ...events.filter((e) => e.type === 'job.customer_message').map((e): ConversationLine => {
      const d = e.detail as { text?: unknown; via?: unknown }
      return { at: e.created_at, direction: 'in', via: d.via === 'tracking_page' ? 'tracking_page' : 'sms', text: String(d.text ?? '') }
    }),
  ]
  // Ours first on a tie: a reply does not come before what it answers.
  conversation.sort((a, b) => a.at.localeCompare(b.at) || (a.direction === b.direction ? 0 : a.direction === 'out' ? -1 : 1))

  const photoBy = (p: PhotoListing) => (p.unit_id ? unitName(p.unit_id) : p.user_id ? names.get(p.user_id) ?? p.user_id : p.taken_by)
  return {
    job,
    goa: { at: goaAt, by: goaEvent ? doer(goaEvent) : null, reason: typeof reason === 'string' && reason ? reason : row.cancelReason },
    arrival: arrivalAt ? { at: arrivalAt, by: arrivalEvent ? doer(arrivalEvent) : null } : null,
    on_scene_ms: arrivalMs === null ? null : goaMs - arrivalMs,
    unit: unitRow ? { id: unitRow.id, name: unitRow.name, driver_name: unitRow.driverName } : null,
    unit_fix: unitFix,
    customer_fixes: customerFixes,
    photos: listJobPhotos(ctx, row.id).map((p) => ({ ...p, by: photoBy(p) })),
    signatures: listJobSignatures(ctx, row.id).map((s) => ({ ...s, by: s.unit_id ? unitName(s.unit_id) : 'driver' })),
    conversation,
  }
}

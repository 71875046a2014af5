/**
 * What the customer's tracking page shows, as one object: `/t/{token}` renders it, `/t/{token}/state`
 * answers it as JSON, and the live stream sends it on each change, so the three cannot disagree.
 * The privacy rules live here, once: only what a stranded customer should see of their own job
 * (company, status, unit name, ETA, the truck's position while it comes to them, where their
 * vehicle goes, customer-visible notes). Never the driver's phone, internal notes, prices (only what
 * is due on an issued invoice, beside its Pay link), payment method, ids of units, keys or users, or any other job.
 */
import { findAccountById } from '../accounts/account.queries'
import type { Db } from '../db/client'
import type { PayableInvoice } from '../jobs/open-payment-link'
import { findPayableInvoiceRow } from '../invoices/invoice.queries'
import { amountDue, invoiceNumberText } from '../invoices/invoice.view'
import { isFinished, type JobStatus } from '../jobs/job-status'
import type { JobRow } from '../jobs/job.view'
import { iso } from '../platform/clock'
import { findUnit, positionOf } from '../units/unit.queries'
import { usableTimeZone } from '../platform/time-zone'
import { STATUS_LABELS } from '../dashboard/labels'

/** The steps of a run, in order: what the page lists with the current one marked. */
export const TRACKING_STEPS = ['pending', 'confirmed', 'dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed'] as const satisfies readonly JobStatus[]

/** The statuses in which the truck's position is shown: it is on its way to the customer. After that, never. */
export const TRUCK_SHOWN: readonly JobStatus[] = ['dispatched', 'en_route']

/** Statuses before the truck reaches the customer: the ETA still means something. */
const BEFORE_ARRIVAL: readonly JobStatus[] = ['pending', 'confirmed', 'dispatched', 'en_route']

/** One step of the status list. */
export interface TrackingStep {
  status: JobStatus
  label: string
  /** `skipped`: before the current one, but the job never was in it (a job taken as confirmed was never pending). */
  state: 'done' | 'skipped' | 'current' | 'upcoming'
}

/** Everything the tracking page shows (see the top of this file). */
export interface TrackingState {
  object: 'tracking'
  /** The towing company: its name, its phone, and its time zone (IANA), where the page shows times. */
  company: { name: string; phone: string | null; time_zone: string }
  status: JobStatus
  status_label: string
  /** The run's steps; a cancelled or GOA job ends with that status as the current step. */
  steps: TrackingStep[]
  /** What happens next, in one sentence. */
  next: string
  /** The unit's name once one holds the job. */
  unit: { name: string } | null
  /** Expected arrival, until the truck is there. */
  eta_at: string | null
  /** The truck's last position: only while dispatched or en route, never from on_scene on. */
  truck: { lat: number; lng: number; recorded_at: string } | null
  destination: string | null
  /** When the vehicle was dropped off (at_destination, or completed without it), once it was. */
  dropped_off_at: string | null
  /** Notes the company marked visible to the customer, oldest first. */
  notes: { text: string; created_at: string }[]
  /** Whether **Share my location** is offered (the job is not finished). */
  can_share_location: boolean
  /** The rating: offered once the job is completed, one per run. */
  rating: { open: boolean; value: number | null; comment: string | null; rated_at: string | null }
  /** The latest issued, unpaid invoice: its number, its total, what is still due on it, and the Pay link; or null. No other price is ever shown. */
  invoice: { number: string; total_cents: number; amount_due_cents: number; pay_path: string } | null
  /** The live stream's position this state was read at (resume the stream after it). */
  stream_position: number
}

/** The job's latest issued, unpaid invoice (what its Pay link is for), or null: then the tracking page shows no price and no Pay link. */
export function findPayableInvoice(db: Db, job: JobRow): PayableInvoice | null {
  const inv = findPayableInvoiceRow(db, job.id)
  if (!inv) return null
  return { id: inv.id, number: invoiceNumberText(inv.number), total_cents: inv.totalCents, amount_due_cents: amountDue(inv) }
}

const NOTES_SHOWN = 50

/** The sentence saying what happens next, by status. */
function nextSentence(job: JobRow, unitName: string | null): string {
  const unit = unitName ?? 'A truck'
  const dest = job.destination ?? 'its destination'
  switch (job.status as JobStatus) {
    case 'pending': return 'We have your request and will confirm it shortly.'
    case 'confirmed': return 'Your request is confirmed: we will send a truck soon.'
    case 'dispatched': return `${unit} is assigned to you and will set off shortly.`
    case 'en_route': return `${unit} is on the way to you.`
    case 'on_scene': return 'The truck is with your vehicle.'
    case 'towing': return `Your vehicle is on the truck, going to ${dest}.`
    case 'at_destination': return `Your vehicle was dropped off at ${dest}.`
    case 'completed': return 'The job is complete. Thank you for calling us.'
    case 'cancelled': return 'This job was cancelled. Call us if you still need help.'
    case 'goa': return 'The truck arrived but there was no vehicle to tow, so the job was closed (gone on arrival). Call us if you still need help.'
  }
}

/** The list of steps, the current one marked; a step before it that the job never reached (no milestone) is skipped, not done. */
function stepsOf(status: JobStatus, milestones: Record<string, number | null | undefined>): TrackingStep[] {
  const ended = status === 'cancelled' || status === 'goa'
  const road: JobStatus[] = ended ? [...TRACKING_STEPS.filter((s) => s !== 'completed'), status] : [...TRACKING_STEPS]
  const at = road.indexOf(status)
  const reached = (s: JobStatus) => milestones[`${s}_at`] != null
  return road.map((s, i) => ({ status: s, label: STATUS_LABELS[s], state: i < at ? (reached(s) ? 'done' : 'skipped') : i === at ? 'current' : 'upcoming' }))
}

/** The customer-visible notes of a job, oldest first. */
function visibleNotes(db: Db, jobId: string): { text: string; created_at: string }[] {
  return db.$client.query<{ text: string; created_at: number }, [string, number]>(
    'SELECT text, created_at FROM job_notes WHERE job_id = ? AND customer_visible = 1 ORDER BY created_at, id LIMIT ?',
  ).all(jobId, NOTES_SHOWN).map((n) => ({ text: n.text, created_at: iso(n.created_at)! }))
}

/** Builds the tracking state of a job whose tracking link is live (the link's path gives the Pay link). */
export function readTrackingState(db: Db, job: JobRow, opts: { trackingPath: string; streamPosition: number }): TrackingState {
  const status = job.status as JobStatus
  const account = findAccountById(db, job.accountId)
  const unit = job.unitId ? findUnit(db, job.accountId, job.unitId) : undefined
  const fix = unit && TRUCK_SHOWN.includes(status) ? positionOf(unit) : null
  const m = job.milestones
  const droppedOff = status === 'at_destination' || status === 'completed' ? iso(m.at_destination_at ?? m.completed_at) : null
  const invoice = findPayableInvoice(db, job)
  return {
    object: 'tracking',
    company: { name: account?.name ?? 'Your towing company', phone: account?.phone ?? null, time_zone: usableTimeZone(account?.timeZone ?? 'UTC') },
    status,
    status_label: STATUS_LABELS[status],
    steps: stepsOf(status, m as Record<string, number | null | undefined>),
    next: nextSentence(job, unit?.name ?? null),
    unit: unit ? { name: unit.name } : null,
    eta_at: BEFORE_ARRIVAL.includes(status) ? iso(job.etaAt) : null,
    truck: fix ? { lat: fix.lat, lng: fix.lng, recorded_at: fix.recorded_at } : null,
    destination: job.destination,
    dropped_off_at: droppedOff,
    notes: visibleNotes(db, job.id),
    can_share_location: !isFinished(status),
    rating: { open: status === 'completed' && job.rating === null, value: status === 'completed' ? job.rating : null, comment: status === 'completed' ? job.ratingComment : null, rated_at: status === 'completed' ? iso(job.ratedAt) : null },
    invoice: invoice ? { number: invoice.number, total_cents: invoice.total_cents, amount_due_cents: invoice.amount_due_cents, pay_path: `${opts.trackingPath}/pay` } : null,
    stream_position: opts.streamPosition,
  }
}

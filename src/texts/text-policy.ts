import { actorSource } from '../accounts/actor'
import type { Db } from '../db/client'
import type { CommittedJobChange, JobWriter } from '../jobs/commit-job-change'
import type { JobEventRow, JobEventType } from '../jobs/job-events'
import { sealedLinkOf, trackingUrlOf } from '../jobs/job-links'
import type { JobRow } from '../jobs/job.view'
import type { OperationContext } from '../operations/operation-context'
import { findUnit } from '../units/unit.queries'
import { recordConsent } from './consent'
import { queueText, type TextRequest } from './queue-text'
import type { TemplateName } from './templates'

/** Who a text of the policy goes to, and with which template. */
type TextRule = (job: JobRow, event: JobEventRow, change: CommittedJobChange) => { to: Recipient; template: TemplateName }[]
type Recipient = { customer: true } | { unitId: string; jobLink: boolean }

const unitIdOf = (v: unknown): string | null => (v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : null)

/** The template of the driver's job link (assign, reassign, Resend driver link). */
const DRIVER_LINK_TEMPLATE: TemplateName = 'driver_job_link'

/**
 * THE texts policy: which texts each job event causes, as data, like the transition table.
 * An event type that is not here texts no one. Imported jobs text no one at all.
 */
export const TEXT_POLICY: Partial<Record<JobEventType, TextRule>> = {
  'job.created': () => [{ to: { customer: true }, template: 'request_received' }],
  // Every status change texts the customer, whatever caused it.
  'job.status_changed': (job) => [{ to: { customer: true }, template: `status_${job.status}` as TemplateName }],
  // The driver gets their job link on assign; on a reassign the previous driver is told.
  'job.assigned': (_job, e) => [{ to: { unitId: unitIdOf(e.detail.unit)!, jobLink: true }, template: DRIVER_LINK_TEMPLATE }],
  'job.reassigned': (_job, e) => [
    { to: { unitId: unitIdOf(e.detail.unit)!, jobLink: true }, template: DRIVER_LINK_TEMPLATE },
    { to: { unitId: unitIdOf(e.detail.previous_unit)!, jobLink: false }, template: 'driver_job_removed' },
  ],
  'job.unassigned': (_job, e) => [{ to: { unitId: unitIdOf(e.detail.unit)!, jobLink: false }, template: 'driver_job_removed' }],
}

/** Why a customer text must not go out, or null. */
function customerSkipReason(job: JobRow): string | null {
  if (!job.customer.sms_consent) return 'no_consent'
  if (!job.customer.phone) return 'no_phone'
  return null
}

/**
 * `{eta}`: ", arriving in about 25 min" (or "1 h 40 min" from an hour on), nothing when the ETA
 * has passed or is a day or more away: a typing slip (a wrong year) must not be texted to the customer as a wait.
 */
export function etaPhrase(msFromNow: number): string {
  const minutes = Math.round(msFromNow / 60_000)
  if (minutes <= 0 || minutes >= 24 * 60) return ''
  if (minutes < 60) return `, arriving in about ${minutes} min`
  const h = Math.floor(minutes / 60)
  const m = minutes % 60
  return `, arriving in about ${h} h${m ? ` ${m} min` : ''}`
}

/** The values a text template can use for a job; its links keep their tokens sealed, as the outbox stores them. */
function textValues(ctx: OperationContext, nowMs: number, job: JobRow, withDriverLink: boolean): Record<string, string | undefined> {
  return {
    company: ctx.account.name,
    pickup: job.pickup.location.length > 60 ? job.pickup.location.slice(0, 57) + '...' : job.pickup.location,
    tracking_url: sealedLinkOf(ctx.links, 't', job.trackingTokenSealed) ?? trackingUrlOf(ctx.links, job),
    driver_url: withDriverLink ? sealedLinkOf(ctx.links, 'd', job.driverTokenSealed) ?? undefined : undefined,
    eta: job.etaAt !== null ? etaPhrase(job.etaAt - nowMs) : '',
    job_ref: job.externalRef ?? job.id.slice(-6),
  }
}

/** A text to a unit's driver about a job, or null when the unit is gone. No consent rule applies: the company texts its own drivers (a unit with no number is recorded as skipped). */
function driverText(tx: Db, ctx: OperationContext, nowMs: number, job: JobRow, eventId: string | null, to: { unitId: string; jobLink: boolean }, template: TemplateName): TextRequest | null {
  const unit = findUnit(tx, job.accountId, to.unitId)
  if (!unit) return null
  return {
    accountId: job.accountId, jobId: job.id, unitId: unit.id, eventId, recipient: 'driver', toPhone: unit.driverPhone,
    template, values: textValues(ctx, nowMs, job, to.jobLink), skipReason: null,
  }
}

/**
 * The driver's job-link text as an assignment sends it, again, to the unit holding the job:
 * the same template and rules, the job's current (live) link, tied to `eventId` (the
 * assignment that minted the link). Null when no unit holds the job.
 */
export function driverJobLinkText(tx: Db, ctx: OperationContext, job: JobRow, eventId: string | null, nowMs: number): TextRequest | null {
  return job.unitId ? driverText(tx, ctx, nowMs, job, eventId, { unitId: job.unitId, jobLink: true }, DRIVER_LINK_TEMPLATE) : null
}

/** The text requests one event causes under the policy. */
function textsFor(tx: Db, change: CommittedJobChange, event: JobEventRow): TextRequest[] {
  const rule = TEXT_POLICY[event.type as JobEventType]
  if (!rule) return []
  const job = change.after
  const out: TextRequest[] = []
  for (const { to, template } of rule(job, event, change)) {
    if ('customer' in to) {
      out.push({
        accountId: job.accountId, jobId: job.id, eventId: event.id, recipient: 'customer', toPhone: job.customer.phone,
        template, values: textValues(change.ctx, change.nowMs, job, false), skipReason: customerSkipReason(job),
      })
      continue
    }
    const text = driverText(tx, change.ctx, change.nowMs, job, event.id, to, template)
    if (text) out.push(text)
  }
  return out
}

/**
 * The texts writer: queues (or records as skipped, with the reason) the policy's texts for each
 * committed event, in the change's transaction, and records the consent a job's data gives (a
 * new job, or a change of number, with sms_consent true).
 */
export const textsWriter: JobWriter = (tx, change) => {
  const { after, before } = change
  if (after.imported) return
  const phone = after.customer.phone
  const gaveConsent = phone && after.customer.sms_consent && !(before && before.customer.sms_consent && before.customer.phone === phone)
  if (gaveConsent) recordConsent(tx, after.accountId, phone, actorSource(change.ctx.actor), change.nowMs)
  for (const event of change.events) for (const text of textsFor(tx, change, event)) queueText(tx, text, change.nowMs)
}

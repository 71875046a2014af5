import { requirePermission } from '../accounts/actor'
import { listKeys } from '../accounts/account.queries'
import { driverUrlOf } from '../jobs/job-links'
import { jobEventView, listJobEventRows } from '../jobs/job-events'
import { findJobOrThrow } from '../jobs/job.queries'
import { listJobPhotos, type PhotoListing } from '../jobs/job-photos'
import { listJobSignatures, type SignatureListing } from '../jobs/job-signatures'
import type { JobView } from '../jobs/job.view'
import { presentJob } from '../jobs/present-job'
import type { OperationContext } from '../operations/operation-context'
import { listJobInvoices } from '../invoices/list-job-invoices'
import type { InvoiceView } from '../invoices/invoice.view'
import { listJobTexts } from '../texts/list-texts'
import type { TextMessage } from '../texts/text.model'
import { listUnitsPage } from '../units/list-units'
import { listUsers } from '../users/user.queries'
import { listCommercialAccountChoices } from '../commercial-accounts/directory.data'
import type { CommercialAccountRef } from '../commercial-accounts/commercial-account.model'

/** A timeline event as the job page shows it. */
export type PageEvent = ReturnType<typeof jobEventView>

/** A unit the Assign select offers. */
export interface UnitChoice { id: string; name: string; status: string }

/** Everything the job page shows, read for a signed-in user of the job's account. */
export interface JobPageData {
  job: JobView
  /** The driver's link while a unit holds the job (a capability: shown only to the account's users). */
  driverUrl: string | null
  /** The timeline, oldest first (at most the newest 500 events). */
  events: PageEvent[]
  /** The texts, oldest first (at most 500). */
  texts: TextMessage[]
  units: UnitChoice[]
  /** The choices of the edit form's Commercial account select. */
  commercialAccounts: CommercialAccountRef[]
  /** The photos, oldest first (the bytes are fetched by each image). */
  photos: PhotoListing[]
  /** The signatures the driver captured, oldest first. */
  signatures: SignatureListing[]
  /** The job's invoices with their payments, oldest first. */
  invoices: InvoiceView[]
  /** Who the timeline's `detail.user_id` / `key_id` / `unit_id` name: id → what to show. */
  names: Map<string, string>
  /** The job's event count when read: a form posted from this page says which version it saw. */
  version: number
  /** The company's time zone (IANA): every time on the page is shown there. */
  zone: string
}

const MAX_SHOWN = 500

/** Reads the job page's data; 404 for a job outside the user's account. */
export function readJobPage(ctx: OperationContext, id: string): JobPageData {
  requirePermission(ctx.actor, 'jobs:read')
  const { db, links } = ctx
  const row = findJobOrThrow(db, ctx.scope, id)
  const job = presentJob(db, links, row)
  const events = listJobEventRows(db, row.id, Math.max(0, row.eventSeq - MAX_SHOWN), MAX_SHOWN).map(jobEventView)
  const texts = listJobTexts(ctx, row.id, { limit: '100' }).data
  const units = listUnitsPage(ctx, { limit: '100' }).data.map((u) => ({ id: u.id, name: u.name, status: u.status }))
  const names = new Map<string, string>()
  for (const u of listUsers(db, row.accountId)) names.set(u.id, u.email)
  for (const k of listKeys(db, row.accountId)) names.set(k.id, `key ${k.name}`)
  for (const u of units) names.set(u.id, u.name)
  return { job, driverUrl: driverUrlOf(links, row), events, texts, units, commercialAccounts: listCommercialAccountChoices(ctx), photos: listJobPhotos(ctx, row.id), signatures: listJobSignatures(ctx, row.id), invoices: listJobInvoices(ctx, row.id), names, version: row.eventSeq, zone: ctx.account.timeZone }
}

/** The job as it is now, for comparing a posted edit form with: its version (event count), status and the API's view. */
export function readJobNow(ctx: OperationContext, id: string): { version: number; status: string; job: JobView } {
  requirePermission(ctx.actor, 'jobs:read')
  const row = findJobOrThrow(ctx.db, ctx.scope, id)
  return { version: row.eventSeq, status: row.status, job: presentJob(ctx.db, ctx.links, row) }
}

/**
 * THE columns of a jobs CSV, shared by the export and the import so that an exported file
 * imports again as the same jobs. Names are the API's field paths; a time is ISO 8601 with its
 * zone; money is whole cents where the name says `_cents` (the import also takes dollars in a
 * `_dollars` column); a unit and a commercial account are named by their names.
 */
import { iso } from '../platform/clock'
import { STATUSES } from '../jobs/job-status'
import type { JobRow } from '../jobs/job.view'

/** How a column's cells are read and written. */
export type ColumnKind = 'text' | 'time' | 'cents' | 'dollars' | 'number' | 'whole' | 'boolean'

/** Names the export resolves for a job: its unit's and its commercial account's. */
export interface RowNames { unit: string | null; commercialAccount: string | null }

/** One column: its header, how its cells read, what it means, and (when exported) its cell for a job. */
export interface CsvColumn {
  name: string
  kind: ColumnKind
  about: string
  /** The exported cell; absent for columns only the import takes. */
  cell?: (job: JobRow, names: RowNames) => string | number | boolean | null
}

const text = (name: string, about: string, cell: CsvColumn['cell']): CsvColumn => ({ name, kind: 'text', about, cell })
const time = (name: string, about: string, cell: (job: JobRow) => number | null | undefined): CsvColumn => ({ name, kind: 'time', about, cell: (job) => iso(cell(job)) })

/** The milestone columns: one `<status>_at` per status, then closed_at and reopened_at. */
export const MILESTONE_COLUMNS = [...STATUSES.map((s) => `${s}_at`), 'closed_at', 'reopened_at'] as const

/** Every column, in the order the export writes them and the template shows them. */
export const CSV_COLUMNS: readonly CsvColumn[] = [
  text('id', 'The job id (job_...): written by the export; the import gives each job a new id and ignores this column.', (j) => j.id),
  text('external_ref', 'Your own reference; unique per account.', (j) => j.externalRef),
  text('status', `The job's status: one of ${STATUSES.join(', ')}. Required.`, (j) => j.status),
  time('created_at', 'When the job was created. Required.', (j) => j.createdAt),
  text('customer.name', "The customer's name. Required.", (j) => j.customer.name),
  text('customer.phone', "The customer's phone (stored as E.164).", (j) => j.customer.phone),
  { name: 'customer.sms_consent', kind: 'boolean', about: 'true when the customer agreed to texts (imported jobs are never texted). Blank is false.', cell: (j) => j.customer.sms_consent },
  text('vehicle.year', 'Model year.', (j) => j.vehicle.year ?? null),
  text('vehicle.make', 'Make.', (j) => j.vehicle.make ?? null),
  text('vehicle.model', 'Model.', (j) => j.vehicle.model ?? null),
  text('vehicle.color', 'Color.', (j) => j.vehicle.color ?? null),
  text('vehicle.plate', 'Plate.', (j) => j.vehicle.plate ?? null),
  text('vehicle.vin', 'VIN.', (j) => j.vehicle.vin ?? null),
  text('vehicle.drive_type', 'Drive type, e.g. fwd, rwd, awd, 4wd.', (j) => j.vehicle.drive_type ?? null),
  text('pickup.location', 'Where the vehicle was: an address or a description. Required.', (j) => j.pickup.location),
  { name: 'pickup.lat', kind: 'number', about: 'Latitude of the pickup, -90 to 90.', cell: (j) => j.pickup.lat ?? null },
  { name: 'pickup.lng', kind: 'number', about: 'Longitude of the pickup, -180 to 180.', cell: (j) => j.pickup.lng ?? null },
  text('destination', 'Where the vehicle went.', (j) => j.destination),
  text('service_type', 'e.g. flatbed.', (j) => j.serviceType),
  text('payer_type', 'Who pays, e.g. motor_club.', (j) => j.payerType),
  text('urgency', 'e.g. urgent.', (j) => j.urgency),
  text('source', 'Where the job came from, e.g. motor_club.', (j) => j.source),
  time('eta_at', 'The arrival time the customer was given.', (j) => j.etaAt),
  { name: 'quote_cents', kind: 'cents', about: 'The quote in whole cents (18500 is $185.00).', cell: (j) => j.quoteCents },
  { name: 'quote_dollars', kind: 'dollars', about: 'The quote in dollars (185.00, $1,185.50): import only, instead of quote_cents.' },
  { name: 'final_price_cents', kind: 'cents', about: 'The final price in whole cents.', cell: (j) => j.finalPriceCents },
  { name: 'final_price_dollars', kind: 'dollars', about: 'The final price in dollars: import only, instead of final_price_cents.' },
  text('payment_method', 'e.g. card, cash, motor_club_account.', (j) => j.paymentMethod),
  text('commercial_account', 'The name of a commercial account in your directory (motor club, police agency, fleet...).', (_j, n) => n.commercialAccount),
  text('unit', 'The name of one of your units (trucks); required for dispatched, en_route, on_scene, towing and at_destination jobs.', (_j, n) => n.unit),
  text('cancel_reason', 'Why the job was cancelled (3 to 500 characters): required for cancelled jobs, optional for goa, empty otherwise.', (j) => j.cancelReason),
  { name: 'rating', kind: 'whole', about: "The customer's rating, 1 to 5 (completed jobs only).", cell: (j) => j.rating },
  text('rating_comment', "The customer's comment with the rating.", (j) => j.ratingComment),
  time('rated_at', 'When the customer rated the job (defaults to completed_at).', (j) => j.ratedAt),
  { name: 'reopen_count', kind: 'whole', about: 'How many times the job was reopened (defaults to 1 with reopened_at, else 0).', cell: (j) => j.reopenCount },
  time('archived_at', 'When the job was archived; empty for a job that is not.', (j) => j.archivedAt),
  ...MILESTONE_COLUMNS.map((m) => time(m, m === 'closed_at' ? 'When the job first finished (defaults to its finished status\'s time).'
    : m === 'reopened_at' ? 'When the job was last reopened.' : `When the job became ${m.slice(0, -3)}.`, (j) => j.milestones[m])),
]

/** The columns the export writes, in order. */
export const EXPORT_COLUMNS = CSV_COLUMNS.filter((c) => c.cell)

/** Finds a column by its header name. */
export const columnNamed = (name: string) => CSV_COLUMNS.find((c) => c.name === name)

/** The columns every import file must have. */
export const REQUIRED_COLUMNS = ['status', 'created_at', 'customer.name', 'pickup.location'] as const

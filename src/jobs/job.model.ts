import { t, type Static } from 'elysia'
import { named, oneOf, queryWholeNumber, schemaName, wholeNumber } from '../platform/schema'
import { STATUSES } from './job-status'

const strict = { additionalProperties: false } as const
const Str = (max: number, opts: Record<string, unknown> = {}) => t.String({ maxLength: max, ...opts })
const NStr = (max: number, opts: Record<string, unknown> = {}) => t.Nullable(Str(max, opts))
const Timestamp = t.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' })
const NTimestamp = t.Nullable(Timestamp)
const Cents = wholeNumber({ minimum: 0, maximum: 100_000_000 })
export const JobStatus = oneOf([...STATUSES], { description: 'pending, confirmed, dispatched, en_route, on_scene, towing, at_destination, then the finished completed, cancelled, goa.' })

const CommercialAccountId = t.Nullable(Str(64, { description: 'The commercial account (motor club, police agency, fleet...) the job is done for: an id from GET /accounts; null clears it. An id that names nothing in this account is 422.' }))

const Year = t.Union([Str(8), wholeNumber({ minimum: 1886, maximum: 2100 })], { description: 'Model year, e.g. "2019".' })

/** customer on create. */
const CustomerIn = t.Object({
  name: Str(200, { minLength: 1 }),
  phone: t.Optional(NStr(40, { description: 'Any common format; stored as E.164 (default country: US).' })),
  sms_consent: t.Optional(t.Boolean({ description: 'True only when the customer agreed to texts. Defaults to false.' })),
}, strict)
const VehicleIn = t.Object({
  year: t.Optional(t.Nullable(Year)),
  make: t.Optional(NStr(64)),
  model: t.Optional(NStr(64)),
  drive_type: t.Optional(NStr(32, { description: 'e.g. fwd, rwd, awd, 4wd.' })),
  color: t.Optional(NStr(32)),
  plate: t.Optional(NStr(16)),
  vin: t.Optional(NStr(17)),
}, strict)
const PickupIn = t.Object({
  location: Str(500, { minLength: 1, description: 'Where the vehicle is: an address or a description.' }),
  lat: t.Optional(t.Nullable(t.Number({ minimum: -90, maximum: 90 }))),
  lng: t.Optional(t.Nullable(t.Number({ minimum: -180, maximum: 180 }))),
}, strict)

/** POST /jobs body. */
export const CreateJobBody = named('CreateJobRequest', t.Object({
  external_ref: t.Optional(NStr(255, { description: "The caller's own reference; unique per account." })),
  source: t.Optional(NStr(64, { examples: ['motor_club'] })),
  payer_type: t.Optional(NStr(64, { examples: ['motor_club'] })),
  service_type: t.Optional(NStr(64, { examples: ['flatbed'] })),
  urgency: t.Optional(NStr(32, { examples: ['urgent'] })),
  customer: CustomerIn,
  vehicle: t.Optional(VehicleIn),
  pickup: PickupIn,
  destination: t.Optional(NStr(500)),
  status: t.Optional(oneOf(['pending', 'confirmed'], { description: 'Defaults to confirmed; pending awaits a dispatcher.' })),
  site_id: t.Optional(Str(64, { description: "The yard; defaults to the key's first site." })),
  eta_at: t.Optional(NTimestamp),
  quote_cents: t.Optional(t.Nullable(Cents)),
  commercial_account_id: t.Optional(CommercialAccountId),
}, { ...strict, description: 'A new job: customer.name and pickup.location are required, everything else is optional.' }))
export type CreateJobBody = Static<typeof CreateJobBody>

/** PATCH /jobs/{id} body. */
export const UpdateJobBody = named('UpdateJobRequest', t.Object({
  status: t.Optional(JobStatus),
  expected_status: t.Optional(oneOf([...STATUSES], { description: 'Makes the write conditional: 409 job_stale if the job is in another status.' })),
  // Any length and null reach the operation, which answers job_reason_required for a reason it cannot use (the spec's table).
  cancel_reason: t.Optional(t.Nullable(t.String({ description: '3 to 500 characters after trimming (422 job_reason_required otherwise, null or empty included); required with status cancelled, optional with goa (null there: none); sent alone, corrects the reason of a job already cancelled or goa.' }))),
  source: t.Optional(NStr(64)),
  payer_type: t.Optional(NStr(64)),
  service_type: t.Optional(NStr(64)),
  urgency: t.Optional(NStr(32)),
  customer: t.Optional(t.Object({
    name: t.Optional(Str(200, { minLength: 1 })),
    phone: t.Optional(NStr(40)),
    sms_consent: t.Optional(t.Boolean()),
  }, strict)),
  vehicle: t.Optional(VehicleIn),
  pickup: t.Optional(t.Object({
    location: t.Optional(Str(500, { minLength: 1 })),
    lat: t.Optional(t.Nullable(t.Number({ minimum: -90, maximum: 90 }))),
    lng: t.Optional(t.Nullable(t.Number({ minimum: -180, maximum: 180 }))),
  }, strict)),
  destination: t.Optional(NStr(500)),
  eta_at: t.Optional(NTimestamp),
  quote_cents: t.Optional(t.Nullable(Cents)),
  final_price_cents: t.Optional(t.Nullable(Cents)),
  payment_method: t.Optional(NStr(64, { examples: ['card', 'cash', 'motor_club_account'] })),
  commercial_account_id: t.Optional(CommercialAccountId),
}, { ...strict, description: 'The fields to change; customer, vehicle and pickup merge field by field and null clears a field.' }))
export type UpdateJobBody = Static<typeof UpdateJobBody>

/** POST /jobs/{id}/assign body. */
export const AssignJobBody = named('AssignJobRequest', t.Object({ unit_id: Str(64, { minLength: 1, examples: ['unit_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }) }, strict))
export type AssignJobBody = Static<typeof AssignJobBody>

/** POST /jobs/{id}/notes body. */
export const AddNoteBody = named('AddJobNoteRequest', t.Object({
  text: t.String({ minLength: 1, maxLength: 2000 }),
  customer_visible: t.Optional(t.Boolean({ default: false, description: 'Shown on the customer tracking page when true.' })),
}, strict))
export type AddNoteBody = Static<typeof AddNoteBody>

/** POST /jobs/{id}/reopen body. */
export const ReopenJobBody = named('ReopenJobRequest', t.Object({
  reason: t.Optional(t.Nullable(t.String({ description: 'Why the job is reopened: required, 3 to 500 characters after trimming (422 job_reason_required otherwise, null or empty included).' }))),
}, strict))
export type ReopenJobBody = Static<typeof ReopenJobBody>

/** The {id} of /jobs/{id} routes. */
export const JobIdParams = t.Object({ id: t.String({ description: 'Job id (job_...).' }) })

/** How many items a page holds: 1 to 100, default 25. */
const PageLimit = queryWholeNumber({ minimum: 1, maximum: 100, default: 25, description: 'How many items the page holds.' })
export const Cursor = t.String({ maxLength: 200, description: 'The next_cursor of the previous page.' })

/** GET /jobs query. */
export const ListJobsQuery = t.Object({
  limit: t.Optional(PageLimit),
  cursor: t.Optional(Cursor),
  status: t.Optional(t.String({ maxLength: 200, description: 'One status or a comma list.' })),
  since: t.Optional(t.String({ maxLength: 40, description: 'Jobs created at or after this ISO 8601 time.' })),
  updated_since: t.Optional(t.String({ maxLength: 40, description: 'Jobs updated at or after this ISO 8601 time.' })),
  external_ref: t.Optional(t.String({ maxLength: 255 })),
}, strict)
export type ListJobsQuery = Static<typeof ListJobsQuery>

/** Paging query of other lists. */
export const PageQuery = t.Object({
  limit: t.Optional(PageLimit),
  cursor: t.Optional(Cursor),
}, strict)
export type PageQuery = Static<typeof PageQuery>

const UnitRef = t.Nullable(t.Object({ id: t.String(), name: t.String() }), { description: 'The unit that holds the job, or null.' })
/** A unit's last shared position. */
export const Position = named('Position', t.Object({
  lat: t.Number(), lng: t.Number(),
  accuracy_m: t.Nullable(t.Number({ description: 'Metres.' })),
  heading: t.Nullable(t.Number({ description: 'Degrees from north, 0 to 360.' })),
  speed_kph: t.Nullable(t.Number()),
  recorded_at: Timestamp,
}, { description: "A unit's last position, as its driver's phone reported it." }))
/** A position, or null before the unit's phone has reported one. */
export const PositionSchema = t.Nullable(Position)
const Timestamps = t.Object(Object.fromEntries([
  ['created_at', NTimestamp],
  ...STATUSES.map((s) => [`${s}_at`, NTimestamp]),
  ['closed_at', NTimestamp],
  ['reopened_at', NTimestamp],
])) 

/** A job as the API returns it. */
export const Job = named('Job', t.Object({
  object: t.Literal('job'),
  id: t.String({ examples: ['job_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }),
  external_ref: t.Nullable(t.String()),
  site_id: t.String(),
  status: JobStatus,
  source: t.Nullable(t.String()),
  payer_type: t.Nullable(t.String()),
  service_type: t.Nullable(t.String()),
  urgency: t.Nullable(t.String()),
  customer: t.Object({ name: t.String(), phone: t.Nullable(t.String({ description: 'E.164' })), sms_consent: t.Boolean() }),
  vehicle: t.Object({ year: t.Nullable(t.String()), make: t.Nullable(t.String()), model: t.Nullable(t.String()), drive_type: t.Nullable(t.String()), color: t.Nullable(t.String()), plate: t.Nullable(t.String()), vin: t.Nullable(t.String()) }),
  pickup: t.Object({ location: t.String(), lat: t.Nullable(t.Number()), lng: t.Nullable(t.Number()) }),
  destination: t.Nullable(t.String()),
  cancel_reason: t.Nullable(t.String()),
  rating: t.Nullable(t.Number()),
  rating_comment: t.Nullable(t.String()),
  rated_at: NTimestamp,
  reopen_count: wholeNumber({ minimum: 0 }),
  eta_at: NTimestamp,
  quote_cents: t.Nullable(wholeNumber()),
  final_price_cents: t.Nullable(wholeNumber()),
  payment_method: t.Nullable(t.String()),
  unit: UnitRef,
  commercial_account: t.Nullable(t.Object({ id: t.String(), name: t.String() }), { description: 'The commercial account (motor club, police agency, fleet...) the job is done for, with its current name, or null. GET /accounts/{id} has its kind and contacts.' }),
  position: t.Optional(t.Nullable(Position, { description: 'The unit\'s last position (null without a unit or before its phone reported); single job and webhook payloads only, lists leave it out.' })),
  tracking_url: t.String({ format: 'uri', description: "Absolute URL of the customer's tracking page: <public url>/t/<24 random characters>. It changes only when a new tracking link is made (job.updated with detail.fields [\"tracking_url\"]); the old one then answers 410." }),
  imported: t.Boolean(),
  archived: t.Boolean(),
  archived_at: NTimestamp,
  timestamps: Timestamps,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'A towing job. Clients must tolerate fields added later.' }))

/** A timeline event. */
export const JobEvent = named('JobEvent', t.Object({
  object: t.Literal('job_event'),
  id: t.String(),
  job_id: t.String(),
  type: t.String(),
  from: t.Nullable(t.String()),
  to: t.Nullable(t.String()),
  actor: oneOf(['system', 'dispatcher', 'driver', 'customer']),
  detail: t.Record(t.String(), t.Unknown()),
  sequence: wholeNumber({ minimum: 1, description: 'Grows with each event of the job.' }),
  created_at: Timestamp,
}, { description: "One entry of a job's timeline; `type` is the webhook event type." }))

/** A note. */
export const Note = named('Note', t.Object({ object: t.Literal('note'), id: t.String(), job_id: t.String(), text: t.String(), customer_visible: t.Boolean(), created_at: Timestamp }, { description: "A note on a job's timeline." }))

const envelope = <T extends Parameters<typeof t.Array>[0]>(item: T) => t.Object({
  object: t.Literal('list'),
  data: t.Array(item),
  has_more: t.Boolean(),
  next_cursor: t.Nullable(t.String(), { description: 'Pass it back as cursor for the next page; null on the last page.' }),
}, { description: `A page of ${schemaName(item) ?? 'item'} objects.` })
const lists = new WeakMap<object, unknown>()

/** The list envelope of a named item schema, named after it (`JobList`); one schema per item. */
export const ListOf = <T extends Parameters<typeof t.Array>[0]>(item: T) => {
  const seen = lists.get(item)
  if (seen) return seen as ReturnType<typeof envelope<T>>
  const list = named(`${schemaName(item) ?? 'Item'}List`, envelope(item))
  lists.set(item, list)
  return list
}

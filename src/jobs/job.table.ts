import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, real, blob, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { accounts, sites } from '../accounts/account.table'

/** A towing job. Nested parts (customer, vehicle, pickup, milestones) are JSON objects. */
export const jobs = sqliteTable('jobs', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  siteId: text('site_id').notNull().references(() => sites.id),
  externalRef: text('external_ref'),
  source: text('source'),
  payerType: text('payer_type'),
  serviceType: text('service_type'),
  urgency: text('urgency'),
  customer: text('customer', { mode: 'json' }).$type<JobCustomer>().notNull(),
  vehicle: text('vehicle', { mode: 'json' }).$type<JobVehicle>().notNull(),
  pickup: text('pickup', { mode: 'json' }).$type<JobPickup>().notNull(),
  destination: text('destination'),
  status: text('status').notNull(),
  cancelReason: text('cancel_reason'),
  rating: real('rating'),
  ratingComment: text('rating_comment'),
  ratedAt: integer('rated_at'),
  reopenCount: integer('reopen_count').notNull().default(0),
  etaAt: integer('eta_at'),
  quoteCents: integer('quote_cents'),
  finalPriceCents: integer('final_price_cents'),
  paymentMethod: text('payment_method'),
  unitId: text('unit_id'),
  /** The commercial account (motor club, police, fleet...) the job is done for, or null. */
  commercialAccountId: text('commercial_account_id'),
  /** SHA-256 (hex) of the tracking link's token: what a lookup compares. The token itself is never stored in clear. */
  trackingTokenHash: text('tracking_token_hash'),
  /** The tracking token sealed with the installation's link key (AES-256-GCM), so the link can be shown again. */
  trackingTokenSealed: text('tracking_token_sealed'),
  /** SHA-256 (hex) of the driver's job-link token, or null when no driver holds the job. */
  driverTokenHash: text('driver_token_hash'),
  /** The driver's token sealed with the link key. */
  driverTokenSealed: text('driver_token_sealed'),
  /** `<status>_at`, `closed_at`, `reopened_at` in epoch ms; write-once except reopened_at. */
  milestones: text('milestones', { mode: 'json' }).$type<Record<string, number>>().notNull(),
  /** Sequence number of the job's latest timeline event. */
  eventSeq: integer('event_seq').notNull().default(0),
  imported: integer('imported', { mode: 'boolean' }).notNull().default(false),
  archivedAt: integer('archived_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
  /**
   * What the jobs list's search text is matched against, written with every change of the job:
   * the customer's name and the reference folded (no accents, lower case: "zoe" finds Zoë). Null
   * only for a row written before it existed, until the server's start fills it in.
   */
  searchText: text('search_text'),
}, (t) => [
  // updated_at rides along so GET /jobs?updated_since can walk this index without touching rows.
  index('jobs_account_created_idx').on(t.accountId, t.createdAt, t.id, t.updatedAt),
  index('jobs_account_updated_idx').on(t.accountId, t.updatedAt, t.createdAt, t.id),
  index('jobs_account_status_idx').on(t.accountId, t.status, t.createdAt, t.id),
  // The rows whose search text is still to be filled (serve's start): empty once filled, so the
  // start's look for them reads an empty index instead of every job.
  index('jobs_search_text_missing_idx').on(t.id).where(sql`search_text IS NULL`),
  uniqueIndex('jobs_account_external_ref_uq').on(t.accountId, t.externalRef),
  uniqueIndex('jobs_tracking_token_hash_uq').on(t.trackingTokenHash),
  index('jobs_driver_token_hash_idx').on(t.driverTokenHash),
  index('jobs_unit_idx').on(t.unitId),
  index('jobs_commercial_account_idx').on(t.commercialAccountId),
  // Inbound texts are threaded onto the sender's most recent job.
  index('jobs_customer_phone_idx').on(sql`json_extract(customer, '$.phone')`, t.createdAt),
])

export interface JobCustomer { name: string; phone: string | null; sms_consent: boolean }
export interface JobVehicle { year?: string | null; make?: string | null; model?: string | null; drive_type?: string | null; color?: string | null; plate?: string | null; vin?: string | null }
export interface JobPickup { location: string; lat?: number | null; lng?: number | null }

/** The append-only timeline; also the outbox webhooks read. `seq` grows per job. */
export const jobEvents = sqliteTable('job_events', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  jobId: text('job_id').notNull().references(() => jobs.id),
  seq: integer('seq').notNull(),
  type: text('type').notNull(),
  fromStatus: text('from_status'),
  toStatus: text('to_status'),
  actor: text('actor').notNull(),
  detail: text('detail', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  createdAt: integer('created_at').notNull(),
  /**
   * The event's place in one global order over every job: given out as MAX + 1 inside the
   * writing transaction, so it grows in commit order (SQLite has one writer at a time). The
   * post-commit bus and the live streams resume from it.
   */
  position: integer('position').notNull().default(0),
}, (t) => [
  uniqueIndex('job_events_job_seq_uq').on(t.jobId, t.seq),
  index('job_events_account_created_idx').on(t.accountId, t.createdAt),
  uniqueIndex('job_events_position_uq').on(t.position),
])

/** Notes on a job, optionally visible to the customer. */
export const jobNotes = sqliteTable('job_notes', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  jobId: text('job_id').notNull().references(() => jobs.id),
  text: text('text').notNull(),
  customerVisible: integer('customer_visible', { mode: 'boolean' }).notNull(),
  authorKeyId: text('author_key_id'),
  /** The dashboard user who wrote it, when a dispatcher did. */
  authorUserId: text('author_user_id'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('job_notes_job_idx').on(t.jobId, t.createdAt)])

/**
 * Photos of a job, kept inside the database (so `towline backup` carries them), served only to
 * a session of the job's account (and, with the driver's page, to the job's current driver
 * link). Who took each: the actor, and the user or unit.
 */
export const jobPhotos = sqliteTable('job_photos', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  jobId: text('job_id').notNull().references(() => jobs.id),
  /** image/jpeg, image/png or image/webp, read from the bytes (never the uploader's word). */
  contentType: text('content_type').notNull(),
  bytes: integer('bytes').notNull(),
  sha256: text('sha256').notNull(),
  data: blob('data', { mode: 'buffer' }).notNull(),
  /** dispatcher or driver. */
  takenBy: text('taken_by').notNull(),
  userId: text('user_id'),
  unitId: text('unit_id'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('job_photos_job_idx').on(t.jobId, t.createdAt)])

/** Signatures drawn on the driver's page: a PNG kept in the database (so a backup carries it), served like photos. */
export const jobSignatures = sqliteTable('job_signatures', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  jobId: text('job_id').notNull().references(() => jobs.id),
  signerName: text('signer_name').notNull(),
  /** Always image/png, read from the bytes. */
  contentType: text('content_type').notNull(),
  bytes: integer('bytes').notNull(),
  data: blob('data', { mode: 'buffer' }).notNull(),
  /** The unit whose driver captured it. */
  unitId: text('unit_id'),
  createdAt: integer('created_at').notNull(),
}, (t) => [index('job_signatures_job_idx').on(t.jobId, t.createdAt)])

/**
 * Links that were live and are not any more: a tracking link replaced by **New tracking link**,
 * a driver link taken back by reassigning or unassigning. Their pages answer 410 (gone) rather
 * than 404, so whoever holds an old link is told it was replaced. Only the token's hash is kept.
 */
export const retiredLinks = sqliteTable('retired_links', {
  tokenHash: text('token_hash').primaryKey(),
  kind: text('kind', { enum: ['tracking', 'driver'] }).notNull(),
  accountId: text('account_id').notNull(),
  jobId: text('job_id').notNull().references(() => jobs.id),
  /** Why it died: `replaced` (new tracking link), `reassigned`, `unassigned`. */
  reason: text('reason').notNull(),
  retiredAt: integer('retired_at').notNull(),
}, (t) => [index('retired_links_job_idx').on(t.jobId)])

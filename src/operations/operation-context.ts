import type { Actor } from '../accounts/actor'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import type { JobLinks } from '../jobs/job-links'
import type { JobWriter } from '../jobs/commit-job-change'

/** The tenant an operation acts for, as texts and pages name it. */
export interface AccountInfo {
  id: string
  name: string
  /** The company's phone shown to customers (E.164), or null. */
  phone: string | null
  /** Country phone numbers without +country are read in. */
  defaultCountry: string
  /** The company's time zone (IANA): the days and clock times its pages and exports use. */
  timeZone: string
}

/**
 * What an actor may see: one account; within it every site (siteIds null) or some; and for a
 * driver's or customer's link, one job.
 */
export interface OperationScope {
  accountId: string
  /** Site ids the actor is limited to, or null for every site of the account. */
  siteIds: string[] | null
  /** The only job a link's holder may see, or undefined for every job in the sites above. */
  jobId?: string
}

/**
 * What every operation runs with, made by one factory (operations/context-factory.ts): who
 * acts, for which account and sites, the clock, the database, and what a committed job change
 * sets off (the writers run inside its transaction, then `afterCommit`).
 */
export interface OperationContext {
  db: Db
  clock: Clock
  /** The public URL and link key job links are made with. */
  links: JobLinks
  actor: Actor
  account: AccountInfo
  scope: OperationScope
  /** Run by commitJobChange inside the transaction, in order: the webhook outbox, the texts policy. */
  jobWriters: readonly JobWriter[]
  /** Run after a job change commits (schedules the post-commit bus). */
  afterCommit: () => void
  /** The HTTP request this operation serves, for log lines. */
  requestId?: string
}

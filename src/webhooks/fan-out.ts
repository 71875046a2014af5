import type { Db } from '../db/client'
import { jobEventView, type JobEventRow } from '../jobs/job-events'
import type { JobRow } from '../jobs/job.view'
import { presentJob } from '../jobs/present-job'
import { sealLinksIn, type JobLinks } from '../jobs/job-links'
import { markEndpointsDue } from './webhook.queries'
import type { JobWriter } from '../jobs/commit-job-change'

/** Woken after deliveries are written, so the scheduler sends them without polling. */
let wakeScheduler: (endpointIds?: string[]) => void = () => {}
/** Lets the running scheduler hear about new events (and which endpoints take them). */
export function onDeliveriesQueued(wake: (endpointIds?: string[]) => void): void {
  wakeScheduler = wake
}

let endpointsVersion = 0
/**
 * Says endpoints changed (URL, secret, pause, resume, deletion; here or in another process):
 * the scheduler reads them again before its next send, and takes a turn (a resume sends what
 * was held).
 */
export function endpointsChanged(): void {
  endpointsVersion++
  wakeScheduler()
}
/** Grows with every endpointsChanged(): the scheduler re-reads an endpoint when it moved. */
export const endpointsSeen = () => endpointsVersion

/** Tells whether an endpoint's subscription covers an event type. */
export const subscribes = (events: string[], type: string) => events.includes('*') || events.includes(type)

/** Tells whether an endpoint takes an event of the log: its type subscribed to, and its job's site one the endpoint serves. */
export const takesEvent = (e: { events: string[]; siteIds: string[] | null }, type: string, siteId: string) =>
  subscribes(e.events, type) && (e.siteIds === null || e.siteIds.includes(siteId))

/** The `data.event` of an envelope. */
export function envelopeEvent(e: JobEventRow) {
  const { object: _o, job_id: _j, ...rest } = jobEventView(e)
  return rest
}

/**
 * Writes each event that some live endpoint of the account subscribes to (and serves the job's
 * site) into the webhook event log, once, inside the caller's transaction, with the job as
 * GET /jobs/{id} shows it at that moment. Nothing is sent here, and nothing is written per
 * endpoint: each endpoint takes the events up after its cursor when the scheduler serves it, so
 * a crash never loses an event and fifty endpoints cost one row.
 */
export function fanOutJobEvents(tx: Db, links: JobLinks, job: JobRow, events: JobEventRow[], nowMs: number): void {
  if (!events.length) return
  const endpoints = tx.$client.query<{ id: string; events: string; site_ids: string | null }, [string]>(
    'SELECT id, events, site_ids FROM webhook_endpoints WHERE account_id = ? AND deleted_at IS NULL',
  ).all(job.accountId)
  const subscribed = endpoints
    .map((e) => ({ id: e.id, events: JSON.parse(e.events) as string[], siteIds: e.site_ids ? (JSON.parse(e.site_ids) as string[]) : null }))
    .filter((e) => e.siteIds === null || e.siteIds.includes(job.siteId))
  if (!subscribed.length) return
  // The job's tracking link is stored sealed, as the job keeps it; the scheduler opens it to send.
  const jobJson = sealLinksIn(links, JSON.stringify(presentJob(tx, links, job)))
  const insert = tx.$client.query('INSERT INTO webhook_events (event_id, account_id, site_id, type, data, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  const due = new Set<string>()
  for (const event of events) {
    const to = subscribed.filter((e) => subscribes(e.events, event.type))
    if (!to.length) continue
    insert.run(event.id, job.accountId, job.siteId, event.type, `{"job":${jobJson},"event":${JSON.stringify(envelopeEvent(event))}}`, nowMs)
    for (const e of to) due.add(e.id)
  }
  if (!due.size) return
  const ids = [...due]
  markEndpointsDue(tx, ids, nowMs)
  // After the caller's (synchronous) transaction has committed.
  queueMicrotask(() => wakeScheduler(ids))
}

/** The webhook outbox writer: each committed job event some endpoint takes goes into the event log, in the change's transaction. */
export const webhookOutboxWriter: JobWriter = (tx, change) => fanOutJobEvents(tx, change.ctx.links, change.after, change.events, change.nowMs)

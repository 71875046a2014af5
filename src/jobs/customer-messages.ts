import type { Db } from '../db/client'
import { iso } from '../platform/clock'

/** The newest message a customer sent about a job (by text or from the tracking page), and how many they sent. */
export interface LatestCustomerMessage { text: string; via: string; at: string; count: number }

/**
 * The newest customer message of each job (job.customer_message events: replies by text and
 * messages from the tracking page alike), for the board's cards. One query for all the jobs;
 * callers pass only jobs the reader may see.
 */
export function latestCustomerMessages(db: Db, jobIds: readonly string[]): Map<string, LatestCustomerMessage> {
  const out = new Map<string, LatestCustomerMessage>()
  for (let i = 0; i < jobIds.length; i += 500) {
    const ids = jobIds.slice(i, i + 500)
    if (!ids.length) break
    // Each job's count and newest message, then that event's row by its (job_id, seq) key.
    const rows = db.$client.query<{ job_id: string; detail: string; created_at: number; n: number }, string[]>(
      `SELECT e.job_id, e.detail, e.created_at, m.n FROM (SELECT job_id, max(seq) AS p, count(*) AS n FROM job_events
         WHERE job_id IN (${ids.map(() => '?').join(',')}) AND type = 'job.customer_message' GROUP BY job_id) AS m
       JOIN job_events e ON e.job_id = m.job_id AND e.seq = m.p`,
    ).all(...ids)
    for (const r of rows) {
      const d = JSON.parse(r.detail) as { text?: unknown; via?: unknown }
      out.set(r.job_id, { text: String(d.text ?? ''), via: String(d.via ?? ''), at: iso(r.created_at)!, count: r.n })
    }
  }
  return out
}

import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'

/** Attempts always kept per endpoint, however old: GET /webhooks/{id}/deliveries promises the last 100. */
export const KEEP_ATTEMPTS_PER_ENDPOINT = 100
/** Rows deleted per transaction, so writers never wait long behind the pruner. */
const BATCH = 500

export interface PruneResult { attempts: number; deliveries: number; events: number }

/**
 * Deletes webhook history older than `keepMs` that nothing needs any more, in small batches:
 * - attempts, except each endpoint's last 100;
 * - finished deliveries with no attempt left (open ones stay);
 * - logged events that every endpoint has taken up and no delivery refers to (what a paused
 *   endpoint has not taken up yet stays, however old).
 * Attempts rebuild their request body from their delivery and its event, which is why those go
 * only after the attempts. Returns how many rows went.
 */
export async function pruneWebhookHistory(db: Db, clock: Clock, keepMs: number, pause: () => Promise<void> = () => Bun.sleep(0)): Promise<PruneResult> {
  const cutoff = clock.now() - keepMs
  const out: PruneResult = { attempts: 0, deliveries: 0, events: 0 }
  const sql = db.$client
  /** Runs a batched DELETE until it deletes fewer than BATCH rows, pausing between batches; returns the rows deleted. */
  const drain = async (del: { run(...args: any[]): { changes: number } }, ...args: (string | number)[]) => {
    let total = 0
    for (;;) {
      const n = del.run(...args, BATCH).changes
      total += n
      if (n < BATCH) return total
      await pause()
    }
  }
  const endpoints = sql.query<{ endpoint_id: string }, [number]>('SELECT DISTINCT endpoint_id FROM webhook_attempts WHERE created_at < ?').all(cutoff)
  // Beyond each endpoint's newest 100 (ties broken by rowid, as the listing does), and older than the window.
  const dropAttempts = sql.query<unknown, [string, number, number, number]>(
    `DELETE FROM webhook_attempts WHERE rowid IN (
       SELECT rowid FROM (SELECT rowid, created_at FROM webhook_attempts WHERE endpoint_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?2) AS older
        WHERE created_at < ?3 LIMIT ?4)`,
  )
  for (const { endpoint_id } of endpoints) out.attempts += await drain(dropAttempts, endpoint_id, KEEP_ATTEMPTS_PER_ENDPOINT, cutoff)
  const dropDeliveries = sql.query<unknown, [number, number]>(
    `DELETE FROM webhook_deliveries WHERE rowid IN (
       SELECT d.rowid FROM webhook_deliveries d WHERE d.created_at < ? AND d.status IN ('succeeded', 'failed', 'cancelled')
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id) ORDER BY d.created_at LIMIT ?)`,
  )
  out.deliveries = await drain(dropDeliveries, cutoff)
  // Events every live endpoint of the account has taken up (a paused one holds what is after its
  // cursor) and no delivery refers to.
  const dropEvents = sql.query<unknown, [number, number]>(
    `DELETE FROM webhook_events WHERE seq IN (
       SELECT v.seq FROM webhook_events v WHERE v.created_at < ?
          AND v.seq <= coalesce((SELECT min(e.cursor) FROM webhook_endpoints e WHERE e.account_id = v.account_id AND e.deleted_at IS NULL), v.seq)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.event_id) ORDER BY v.created_at LIMIT ?)`,
  )
  out.events = await drain(dropEvents, cutoff)
  return out
}

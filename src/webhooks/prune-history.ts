import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'

/** Attempts always kept per endpoint, however old: GET /webhooks/{id}/deliveries promises the last 100. */
export const KEEP_ATTEMPTS_PER_ENDPOINT = 100
/** Rows deleted per transaction, so writers never wait long behind the pruner. */
const BATCH = 500

export interface PruneResult { attempts: number; deliveries: number; payloads: number }

/**
 * Deletes webhook history older than `keepMs` that nothing needs any more, in small batches:
 * - attempts, except each endpoint's last 100;
 * - finished deliveries with no attempt left (open ones, held for a paused endpoint, stay);
 * - event payloads no delivery refers to.
 * Attempts rebuild their request body from their delivery and its payload, which is why those
 * go only after the attempts. Returns how many rows went.
 */
export async function pruneWebhookHistory(db: Db, clock: Clock, keepMs: number, pause: () => Promise<void> = () => Bun.sleep(0)): Promise<PruneResult> {
  const cutoff = clock.now() - keepMs
  const out: PruneResult = { attempts: 0, deliveries: 0, payloads: 0 }
  const sql = db.$client
  const endpoints = sql.query<{ endpoint_id: string }, [number]>('SELECT DISTINCT endpoint_id FROM webhook_attempts WHERE created_at < ?').all(cutoff)
  // Beyond each endpoint's newest 100 (ties broken by rowid, as the listing does), and older than the window.
  const dropAttempts = sql.query<unknown, [string, number, number, number]>(
    `DELETE FROM webhook_attempts WHERE rowid IN (
       SELECT rowid FROM (SELECT rowid, created_at FROM webhook_attempts WHERE endpoint_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?2)
        WHERE created_at < ?3 LIMIT ?4)`,
  )
  for (const { endpoint_id } of endpoints) {
    for (;;) {
      const n = dropAttempts.run(endpoint_id, KEEP_ATTEMPTS_PER_ENDPOINT, cutoff, BATCH).changes
      out.attempts += n
      if (n < BATCH) break
      await pause()
    }
  }
  const dropDeliveries = sql.query<unknown, [number, number]>(
    `DELETE FROM webhook_deliveries WHERE rowid IN (
       SELECT d.rowid FROM webhook_deliveries d WHERE d.created_at < ? AND d.status IN ('succeeded', 'failed', 'cancelled')
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id) ORDER BY d.created_at LIMIT ?)`,
  )
  for (;;) {
    const n = dropDeliveries.run(cutoff, BATCH).changes
    out.deliveries += n
    if (n < BATCH) break
    await pause()
  }
  const dropPayloads = sql.query<unknown, [number, number]>(
    `DELETE FROM webhook_event_payloads WHERE rowid IN (
       SELECT p.rowid FROM webhook_event_payloads p WHERE p.created_at < ?
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = p.event_id) ORDER BY p.created_at LIMIT ?)`,
  )
  for (;;) {
    const n = dropPayloads.run(cutoff, BATCH).changes
    out.payloads += n
    if (n < BATCH) break
    await pause()
  }
  return out
}

import type { Db } from '../db/client'

/**
 * A unit's position history (`unit_positions`): every fix `storeFix` keeps as the unit's newest
 * is also kept here, thinned to one per POSITION_HISTORY_SPACING_MS of fix time, for the GOA
 * evidence pack's "fix nearest the arrival". Pruned after TOWLINE_POSITION_HISTORY_DAYS, except
 * the fixes around a GOA job's arrival, which are a motor club's proof for as long as the job is kept.
 */

/** At most one kept fix per unit in this much fix time (a phone reports every few seconds while driving). */
export const POSITION_HISTORY_SPACING_MS = 10_000
/** How far from the arrival a fix may be and still be shown as the fix at the arrival, and kept past pruning. */
export const ARRIVAL_FIX_WINDOW_MS = 30 * 60_000

/** One kept fix. */
export interface HistoryFix { at: number; lat: number; lng: number; accuracyM: number | null }

/**
 * Keeps a fix the unit's row just took as its newest (inside the caller's transaction), unless the
 * unit already has one kept less than POSITION_HISTORY_SPACING_MS of fix time before it.
 */
export function keepFix(tx: Db, unit: { id: string; accountId: string }, fix: HistoryFix, receivedAt: number): boolean {
  const last = tx.$client.query<{ at: number }, [string]>('SELECT at FROM unit_positions WHERE unit_id = ? ORDER BY at DESC LIMIT 1').get(unit.id)
  if (last && fix.at - last.at < POSITION_HISTORY_SPACING_MS) return false
  tx.$client.query('INSERT INTO unit_positions (account_id, unit_id, at, lat, lng, accuracy_m, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(unit.accountId, unit.id, fix.at, fix.lat, fix.lng, fix.accuracyM, receivedAt)
  return true
}

/** The unit's kept fix nearest in time to `atMs` (before or after; the earlier on a tie) within ARRIVAL_FIX_WINDOW_MS, or null. */
export function nearestFix(db: Db, unitId: string, atMs: number): HistoryFix | null {
  const cols = 'at, lat, lng, accuracy_m AS "accuracyM"'
  const before = db.$client.query<HistoryFix, [string, number, number]>(`SELECT ${cols} FROM unit_positions WHERE unit_id = ? AND at <= ? AND at >= ? ORDER BY at DESC LIMIT 1`)
    .get(unitId, atMs, atMs - ARRIVAL_FIX_WINDOW_MS)
  const after = db.$client.query<HistoryFix, [string, number, number]>(`SELECT ${cols} FROM unit_positions WHERE unit_id = ? AND at > ? AND at <= ? ORDER BY at ASC LIMIT 1`)
    .get(unitId, atMs, atMs + ARRIVAL_FIX_WINDOW_MS)
  if (!before || !after) return before ?? after ?? null
  return atMs - before.at <= after.at - atMs ? before : after
}

/**
 * Deletes kept fixes taken before `now - keepMs`, except those within ARRIVAL_FIX_WINDOW_MS of an
 * arrival on scene (a job.status_changed to on_scene) of a job of the same unit that ended GOA.
 * Returns how many were deleted.
 */
export function pruneFixes(db: Db, now: number, keepMs: number): number {
  const cutoff = now - keepMs
  const arrivals = db.$client.query<{ u: string; a: number }, [number]>(`SELECT j.unit_id AS u, e.created_at AS a FROM jobs j JOIN job_events e ON e.job_id = j.id
      WHERE j.status = 'goa' AND j.unit_id IS NOT NULL AND e.type = 'job.status_changed' AND e.to_status = 'on_scene' AND e.created_at < ?`).all(cutoff + ARRIVAL_FIX_WINDOW_MS)
  const result = db.$client.query(db.engine === 'sqlite'
    ? `DELETE FROM unit_positions WHERE at < ?1 AND NOT EXISTS (
      SELECT 1 FROM json_each(?2) w WHERE w.value ->> 'u' = unit_positions.unit_id AND unit_positions.at BETWEEN (w.value ->> 'a') - ?3 AND (w.value ->> 'a') + ?3)`
    : `DELETE FROM unit_positions WHERE at < ?1 AND NOT EXISTS (
      SELECT 1 FROM json_array_elements(?2::text::json) w WHERE w.value ->> 'u' = unit_positions.unit_id
        AND unit_positions.at BETWEEN (w.value ->> 'a')::bigint - ?3 AND (w.value ->> 'a')::bigint + ?3)`)
    .run(cutoff, JSON.stringify(arrivals), ARRIVAL_FIX_WINDOW_MS)
  return result.changes
}

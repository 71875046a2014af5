import { and, asc, eq, gt, inArray, isNull, notInArray, or } from 'drizzle-orm'
import type { Db } from '../db/client'
import { iso } from '../platform/clock'
import { units } from './unit.table'
import { jobs } from '../jobs/job.table'
import { FINISHED } from '../jobs/job-status'

export type UnitRow = typeof units.$inferSelect

/** Maps a raw units row (cached statements on hot paths skip drizzle's per-call prepare). */
function toUnitRow(r: Record<string, any>): UnitRow {
  return {
    id: r.id, accountId: r.account_id, siteId: r.site_id, name: r.name, driverName: r.driver_name, driverPhone: r.driver_phone,
    deviceId: r.device_id, offDuty: r.off_duty === 1 || r.off_duty === true, lat: r.lat, lng: r.lng, accuracyM: r.accuracy_m,
    heading: r.heading, speedKph: r.speed_kph, positionAt: r.position_at, createdAt: r.created_at, updatedAt: r.updated_at,
  }
}

/** Finds a unit of the account. */
export function findUnit(db: Db, accountId: string, id: string): UnitRow | undefined {
  const raw = db.$client.query<Record<string, any>, [string, string]>('SELECT * FROM units WHERE id = ? AND account_id = ?').get(id, accountId)
  return raw ? toUnitRow(raw) : undefined
}

/** Finds the unit a tracking device reports for. */
export function findUnitByDevice(db: Db, deviceId: string): UnitRow | undefined {
  return db.select().from(units).where(eq(units.deviceId, deviceId)).get()
}

/** Loads units by id (for a page of jobs). */
export function unitsByIds(db: Db, ids: string[]): Map<string, UnitRow> {
  if (!ids.length) return new Map()
  return new Map(db.select().from(units).where(inArray(units.id, [...new Set(ids)])).all().map((u) => [u.id, u]))
}

const finite = (n: number | null) => (typeof n === 'number' && Number.isFinite(n) ? n : null)

/**
 * The unit's last shared position, or null. Whatever the row holds (an older version stored
 * any number a phone sent), it renders: no usable place or time is no position, and an
 * unusable speed, heading or accuracy is null.
 */
export function positionOf(u: UnitRow | undefined | null) {
  if (!u) return null
  const lat = finite(u.lat), lng = finite(u.lng), recordedAt = iso(u.positionAt)
  if (lat === null || lng === null || recordedAt === null || Math.abs(lat) > 90 || Math.abs(lng) > 180) return null
  return { lat, lng, accuracy_m: finite(u.accuracyM), heading: finite(u.heading), speed_kph: finite(u.speedKph), recorded_at: recordedAt }
}

/** Lists an account's units by name, after the cursor (name, id). */
export function listUnits(db: Db, accountId: string, limit: number, after?: { name: string; id: string }): UnitRow[] {
  const where = after
    ? and(eq(units.accountId, accountId), or(gt(units.name, after.name), and(eq(units.name, after.name), gt(units.id, after.id))))
    : eq(units.accountId, accountId)
  return db.select().from(units).where(where).orderBy(asc(units.name), asc(units.id)).limit(limit).all()
}

/** Ids of the units that hold an unfinished, unarchived job. */
export function busyUnitIds(db: Db, accountId: string, unitIds: string[]): Set<string> {
  if (!unitIds.length) return new Set()
  const rows = db.select({ unitId: jobs.unitId }).from(jobs)
    .where(and(eq(jobs.accountId, accountId), inArray(jobs.unitId, unitIds), notInArray(jobs.status, [...FINISHED]), isNull(jobs.archivedAt)))
    .all()
  return new Set(rows.map((r) => r.unitId!))
}

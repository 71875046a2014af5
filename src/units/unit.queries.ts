import { and, eq, inArray, isNull, notInArray } from 'drizzle-orm'
import type { Db } from '../db/client'
import { iso } from '../platform/clock'
import { sitesCondition, type AccountScope } from '../accounts/account-scope'
import { units } from './unit.table'
import { jobs } from '../jobs/job.table'
import { FINISHED } from '../jobs/job-status'

export type UnitRow = typeof units.$inferSelect

/** Maps a raw units row (cached statements on hot paths skip drizzle's per-call prepare). */
function toUnitRow(r: Record<string, any>): UnitRow {
  return {
    id: r.id, accountId: r.account_id, siteIds: r.site_ids === null || r.site_ids === undefined ? null : JSON.parse(r.site_ids), name: r.name,
    driverName: r.driver_name, driverPhone: r.driver_phone, deviceId: r.device_id, offDuty: r.off_duty === 1 || r.off_duty === true,
    lat: r.lat, lng: r.lng, accuracyM: r.accuracy_m, heading: r.heading, speedKph: r.speed_kph, positionAt: r.position_at,
    createdAt: r.created_at, updatedAt: r.updated_at,
  }
}

/** Finds a unit of the account (whatever its sites: a job's own unit is always shown on it). */
export function findUnit(db: Db, accountId: string, id: string): UnitRow | undefined {
  const raw = db.$client.query<Record<string, any>, [string, string]>('SELECT * FROM units WHERE id = ? AND account_id = ?').get(id, accountId)
  return raw ? toUnitRow(raw) : undefined
}

/** Finds a unit the caller may see: of its account and serving one of its sites (or every site). */
export function findVisibleUnit(db: Db, scope: AccountScope, id: string): UnitRow | undefined {
  const sites = sitesCondition(scope, 'site_ids')
  const raw = db.$client.query<Record<string, any>, string[]>(`SELECT * FROM units WHERE id = ? AND account_id = ?${sites.sql}`).get(id, scope.accountId, ...sites.params)
  return raw ? toUnitRow(raw) : undefined
}

/** Tells whether a unit serves a site (a unit with no sites listed serves every site of its account). */
export const servesSite = (unit: UnitRow, siteId: string) => unit.siteIds === null || unit.siteIds.includes(siteId)

/** Finds the unit a tracking device reports for. */
export function findUnitByDevice(db: Db, deviceId: string): UnitRow | undefined {
  const raw = db.$client.query<Record<string, any>, [string]>('SELECT * FROM units WHERE device_id = ?').get(deviceId)
  return raw ? toUnitRow(raw) : undefined
}

/** Loads units by id (for a page of jobs). */
export function unitsByIds(db: Db, ids: string[]): Map<string, UnitRow> {
  if (!ids.length) return new Map()
  const unique = [...new Set(ids)]
  const rows = db.$client.query<Record<string, any>, string[]>(`SELECT * FROM units WHERE id IN (${unique.map(() => '?').join(', ')})`).all(...unique)
  return new Map(rows.map((r) => [r.id as string, toUnitRow(r)]))
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

/** Lists the units a caller may see by name, after the cursor (name, id). */
export function listUnits(db: Db, scope: AccountScope, limit: number, after?: { name: string; id: string }): UnitRow[] {
  const sites = sitesCondition(scope, 'site_ids')
  const params: (string | number)[] = [scope.accountId, ...sites.params]
  let where = `account_id = ?${sites.sql}`
  if (after) { where += ' AND (name > ? OR (name = ? AND id > ?))'; params.push(after.name, after.name, after.id) }
  params.push(limit)
  return db.$client.query<Record<string, any>, (string | number)[]>(`SELECT * FROM units WHERE ${where} ORDER BY name, id LIMIT ?`).all(...params).map(toUnitRow)
}

/** Ids of the units that hold an unfinished, unarchived job. */
export function busyUnitIds(db: Db, accountId: string, unitIds: string[]): Set<string> {
  if (!unitIds.length) return new Set()
  const rows = db.select({ unitId: jobs.unitId }).from(jobs)
    .where(and(eq(jobs.accountId, accountId), inArray(jobs.unitId, unitIds), notInArray(jobs.status, [...FINISHED]), isNull(jobs.archivedAt)))
    .all()
  return new Set(rows.map((r) => r.unitId!))
}

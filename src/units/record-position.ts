import { eq } from 'drizzle-orm'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { units } from './unit.table'
import { findUnitByDevice } from './unit.queries'

export interface PositionReport {
  deviceId: string
  lat: number
  lng: number
  /** Epoch ms when the phone took the fix. */
  at: number
  speedKph: number | null
  heading: number | null
  accuracyM: number | null
}

/** Why a position report was refused (answered 400 or 404 to the device). */
export class PositionError extends Error {
  constructor(public status: 400 | 404, message: string) { super(message) }
}

const num = (v: unknown): number | null => {
  if (v === undefined || v === null || v === '') return null
  const n = Number(v)
  return Number.isFinite(n) ? n : null
}

/** Reads a fix time: unix seconds, unix ms or ISO 8601; the receive time when absent. */
function fixTime(raw: unknown, nowMs: number): number {
  if (raw === undefined || raw === null || raw === '') return nowMs
  const n = Number(raw)
  if (Number.isFinite(n)) return n > 1e12 ? n : n * 1000
  const ms = Date.parse(String(raw))
  return Number.isNaN(ms) ? nowMs : ms
}

/**
 * Parses a report in either form Traccar Client sends: OsmAnd query/form parameters
 * (`id`, `lat`, `lon`, `timestamp`, `speed` in knots, `bearing`, `accuracy`) or the newer
 * JSON body (`device_id`, `location.coords.{latitude, longitude, speed m/s, heading, accuracy}`).
 */
export function parsePositionReport(params: Record<string, unknown>, json: unknown, nowMs: number): PositionReport {
  const body = (json && typeof json === 'object' ? json : {}) as Record<string, any>
  if (body.location?.coords) {
    const c = body.location.coords
    const lat = num(c.latitude)
    const lng = num(c.longitude)
    const speed = num(c.speed)
    return check({ deviceId: String(body.device_id ?? params.id ?? ''), lat, lng, at: fixTime(body.location.timestamp, nowMs), speedKph: speed !== null && speed >= 0 ? speed * 3.6 : null, heading: num(c.heading), accuracyM: num(c.accuracy) })
  }
  const p = { ...params, ...body }
  const knots = num(p.speed)
  return check({
    deviceId: String(p.id ?? p.deviceid ?? ''), lat: num(p.lat), lng: num(p.lon ?? p.lng), at: fixTime(p.timestamp, nowMs),
    speedKph: knots !== null ? Math.round(knots * 1.852 * 10) / 10 : null, heading: num(p.bearing ?? p.heading), accuracyM: num(p.accuracy),
  })
}

function check(r: Omit<PositionReport, 'lat' | 'lng'> & { lat: number | null; lng: number | null }): PositionReport {
  if (!r.deviceId) throw new PositionError(400, 'missing id (the device identifier)')
  if (r.lat === null || r.lng === null || Math.abs(r.lat) > 90 || Math.abs(r.lng) > 180) throw new PositionError(400, 'missing or invalid lat/lon')
  return r as PositionReport
}

/** Stores a unit's newest position; an older fix arriving late does not overwrite a newer one. */
export function recordPosition(db: Db, clock: Clock, report: PositionReport): { unitId: string; stored: boolean } {
  const unit = findUnitByDevice(db, report.deviceId)
  if (!unit) throw new PositionError(404, `no unit reports as device ${report.deviceId}`)
  if (unit.positionAt !== null && report.at < unit.positionAt) return { unitId: unit.id, stored: false }
  db.update(units).set({
    lat: report.lat, lng: report.lng, accuracyM: report.accuracyM, heading: report.heading, speedKph: report.speedKph,
    positionAt: report.at, updatedAt: clock.now(),
  }).where(eq(units.id, unit.id)).run()
  return { unitId: unit.id, stored: true }
}

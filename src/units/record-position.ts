import { eq } from 'drizzle-orm'
import { inTransaction, type Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { isRenderableTime, readIsoTime } from '../platform/time'
import { units } from './unit.table'
import { findUnitByDevice } from './unit.queries'
import { keepFix } from './position-history'

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

/** A fix further ahead of the server's clock than this is refused: phones drift a little, never years. */
export const MAX_FIX_AHEAD_MS = 5 * 60_000
/**
 * A fix older than this is answered 200 and dropped. Not refused: Traccar Client resends a
 * refused fix forever, so one stale fix in a phone's offline buffer would block all later ones.
 */
export const MAX_FIX_AGE_MS = 7 * 86_400_000
/** Faster than any tow truck; a phone reporting more has a broken fix. */
export const MAX_SPEED_KPH = 1000
/** Larger than any real fix's uncertainty (a cell-tower fix is a few kilometres). */
const MAX_ACCURACY_M = 1_000_000

/** Why a position report was refused (answered to the device in plain text). */
export class PositionError extends Error {
  constructor(public status: 400 | 404, message: string) { super(message) }
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/
const absent = (v: unknown) => v === undefined || v === null || v === ''

/**
 * Reads a number sent as a JSON number or as decimal text (form and query values are text);
 * null when absent; 400 when not a finite number. In Traccar Client's JSON, numbers are numbers.
 */
function finiteOf(name: string, v: unknown, jsonNumber = false): number | null {
  if (absent(v)) return null
  const n = typeof v === 'number' ? v : !jsonNumber && typeof v === 'string' && NUMBER.test(v.trim()) ? Number(v) : NaN
  if (!Number.isFinite(n)) throw new PositionError(400, `${name} must be a number`)
  return n
}

/** Reads a number that must lie in [min, max]; null when absent. */
function numberOf(name: string, v: unknown, min: number, max: number, unit = '', jsonNumber = false): number | null {
  const n = finiteOf(name, v, jsonNumber)
  if (n !== null && (n < min || n > max)) throw new PositionError(400, `${name} must be a number from ${min} to ${max}${unit}`)
  return n
}

/** Reads a fix time: unix seconds, unix ms or ISO 8601 with a zone; the receive time when absent. */
function fixTime(raw: unknown, nowMs: number): number {
  if (absent(raw)) return nowMs
  let at: number | null = null
  if (typeof raw === 'number' || (typeof raw === 'string' && NUMBER.test(raw.trim()))) {
    const n = Number(raw)
    at = Number.isFinite(n) ? (Math.abs(n) > 1e12 ? n : n * 1000) : null
  } else if (typeof raw === 'string') {
    at = readIsoTime(raw.trim())
  }
  if (at === null || !isRenderableTime(at)) throw new PositionError(400, 'timestamp is not a valid time (unix seconds, or ISO 8601 with a zone)')
  if (at > nowMs + MAX_FIX_AHEAD_MS) throw new PositionError(400, 'timestamp lies more than 5 minutes in the future; check the phone\'s clock')
  return Math.round(at)
}

/** Speed in km/h from a phone's value (`toKph` per unit sent); negative means "unknown", as phones send -1. */
function speedKph(v: unknown, toKph: number, jsonNumber = false): number | null {
  const n = finiteOf('speed', v, jsonNumber)
  if (n === null || n < 0) return null
  const kph = n * toKph
  if (kph > MAX_SPEED_KPH) throw new PositionError(400, `speed must be at most ${MAX_SPEED_KPH} km/h`)
  return Math.round(kph * 10) / 10
}

/** Heading in degrees; -1 means "unknown", as phones send it. */
function headingOf(v: unknown, jsonNumber = false): number | null {
  if (v === -1 || (!jsonNumber && v === '-1')) return null
  return numberOf('bearing', v, 0, 360, '', jsonNumber)
}

function deviceIdOf(v: unknown): string {
  const id = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : ''
  if (!id || id.length > 200) throw new PositionError(400, 'missing id (the device identifier)')
  return id
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Parses a report in either form Traccar Client sends: OsmAnd query/form parameters
 * (`id`, `lat`, `lon`, `timestamp`, `speed` in knots, `bearing`, `accuracy`) or the newer
 * JSON body (`device_id`, `location.coords.{latitude, longitude, speed m/s, heading, accuracy}`).
 * A value that is not a number in range, or a time that is not valid or lies in the future,
 * is a PositionError (400); unknown parameters (altitude, battery...) are ignored.
 */
export function parsePositionReport(params: Record<string, unknown>, json: unknown, nowMs: number): PositionReport {
  if (json !== undefined && !isObject(json)) throw new PositionError(400, 'the JSON body must be an object')
  const body = json ?? {}
  const location = body.location
  if (location !== undefined && !isObject(location)) throw new PositionError(400, 'location must be an object')
  if (location?.coords !== undefined) {
    const c = location.coords
    if (!isObject(c)) throw new PositionError(400, 'location.coords must be an object')
    return check({
      deviceId: deviceIdOf(body.device_id ?? params.id), lat: numberOf('latitude', c.latitude, -90, 90, '', true), lng: numberOf('longitude', c.longitude, -180, 180, '', true),
      at: fixTime(location.timestamp, nowMs), speedKph: speedKph(c.speed, 3.6, true), heading: headingOf(c.heading, true), accuracyM: numberOf('accuracy', c.accuracy, 0, MAX_ACCURACY_M, ' m', true),
    })
  }
  const p = { ...params, ...body }
  return check({
    deviceId: deviceIdOf(p.id ?? p.deviceid ?? p.device_id), lat: numberOf('lat', p.lat, -90, 90), lng: numberOf('lon', p.lon ?? p.lng, -180, 180),
    at: fixTime(p.timestamp, nowMs), speedKph: speedKph(p.speed, 1.852), heading: headingOf(p.bearing ?? p.heading), accuracyM: numberOf('accuracy', p.accuracy, 0, MAX_ACCURACY_M, ' m'),
  })
}

function check(r: Omit<PositionReport, 'lat' | 'lng'> & { lat: number | null; lng: number | null }): PositionReport {
  if (r.lat === null || r.lng === null) throw new PositionError(400, 'missing lat/lon')
  return r as PositionReport
}

/**
 * Stores a unit's newest position (and keeps it in the position history, position-history.ts). A fix older than the stored one (arriving late) or older
 * than MAX_FIX_AGE_MS is not stored; a stored time no fix could have today (left by an older
 * version that took any number) never holds a real fix back.
 */
export function recordPosition(db: Db, clock: Clock, report: PositionReport): { unitId: string; stored: boolean } {
  const unit = findUnitByDevice(db, report.deviceId)
  if (!unit) throw new PositionError(404, `no unit reports as device ${report.deviceId}`)
  return storeFix(db, clock, unit, report)
}

/**
 * Stores a fix for a unit known by id (the driver's page shares the phone's position this way):
 * the same rules as the OsmAnd feed. 404 when the unit is not found.
 */
export function recordUnitPosition(db: Db, clock: Clock, unitId: string, fix: Omit<PositionReport, 'deviceId'>): { unitId: string; stored: boolean } {
  const unit = db.select().from(units).where(eq(units.id, unitId)).get()
  if (!unit) throw new PositionError(404, `no unit ${unitId}`)
  return storeFix(db, clock, unit, fix)
}

function storeFix(db: Db, clock: Clock, unit: { id: string; accountId: string; positionAt: number | null }, report: Omit<PositionReport, 'deviceId'>): { unitId: string; stored: boolean } {
  const now = clock.now()
  if (report.at < now - MAX_FIX_AGE_MS) return { unitId: unit.id, stored: false }
  const stored = unit.positionAt
  const believable = stored !== null && isRenderableTime(stored) && stored <= now + MAX_FIX_AHEAD_MS
  if (believable && report.at < stored) return { unitId: unit.id, stored: false }
  // The newest fix and its place in the history, together.
  inTransaction(db, (tx) => {
    tx.update(units).set({
      lat: report.lat, lng: report.lng, accuracyM: report.accuracyM, heading: report.heading, speedKph: report.speedKph,
      positionAt: report.at, updatedAt: now,
    }).where(eq(units.id, unit.id)).run()
    keepFix(tx, unit, { at: report.at, lat: report.lat, lng: report.lng, accuracyM: report.accuracyM }, now)
  })
  return { unitId: unit.id, stored: true }
}

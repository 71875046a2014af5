/**
 * The one reader of ISO 8601 times from outside (bodies, queries, devices). Date.parse rolls
 * 2026-02-30 into March, reads years past 9999 and guesses at free text; this refuses all that.
 */

/** The first instant of year 0000: the earliest a four-digit ISO year can hold. */
export const MIN_TIME_MS = new Date('0000-01-01T00:00:00.000Z').getTime()
/** The last instant of year 9999: the latest a four-digit ISO year can hold. */
export const MAX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|([+-])(\d{2}):?(\d{2})))?$/

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * Reads `2026-11-21T09:30:00Z` (seconds, fraction, `Z` or a `±hh:mm` offset optional as shown)
 * into epoch milliseconds, or null when it is not a real instant of years 0000-9999. A date
 * alone (midnight UTC) is read only with `dateOnly`; a time without a zone never is.
 */
export function readIsoTime(raw: string, opts: { dateOnly?: boolean } = {}): number | null {
  if (typeof raw !== 'string' || raw.length > 40) return null
  const m = DATE_TIME.exec(raw)
  if (!m) return null
  const [, ys, mos, ds, hs, mis, ss, frac, zone, sign, ohs, oms] = m
  if (hs === undefined && !opts.dateOnly) return null
  if (hs !== undefined && zone === undefined) return null
  const y = Number(ys), mo = Number(mos), d = Number(ds)
  const h = Number(hs ?? 0), mi = Number(mis ?? 0), s = Number(ss ?? 0)
  if (mo < 1 || mo > 12 || d < 1 || d > (mo === 2 && isLeap(y) ? 29 : DAYS[mo - 1]!)) return null
  if (h > 23 || mi > 59 || s > 59) return null
  let offsetMin = 0
  if (sign) {
    const oh = Number(ohs), om = Number(oms)
    if (oh > 23 || om > 59) return null
    offsetMin = (sign === '-' ? -1 : 1) * (oh * 60 + om)
  }
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0
  // Date.UTC reads years 0-99 as 1900-1999, so set the year separately.
  const at = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms))
  at.setUTCFullYear(y, mo - 1, d)
  const out = at.getTime() - offsetMin * 60_000
  return out >= MIN_TIME_MS && out <= MAX_TIME_MS ? out : null
}

/** Tells whether epoch milliseconds name an instant an ISO string of years 0000-9999 can hold. */
export function isRenderableTime(ms: unknown): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= MIN_TIME_MS && ms <= MAX_TIME_MS
}

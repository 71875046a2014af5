/**
 * Time zones (IANA names, such as America/Los_Angeles): an account's days and clock times. The
 * database keeps instants (UTC milliseconds); a zone only decides how they are shown and where a
 * day the company names (a search's From and To, an export's --since) begins.
 */

import { readIsoTime } from './time'

const KNOWN = new Map<string, string>()
for (const name of [...Intl.supportedValuesOf('timeZone'), 'UTC']) KNOWN.set(name.toLowerCase(), name)

/** Every zone a company can choose, as the settings page lists them (UTC first). */
export const TIME_ZONES: readonly string[] = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')]

/** The zone's own name for a name typed in any case (`america/chicago` → America/Chicago; `utc` → UTC), or null for no zone. */
export function timeZoneNamed(raw: string): string | null {
  const typed = raw.trim()
  const known = KNOWN.get(typed.toLowerCase())
  if (known) return known
  // Other region names the runtime takes (links such as US/Pacific), shown as it names them; not
  // bare offsets (+05:00), which keep no daylight saving.
  if (!/^[A-Za-z][A-Za-z_]*(\/[A-Za-z0-9][A-Za-z0-9_+-]*)+$/.test(typed)) return null
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: typed }).resolvedOptions().timeZone
  } catch {
    return null
  }
}

/** A stored zone as pages and exports use it: UTC when this runtime does not know it (a database from a machine with newer zone data), never an error. */
export function usableTimeZone(stored: string): string {
  return timeZoneNamed(stored) ?? 'UTC'
}

/** A YYYY-MM-DD day that exists (a search's From, an export's --since), as year, month and day for startOfDayIn; null for anything else. */
export function readDay(raw: string): [number, number, number] | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || readIsoTime(raw, { dateOnly: true }) === null) return null
  return raw.split('-').map(Number) as [number, number, number]
}

/** What a refused zone is told: the example an owner recognises. */
export const TIME_ZONE_HINT = 'must be a time zone name such as America/Los_Angeles, America/New_York, Europe/London or UTC'

/** The zone this machine runs in (TZ, or the system's), UTC when it names none the runtime knows. */
export function machineTimeZone(): string {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone
  return (zone && timeZoneNamed(zone)) ?? 'UTC'
}

interface Parts { year: number; month: number; day: number; hour: number; minute: number; second: number; zoneName: string }

const partFormats = new Map<string, Intl.DateTimeFormat>()
function partsOf(ms: number, zone: string): Parts {
  let format = partFormats.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
    })
    partFormats.set(zone, format)
  }
  const p: Record<string, string> = {}
  for (const part of format.formatToParts(ms)) p[part.type] = part.value
  return { year: Number(p.year), month: Number(p.month), day: Number(p.day), hour: Number(p.hour) % 24, minute: Number(p.minute), second: Number(p.second), zoneName: p.timeZoneName ?? zone }
}

/** How far the zone's clocks are ahead of UTC at `ms`, in milliseconds. */
function offsetAt(ms: number, zone: string): number {
  const p = partsOf(ms, zone)
  return new Date(0).setUTCFullYear(p.year, p.month - 1, p.day) + ((p.hour * 60 + p.minute) * 60 + p.second) * 1000 - Math.floor(ms / 1000) * 1000
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** The day (YYYY-MM-DD) it is in the zone at `ms`. */
export function dayIn(ms: number, zone: string): string {
  const p = partsOf(ms, zone)
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`
}

/** An ISO instant as people in `zone` read it (localTimeText), or the text as it is when it is no instant. */
export function isoTimeText(isoText: string, zone: string): string {
  const ms = Date.parse(isoText)
  return Number.isFinite(ms) ? localTimeText(ms, zone) : isoText
}

/** `ms` as people there read it: `2026-11-21 09:30 PST` (the zone's short name, or its offset where it has none). */
export function localTimeText(ms: number, zone: string): string {
  const p = partsOf(ms, zone)
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)} ${p.zoneName}`
}

/**
 * The first instant of a day (`year`, `month` 1-12, `day`, which may run past the month's end) in the zone: its midnight, or, where
 * the clocks skip midnight (a daylight-saving change at 00:00, as in Havana or Santiago), the
 * first instant the day has.
 */
export function startOfDayIn(year: number, month: number, day: number, zone: string): number {
  // Carries an overflowing day into the next month (the 32nd of January is the 1st of February);
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const wall = new Date(0).setUTCFullYear(year, month - 1, day)
  const target = new Date(wall).toISOString().slice(0, 10)
  // The wall time less the offset in force then; the offset is looked up again at the guess,
  // since the first guess may fall on the other side of a change.
  let at = wall - offsetAt(wall, zone)
  at = wall - offsetAt(at, zone)
  const inDay = (ms: number) => dayIn(ms, zone) === target
  // Near a change of the clocks the guess can land before the day (midnight skipped) or inside it
  // after its start: the start is then found between the guess and six hours off it.
  let [before, first] = inDay(at) ? (inDay(at - 1) ? [at - 6 * 3_600_000, at] : [at, at]) : [at, at + 6 * 3_600_000]
  while (first - before > 1) {
    const mid = Math.floor((before + first) / 2)
    if (inDay(mid)) first = mid
    else before = mid
  }
  return first
}

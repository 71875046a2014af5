import { isRenderableTime } from './time'

/** "Now" as an injectable dependency so tests can walk hours of retries in milliseconds. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

const DAY_MS = 86_400_000
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => (i < 10 ? '0' : '') + i)
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'))
// The UTC day of the last time formatted and its "YYYY-MM-DDT": times cluster (a job's
// milestones, a page of jobs), so most are the same day and only their time of day is formatted.
let dayStart = NaN
let dayPrefix = ''

/**
 * Formats epoch milliseconds as ISO 8601 UTC with milliseconds, or null. A stored value no
 * four-digit-year ISO string can hold (1e300, Infinity) renders as null: a view never throws.
 * The same text as Date's toISOString (a test compares them), in a third of its time: a job
 * shows seventeen times, and every read of one formats them.
 */
export function iso(ms: number | null | undefined): string | null {
  if (!isRenderableTime(ms)) return null
  // The same times are shown again and again (a job read by every poll): each is formatted
  // once, and the string kept is flat after its first JSON.stringify (a fresh one is a rope).
  const known = formatted.get(ms)
  if (known !== undefined) return known
  const text = format(ms)
  if (formatted.size >= FORMATTED_KEPT) formatted.clear()
  formatted.set(ms, text)
  return text
}

/** Times formatted lately (a job has about twenty; a page of jobs, a few hundred). */
const formatted = new Map<number, string>()
const FORMATTED_KEPT = 50_000

function format(ms: number): string {
  const t = Math.trunc(ms)
  let into = t - dayStart
  if (!(into >= 0 && into < DAY_MS)) {
    dayStart = Math.floor(t / DAY_MS) * DAY_MS
    dayPrefix = new Date(dayStart).toISOString().slice(0, 11)
    into = t - dayStart
  }
  const sec = Math.floor(into / 1000)
  return dayPrefix + TWO_DIGITS[Math.floor(sec / 3600)] + ':' + TWO_DIGITS[Math.floor(sec / 60) % 60] + ':' + TWO_DIGITS[sec % 60] + '.' + THREE_DIGITS[into % 1000] + 'Z'
}

import { isRenderableTime } from './time'

/** "Now" as an injectable dependency so tests can walk hours of retries in milliseconds. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

/**
 * Formats epoch milliseconds as ISO 8601 UTC with milliseconds, or null. A stored value no
 * four-digit-year ISO string can hold (1e300, Infinity) renders as null: a view never throws.
 */
export function iso(ms: number | null | undefined): string | null {
  return isRenderableTime(ms) ? new Date(ms).toISOString() : null
}

/** "Now" as an injectable dependency so tests can walk hours of retries in milliseconds. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

/** Formats epoch milliseconds as ISO 8601 UTC with milliseconds, or null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString()
}

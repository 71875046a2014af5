import { describe, expect, test } from 'bun:test'
import { parseSchedule } from '../config'
import { nextAttemptAt } from './record-attempt'

const H = 3_600_000
const schedule = parseSchedule('1m,10m,1h,4h,12h,33h')

describe('the retry schedule', () => {
  test('six retries at 1 min, 10 min, 1 h, 4 h, 12 h and 33 h after the first attempt, then none', () => {
    const at = (n: number) => nextAttemptAt(schedule, 0, n, 0, null, () => 0)
    expect([1, 2, 3, 4, 5, 6].map(at)).toEqual([60_000, 600_000, H, 4 * H, 12 * H, 33 * H])
    expect(at(7)).toBeNull()
  })

  test('jitter adds up to 10% of the gap before a retry and never pushes the last past 33 h', () => {
    const max = (n: number) => nextAttemptAt(schedule, 0, n, 0, null, () => 0.999999)!
    expect(max(1)).toBeLessThanOrEqual(60_000 + 6_000)
    expect(max(1)).toBeGreaterThan(60_000)
    expect(max(3)).toBeLessThanOrEqual(H + 0.1 * (H - 600_000))
    expect(max(6)).toBe(33 * H)
  })

  test('a Retry-After waits at least that long', () => {
    expect(nextAttemptAt(schedule, 0, 1, 1000, 5 * 60_000, () => 0)).toBe(1000 + 5 * 60_000)
  })

  test('a retry already overdue goes now', () => {
    expect(nextAttemptAt(schedule, 0, 2, 2 * H, null, () => 0)).toBe(2 * H)
  })
})

import { expect, test } from 'bun:test'
import { RateLimiter } from './rate-limit'

/** A clock the test moves. */
const clockAt = (ms: number) => ({ ms, now() { return this.ms } })

test('each id and kind has its own bucket: a burst of the limit, then one more every 60/limit seconds', () => {
  const clock = clockAt(1_000_000)
  const limiter = new RateLimiter(clock, { read: 2, write: 1 })
  expect([limiter.take('a', 'read').allowed, limiter.take('a', 'read').allowed, limiter.take('a', 'read').allowed]).toEqual([true, true, false])
  // Another kind of the same id, and the same kind of another id, are untouched.
  expect(limiter.take('a', 'write').allowed).toBe(true)
  expect(limiter.take('b', 'read')).toMatchObject({ allowed: true, limit: 2, remaining: 1 })
  const refused = limiter.take('a', 'read')
  expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterS: 30 })
  clock.ms += 30_000
  expect(limiter.peek('a', 'read').allowed).toBe(true)
  expect(limiter.take('a', 'read')).toMatchObject({ allowed: true, remaining: 0 })
})

test('at 10,000 tracked buckets only full ones are forgotten: an id at its limit stays limited', () => {
  const clock = clockAt(1_000_000)
  const limiter = new RateLimiter(clock, { read: 2, write: 1 })
  limiter.take('busy', 'read')
  limiter.take('busy', 'read')
  // 10,000 buckets in all: none is forgotten before the newcomer below.
  for (let i = 0; i < 9_999; i++) limiter.take(`once-${i}`, 'write')
  // A minute on, every "once" bucket is full again; "busy" was just emptied once more.
  clock.ms += 60_000
  limiter.take('busy', 'read')
  limiter.take('busy', 'read')
  // A new id finds 10,000 buckets and prunes: the full ones go, "busy" stays empty.
  expect(limiter.take('newcomer', 'read').allowed).toBe(true)
  expect(limiter.take('busy', 'read')).toMatchObject({ allowed: false, remaining: 0 })
  // A forgotten bucket behaves as a new one would: its whole quota.
  expect(limiter.take('once-1', 'write')).toMatchObject({ allowed: true, remaining: 0 })
})

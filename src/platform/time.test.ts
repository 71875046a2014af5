import { describe, expect, test } from 'bun:test'
import { iso } from './clock'
import { readIsoTime } from './time'

const DAY = 86_400_000

describe('readIsoTime', () => {
  test.each([
    ['2026-11-21T09:30:00Z', '2026-11-21T09:30:00.000Z'],
    ['2026-11-21T09:30:00.123Z', '2026-11-21T09:30:00.123Z'],
    ['2026-11-21T09:30:00.123456789Z', '2026-11-21T09:30:00.123Z'],
    ['2026-11-21t09:30:00z', '2026-11-21T09:30:00.000Z'],
    ['2026-11-21T09:30Z', '2026-11-21T09:30:00.000Z'],
    ['2026-11-21T09:30:00+02:00', '2026-11-21T07:30:00.000Z'],
    ['2026-11-21T09:30:00-0530', '2026-11-21T15:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59.999Z', '2000-02-29T23:59:59.999Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['0099-06-01T00:00:00Z', '0099-06-01T00:00:00.000Z'],
  ])('reads %s as %s', (raw, expected) => {
    expect(iso(readIsoTime(raw))).toBe(expected)
  })

  test('reads a date alone as midnight UTC only when asked to', () => {
    expect(iso(readIsoTime('2026-11-21', { dateOnly: true }))).toBe('2026-11-21T00:00:00.000Z')
    expect(readIsoTime('2026-11-21')).toBeNull()
  })

  test.each([
    '2026-02-30T00:00:00Z', '2026-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z',
    '2026-01-00T00:00:00Z', '2026-01-01T24:00:01Z', '2026-01-01T24:00:00Z', '2026-01-01T23:60:00Z', '2026-01-01T23:59:60Z',
    '+275760-09-13T00:00:00Z', '-000001-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '275760-09-13T00:00:00.000Z',
    '0000-01-01T00:00:00+01:00', '9999-12-31T23:59:59-00:01',
    '2026-11-21T09:30:00', '2026-11-21 09:30:00Z', '2026-11-21T09:30:00+24:00', '2026-11-21T09:30:00+02:60', '2026-11-21T9:30:00Z',
    'Sat, 21 Nov 2026 09:30:00 GMT', 'November 21, 2026', '1700000000', '', ' 2026-11-21T09:30:00Z', '2026-11-21T09:30:00Z ', '2026-11-21T09:30:00.Z',
    '２０２６-11-21T09:30:00Z',
  ])('refuses %p', (raw) => {
    expect(readIsoTime(raw, { dateOnly: true })).toBeNull()
  })
})

describe('iso', () => {
  test('writes what Date.toISOString writes, for any renderable time: day boundaries, years 0000-9999, fractions, in any order', () => {
    const edges = [0, -1, 1, 86_399_999, 86_400_000, -86_400_000, -86_400_001, 0.5, -0.5, 1.999, Date.UTC(2026, 10, 26, 23, 59, 59, 999), Date.UTC(2024, 1, 29, 12), -62167219200000, 253402300799999]
    const random = Array.from({ length: 20_000 }, (_, i) => {
      const span = i % 3 === 0 ? 2 * DAY : 253402300799999 + 62167219200000
      const base = i % 3 === 0 ? Date.UTC(2026, 10, 26) - DAY : -62167219200000
      return base + Math.random() * span
    })
    for (const ms of [...edges, ...random]) {
      const date = new Date(ms)
      const want = date.getUTCFullYear() >= 0 && date.getUTCFullYear() <= 9999 ? date.toISOString() : null
      if (iso(ms) !== want) expect({ ms, out: iso(ms) }).toEqual({ ms, out: want })
    }
  })

  test('renders what no ISO string can hold as null instead of throwing', () => {
    for (const bad of [1e300, -1e300, Infinity, -Infinity, NaN, 8.64e15 + 1, Date.UTC(10000, 0, 1), Date.UTC(-1, 0, 1)]) {
      expect({ bad, out: iso(bad) }).toEqual({ bad, out: null })
    }
    expect(iso(0)).toBe('1970-01-01T00:00:00.000Z')
    expect(iso(null)).toBeNull()
  })
})

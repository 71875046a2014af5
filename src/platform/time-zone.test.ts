import { expect, test } from 'bun:test'
import { dayIn, localTimeText, startOfDayIn, TIME_ZONES, timeZoneNamed, usableTimeZone } from './time-zone'

const pad = (n: number) => String(n).padStart(2, '0')

test('a day starts at its first instant in the zone: midnight, or where the clocks skip it, for every day of 2026', () => {
  // Zones with daylight saving at midnight (Havana, Santiago, Asuncion), half- and quarter-hour
  // offsets, half-hour daylight saving (Lord Howe), and the ordinary ones.
  const zones = ['UTC', 'America/Los_Angeles', 'America/New_York', 'America/Havana', 'America/Santiago', 'America/Asuncion', 'Asia/Kolkata',
    'Pacific/Chatham', 'Australia/Lord_Howe', 'Europe/London', 'America/St_Johns', 'Pacific/Kiritimati', 'Asia/Gaza']
  const wrong: string[] = []
  for (const zone of zones) {
    for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 86_400_000) {
      const d = new Date(ms)
      const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
      const start = startOfDayIn(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), zone)
      if (dayIn(start, zone) !== day || dayIn(start - 1, zone) === day) wrong.push(`${zone} ${day}: ${new Date(start).toISOString()}`)
    }
  }
  expect(wrong).toEqual([])
  // Two known answers: Los Angeles on the day clocks go forward, and Havana, where 00:00 never happens that day.
  expect(new Date(startOfDayIn(2026, 3, 8, 'America/Los_Angeles')).toISOString()).toBe('2026-03-08T08:00:00.000Z')
  expect(new Date(startOfDayIn(2026, 3, 8, 'America/Havana')).toISOString()).toBe('2026-03-08T05:00:00.000Z')
  // The years 0 to 99 are those years, not 1900 to 1999.
  expect(startOfDayIn(50, 1, 1, 'UTC')).toBe(Date.parse('0050-01-01T00:00:00.000Z'))
  // The day after the last of a month, as a search's To asks for it.
  expect(new Date(startOfDayIn(2026, 12, 32, 'America/Chicago')).toISOString()).toBe('2027-01-01T06:00:00.000Z')
}, 30_000)

test('a time as people in the zone read it, with the zone\'s short name', () => {
  expect(localTimeText(Date.parse('2026-11-27T22:44:59Z'), 'America/Los_Angeles')).toBe('2026-11-27 14:44 PST')
  expect(localTimeText(Date.parse('2026-07-01T03:30:00Z'), 'America/Los_Angeles')).toBe('2026-06-30 20:30 PDT')
  expect(localTimeText(Date.parse('2026-11-27T22:44:00Z'), 'UTC')).toBe('2026-11-27 22:44 UTC')
  expect(dayIn(Date.parse('2026-11-28T01:00:00Z'), 'America/Chicago')).toBe('2026-11-27')
})

test('zone names: any case, the runtime\'s other names, nothing else', () => {
  expect(timeZoneNamed('america/chicago')).toBe('America/Chicago')
  expect(timeZoneNamed(' utc ')).toBe('UTC')
  expect(timeZoneNamed('US/Pacific')).toBe('US/Pacific')
  for (const bad of ['', 'PST8', 'Mars/Olympus', 'America/', '../etc/passwd', '+05:00']) expect(timeZoneNamed(bad)).toBeNull()
  // A zone stored by a machine with other zone data: pages and exports use UTC rather than fail.
  expect(usableTimeZone('Mars/Olympus')).toBe('UTC')
  expect(usableTimeZone('America/Chicago')).toBe('America/Chicago')
  expect(TIME_ZONES[0]).toBe('UTC')
  expect(TIME_ZONES).toContain('America/Los_Angeles')
  expect(new Set(TIME_ZONES).size).toBe(TIME_ZONES.length)
})

import { expect, test } from 'bun:test'
import { normalizePhone } from './phone'

test.each([
  ['(555) 201-3344', '+15552013344'],
  ['555.201.3344', '+15552013344'],
  ['1-555-201-3344', '+15552013344'],
  ['+1 555 201 3344', '+15552013344'],
  ['+44 20 7946 0958', '+442079460958'],
  ['0044 20 7946 0958', '+442079460958'],
])('normalises %s to %s', (input, e164) => expect(normalizePhone(input)).toBe(e164))

test.each(['12345', 'call me', '+1 055 201 3344', '555-201-334', '+0123456789', ''])('refuses %p', (input) => expect(normalizePhone(input)).toBeNull())

test.each([
  ['020 7946 0958', 'GB', '+442079460958'],
  ['07700 900123', 'GB', '+447700900123'],
  ['0412 345 678', 'AU', '+61412345678'],
  ['612 345 678', 'ES', '+34612345678'],
  ['(555) 201-3344', 'CA', '+15552013344'],
])('reads %s in %s as %s', (input, country, e164) => expect(normalizePhone(input, country)).toBe(e164))

test('a number without + in an unknown country is refused', () => expect(normalizePhone('5552013344', 'XX')).toBeNull())

test.each([
  ['06 12 34 56 78', 'FR', '+33612345678'],
  ['03-1234-5678', 'JP', '+81312345678'],
  ['030 123456', 'DE', '+4930123456'],
  ['(11) 91234-5678', 'BR', '+5511912345678'],
  ['+33 6 12 34 56 78', 'US', '+33612345678'],
])('reads %s in %s as %s, for every country libphonenumber knows', (input, country, e164) => expect(normalizePhone(input, country)).toBe(e164))

test.each([
  ['+1 503 555 0142 ext. 12', 'US'],
  ['+33 0 23 45 67 89', 'US'],
  ['+1 123 456 7890', 'US'],
  ['+999 123456789', 'US'],
  ['++15035550142', 'US'],
])('refuses %s (an extension, or a shape the country\'s plan does not have)', (input, country) => expect(normalizePhone(input, country)).toBeNull())

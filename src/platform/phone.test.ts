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

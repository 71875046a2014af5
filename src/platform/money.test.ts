import { describe, expect, test } from 'bun:test'
import { amountText, dollarsText, parseDollars } from './money'

describe('parseDollars', () => {
  test('dollars and cents as people type them', () => {
    const read = Object.fromEntries(['185', '185.00', '185.5', '$185', '$ 185.00', ' 185 ', '$1,185.50', '1,000,000', '0', '0.07', '9999999.99'].map((s) => [s, parseDollars(s)]))
    expect(read).toEqual({ '185': 18500, '185.00': 18500, '185.5': 18550, '$185': 18500, '$ 185.00': 18500, ' 185 ': 18500, '$1,185.50': 118550, '1,000,000': 100000000, '0': 0, '0.07': 7, '9999999.99': 999999999 })
  })

  test('blank is null', () => {
    expect([parseDollars(''), parseDollars('   ')]).toEqual([null, null])
  })

  test('a comma anywhere but between thousands is not money (a decimal comma would read 100 times too much)', () => {
    for (const s of ['185,00', '1,85', '1,2,3', '12,34,567', '1,2345', ',185', '185,', '1 185,50', '185.555', '-5', '1e3', '$$5', '10000000', '12,345,678', 'five']) {
      expect({ s, cents: parseDollars(s) }).toEqual({ s, cents: undefined })
    }
  })

  test('what amountText and dollarsText print reads back the same', () => {
    for (const cents of [0, 7, 18500, 118550, 999999999]) {
      expect(parseDollars(amountText(cents))).toBe(cents)
      expect(parseDollars(dollarsText(cents))).toBe(cents)
    }
  })
})

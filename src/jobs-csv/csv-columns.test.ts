/** The column list against its documentation, and the formula guard's exact round trip. */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CSV_COLUMNS } from './csv-columns'
import { csvLine, guardCell, readCell, readRecords } from './csv-text'

describe('the columns', () => {
  test('docs/csv.md lists every column, with its kind, in order, and nothing else', () => {
    const docs = readFileSync(join(import.meta.dir, '../../docs/csv.md'), 'utf8')
    const listed = [...docs.matchAll(/^\| `([^`]+)` \| (\w+) \|/gm)].map((m) => `${m[1]} ${m[2]}`)
    expect(listed).toEqual(CSV_COLUMNS.map((c) => `${c.name} ${c.kind}`))
  })
})

describe('formula guard', () => {
  test('cells a spreadsheet would run start with a quote; plain negative numbers and other text are left alone', () => {
    expect(guardCell('+15035550142')).toBe("'+15035550142")
    expect(guardCell('=1+1')).toBe("'=1+1")
    expect(guardCell('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(guardCell('\tx')).toBe("'\tx")
    expect(guardCell("'=x")).toBe("''=x")
    expect(guardCell('-122.6765')).toBe('-122.6765')
    expect(guardCell("O'Brien")).toBe("O'Brien")
    expect(readCell("'hello")).toBe("'hello")
  })

  test('any text written by the export reads back exactly, whatever it holds', () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', "'", '"', ',', ';', 'a', '1', '.', ' ') }), { minLength: 1, maxLength: 5 }), (cells) => {
      const [record] = readRecords(csvLine(cells), ',')
      expect(record!.cells.map(readCell)).toEqual(cells)
    }), { numRuns: 2000 })
  })
})

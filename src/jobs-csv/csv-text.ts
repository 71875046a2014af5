/**
 * CSV as files from spreadsheets arrive and leave: bytes to text (UTF-8 with or without a BOM,
 * UTF-16 with a BOM from Excel's "Unicode text", else Windows-1252 from Excel's plain "CSV"),
 * the delimiter read from the header line (comma, semicolon from European Excel, tab), records
 * numbered as a spreadsheet shows them, and cells written so that no spreadsheet runs them as
 * formulas.
 */
import { parse } from 'csv-parse/sync'

/** A record of the file and the row a spreadsheet shows it on (the header is row 1). */
export interface CsvRecord { row: number; cells: string[] }

/** A file that is not readable CSV; `row` is where the parser gave up, as a spreadsheet numbers rows. */
export class CsvShapeError extends Error {
  constructor(readonly row: number | null, message: string) { super(message) }
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The file's text and how it was encoded. The BOM, if any, is dropped. */
export function decodeCsv(bytes: Uint8Array): { text: string; encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252' } {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { text: new TextDecoder('utf-16le').decode(bytes), encoding: 'utf-16le' }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { text: new TextDecoder('utf-16be').decode(bytes), encoding: 'utf-16be' }
  try {
    return { text: utf8.decode(bytes), encoding: 'utf-8' }
  } catch {
    // Not UTF-8: Excel's "CSV (Comma delimited)" on Windows writes the ANSI code page.
    return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' }
  }
}

/** The delimiter the header line uses most, outside quotes: comma, semicolon or tab (comma when none). */
export function detectDelimiter(text: string): ',' | ';' | '\t' {
  const counts = { ',': 0, ';': 0, '\t': 0 }
  let quoted = false
  for (const ch of text) {
    if (ch === '"') quoted = !quoted
    else if (!quoted && (ch === '\n' || ch === '\r')) break
    else if (!quoted && ch in counts) counts[ch as keyof typeof counts]++
  }
  const best = (Object.entries(counts) as [',' | ';' | '\t', number][]).sort((a, b) => b[1] - a[1])[0]!
  return best[1] > 0 ? best[0] : ','
}

/** Reads every record with its spreadsheet row; a blank line is a row too, as spreadsheets show it. */
export function readRecords(text: string, delimiter: string): CsvRecord[] {
  try {
    const out = parse(text, { delimiter, info: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: false, bom: true }) as unknown as { record: string[]; info: { records: number } }[]
    return out.map((r) => ({ row: r.info.records, cells: r.record }))
  } catch (err) {
    const e = err as { code?: string; records?: number }
    const row = typeof e.records === 'number' ? e.records + 1 : null
    const why = e.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a double quote opens a cell that is never closed'
      : e.code === 'CSV_INVALID_CLOSING_QUOTE' ? 'a quoted cell has text after its closing double quote (write a double quote inside a quoted cell as "")'
      : 'it is not CSV this import can read'
    throw new CsvShapeError(row, `The file could not be read${row ? ` from row ${row}` : ''}: ${why}.`)
  }
}

/** A cell a spreadsheet would run as a formula: it starts with =, +, -, @, a tab or a carriage return. */
const FORMULA_START = /^'*[=+\-@\t\r]/
/** A plain negative number (a longitude): no spreadsheet runs it, so it stays a number. */
const NEGATIVE_NUMBER = /^-\d+(\.\d+)?$/

/**
 * Makes a cell safe to open in a spreadsheet: one that would start a formula gets a leading `'`
 * (so do cells that already start with quotes before such a character, so that `readCell`
 * gives back exactly what was written).
 */
export function guardCell(value: string): string {
  return FORMULA_START.test(value) && !NEGATIVE_NUMBER.test(value) ? `'${value}` : value
}

/** Undoes guardCell: drops one leading `'` before a formula character, and nothing else. */
export function readCell(value: string): string {
  return value.startsWith("'") && FORMULA_START.test(value) ? value.slice(1) : value
}

/** One CSV line (CRLF-terminated, RFC 4180): cells quoted when they hold a comma, quote or line break, each guarded against formulas. */
export function csvLine(cells: readonly (string | number | boolean | null)[]): string {
  return cells.map((c) => {
    if (c === null) return ''
    const s = typeof c === 'string' ? guardCell(c) : String(c)
    return /[",\r\n;]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
  }).join(',') + '\r\n'
}

/** The byte order mark written first, so Excel reads the file as UTF-8. */
export const UTF8_BOM = '\ufeff'

/** Builders of real-world CSV files for the import tests: BOM, CRLF, quoting, other delimiters and encodings. */

/** How a file is written. */
export interface CsvStyle { bom?: boolean; eol?: '\r\n' | '\n'; delimiter?: ',' | ';' | '\t'; quoteAll?: boolean }

/** One cell as a spreadsheet writes it: quoted when it must be (or always, as Excel does with quoteAll). */
function cell(v: string, s: CsvStyle): string {
  const must = v.includes('"') || v.includes('\n') || v.includes('\r') || v.includes(s.delimiter ?? ',')
  return must || s.quoteAll ? `"${v.replaceAll('"', '""')}"` : v
}

/** The file's text: the header, then each row's cells by the header's names (missing ones empty). */
export function csvText(header: string[], rows: Record<string, string>[], s: CsvStyle = {}): string {
  const eol = s.eol ?? '\r\n'
  const d = s.delimiter ?? ','
  const lines = [header.map((h) => cell(h, s)).join(d), ...rows.map((r) => header.map((h) => cell(r[h] ?? '', s)).join(d))]
  return (s.bom ? '\ufeff' : '') + lines.join(eol) + eol
}

/** The file's bytes in UTF-8. */
export const utf8 = (text: string) => new TextEncoder().encode(text)

/** The file's bytes as Excel's "Unicode text" writes them: UTF-16LE with its BOM. */
export function utf16le(text: string): Uint8Array {
  const body = text.startsWith('\ufeff') ? text : `\ufeff${text}`
  const out = new Uint8Array(body.length * 2)
  for (let i = 0; i < body.length; i++) { const c = body.charCodeAt(i); out[i * 2] = c & 0xff; out[i * 2 + 1] = c >> 8 }
  return out
}

/** The file's bytes in Windows-1252 (Excel's plain "CSV" on Windows); only Latin-1 letters are used by the tests. */
export function windows1252(text: string): Uint8Array {
  return Uint8Array.from([...text].map((ch) => { const c = ch.charCodeAt(0); if (c > 0xff) throw new Error(`not Latin-1: ${ch}`); return c }))
}

/** The columns of a small history file. */
export const BASIC_HEADER = ['external_ref', 'status', 'created_at', 'customer.name', 'customer.phone', 'customer.sms_consent', 'pickup.location', 'confirmed_at', 'completed_at', 'cancelled_at', 'cancel_reason', 'final_price_cents', 'payment_method']

/** A completed job row; `n` makes it unique. */
export function completedRow(n: number, extra: Record<string, string> = {}): Record<string, string> {
  const day = String(1 + (n % 28)).padStart(2, '0')
  return {
    external_ref: `HIST-${n}`, status: 'completed', created_at: `2026-03-${day}T14:05:00-08:00`,
    'customer.name': `Customer ${n}`, 'customer.phone': '+15035550142', 'customer.sms_consent': 'true',
    'pickup.location': `${100 + n} SE Main St`, confirmed_at: `2026-03-${day}T14:05:00-08:00`, completed_at: `2026-03-${day}T15:40:00-08:00`,
    final_price_cents: '19750', payment_method: 'card', ...extra,
  }
}

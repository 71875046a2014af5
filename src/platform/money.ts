/** Money as people type and read it: dollars and cents on pages, CSV files and the CLI; integer cents everywhere else. */

/**
 * Dollars and cents as typed ("185", "185.00", "$1,185.5") → cents; null when blank; undefined when
 * not money. A comma only groups thousands (`1,185`): `185,00` or `1,85` (a decimal comma, as much of
 * Europe writes) is not money here rather than read as 18500 or 185 dollars.
 */
export function parseDollars(raw: string): number | null | undefined {
  const s = raw.trim()
  if (s === '') return null
  const m = /^\$?\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$/.exec(s)
  if (!m) return undefined
  const whole = m[1]!.replace(/,/g, '')
  if (whole.length > 7) return undefined
  return Number(whole) * 100 + Number((m[2] ?? '').padEnd(2, '0'))
}

/** Cents as a payment page or a form reads them: `185.00` (a minus sign for negatives). */
export function amountText(cents: number): string {
  const sign = cents < 0 ? '-' : ''
  const a = Math.abs(cents)
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`
}

/** Cents as a person reads them: `$1,185.00`. */
export function dollarsText(cents: number): string {
  const [whole, frac] = amountText(Math.abs(cents)).split('.')
  return `${cents < 0 ? '-' : ''}$${Number(whole).toLocaleString('en-US')}.${frac}`
}

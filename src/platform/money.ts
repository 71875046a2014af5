/** Money as people type and read it: dollars and cents on pages, CSV files and the CLI; integer cents everywhere else. */

/** Dollars and cents as typed ("185", "185.00", "$1,185.5") → cents; null when blank; undefined when not money. */
export function parseDollars(raw: string): number | null | undefined {
  const s = raw.replace(/[$,\s]/g, '')
  if (s === '') return null
  if (!/^\d{1,7}(\.\d{1,2})?$/.test(s)) return undefined
  const [whole, frac = ''] = s.split('.')
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'))
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

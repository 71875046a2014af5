/**
 * Phone numbers to E.164. Numbers with a leading + (or 00) are taken as international; others
 * are read in the account's default country. Only the North American Numbering Plan is known
 * as a default country today (`US`/`CA`: +1); other countries need the + form.
 */
const COUNTRY_CODES: Record<string, string> = { US: '1', CA: '1' }

/** Returns the E.164 form of a phone number, or null if it cannot be one. */
export function normalizePhone(input: string, defaultCountry = 'US'): string | null {
  const trimmed = input.trim()
  if (!/^[+\d\s().\-\/]+$/.test(trimmed)) return null
  let digits = trimmed.replace(/[^\d+]/g, '')
  if (digits.startsWith('00')) digits = '+' + digits.slice(2)
  if (digits.startsWith('+')) {
    const rest = digits.slice(1)
    if (!/^[1-9]\d{6,14}$/.test(rest)) return null
    if (rest.startsWith('1') && !/^1[2-9]\d{2}[2-9]\d{6}$/.test(rest)) return null
    return '+' + rest
  }
  if (digits.includes('+')) return null
  const cc = COUNTRY_CODES[defaultCountry.toUpperCase()]
  if (cc === '1') {
    const national = digits.length === 11 && digits.startsWith('1') ? digits.slice(1) : digits
    return /^[2-9]\d{2}[2-9]\d{6}$/.test(national) ? '+1' + national : null
  }
  return null
}

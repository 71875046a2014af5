/**
 * Phone numbers to E.164, with libphonenumber-js (Google's numbering plans for every country).
 * Numbers with a leading + (or 00) are taken as international; others are read in the
 * account's default country (its trunk prefix, such as the leading 0 of UK numbers, dropped).
 * A number is kept when it is a possible length for its country and fits that country's
 * numbering plan; it need not be assigned yet (555-01xx and the UK's drama ranges pass), so a
 * test number works and a typo with the wrong shape does not.
 */
import { getCountries, isSupportedCountry, Metadata, parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js'

/** The countries a default country may be (ISO 3166 alpha-2). */
export const PHONE_COUNTRIES: readonly string[] = getCountries()

const metadata = new Metadata()
const plans = new Map<string, RegExp>()

/** Tells whether the national number fits the general pattern of its calling code's plan. */
function fitsNumberingPlan(p: PhoneNumber): boolean {
  const key = p.country ?? p.countryCallingCode
  let pattern = plans.get(key)
  if (!pattern) {
    metadata.selectNumberingPlan(key as CountryCode)
    // The plan's general pattern: public in libphonenumber-js's Metadata, missing from its typings.
    const plan = metadata.numberingPlan as unknown as { nationalNumberPattern(): string }
    pattern = new RegExp(`^(?:${plan.nationalNumberPattern()})$`)
    plans.set(key, pattern)
  }
  return pattern.test(p.nationalNumber)
}

/** Returns the E.164 form of a phone number, or null if it cannot be one (letters and extensions included). */
export function normalizePhone(input: string, defaultCountry = 'US'): string | null {
  const trimmed = input.trim()
  if (!/^[+\d\s().\-\/]+$/.test(trimmed)) return null
  let digits = trimmed.replace(/[^\d+]/g, '')
  // 00 is the international prefix in most of the world: read it as + wherever the account is.
  if (digits.startsWith('00')) digits = '+' + digits.slice(2)
  if (digits.lastIndexOf('+') > 0 || digits.replace('+', '').length === 0) return null
  const country = defaultCountry.toUpperCase()
  if (!digits.startsWith('+') && !isSupportedCountry(country)) return null
  const parsed = parsePhoneNumberFromString(digits, isSupportedCountry(country) ? country : undefined)
  if (!parsed || !parsed.isPossible() || !fitsNumberingPlan(parsed)) return null
  return parsed.number
}

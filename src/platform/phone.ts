/**
 * Phone numbers to E.164. Numbers with a leading + (or 00) are taken as international; others
 * are read in the account's default country: its calling code, its trunk prefix (the leading
 * 0 of national numbers) dropped, and its national number length checked.
 */
interface Plan { cc: string; trunk: boolean; min: number; max: number }
const PLANS: Record<string, Plan> = {
  US: { cc: '1', trunk: false, min: 10, max: 10 }, CA: { cc: '1', trunk: false, min: 10, max: 10 }, PR: { cc: '1', trunk: false, min: 10, max: 10 },
  GB: { cc: '44', trunk: true, min: 9, max: 10 }, IE: { cc: '353', trunk: true, min: 7, max: 9 }, AU: { cc: '61', trunk: true, min: 9, max: 9 },
  NZ: { cc: '64', trunk: true, min: 8, max: 10 }, DE: { cc: '49', trunk: true, min: 6, max: 13 }, AT: { cc: '43', trunk: true, min: 6, max: 13 },
  CH: { cc: '41', trunk: true, min: 9, max: 9 }, FR: { cc: '33', trunk: true, min: 9, max: 9 }, BE: { cc: '32', trunk: true, min: 8, max: 9 },
  NL: { cc: '31', trunk: true, min: 9, max: 9 }, ES: { cc: '34', trunk: false, min: 9, max: 9 }, PT: { cc: '351', trunk: false, min: 9, max: 9 },
  IT: { cc: '39', trunk: false, min: 6, max: 11 }, SE: { cc: '46', trunk: true, min: 7, max: 9 }, NO: { cc: '47', trunk: false, min: 8, max: 8 },
  DK: { cc: '45', trunk: false, min: 8, max: 8 }, MX: { cc: '52', trunk: false, min: 10, max: 10 }, ZA: { cc: '27', trunk: true, min: 9, max: 9 },
  IN: { cc: '91', trunk: true, min: 10, max: 10 },
}

/** The countries a default country may be. */
export const PHONE_COUNTRIES = Object.keys(PLANS)

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
  const plan = PLANS[defaultCountry.toUpperCase()]
  if (!plan) return null
  if (plan.cc === '1') {
    const national = digits.length === 11 && digits.startsWith('1') ? digits.slice(1) : digits
    return /^[2-9]\d{2}[2-9]\d{6}$/.test(national) ? '+1' + national : null
  }
  const national = plan.trunk && digits.startsWith('0') ? digits.slice(1) : digits
  if (national.length < plan.min || national.length > plan.max || (plan.trunk && national.startsWith('0'))) return null
  return '+' + plan.cc + national
}

import { InputError } from '../platform/errors'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { normalizePhone, PHONE_COUNTRIES } from '../platform/phone'
import { findAccountById, type AccountRow } from './account.queries'
import { keysChanged } from './authenticate'

/** A change to an account that cannot be made as asked (bad phone, unknown country...). */
export class AccountInputError extends InputError {}

/**
 * Changes an account's company details: its name and phone (both shown to customers), the
 * country numbers without +country are read in, and the number its texts are sent from
 * (null: the installation's TWILIO_FROM). Returns the account as it now is.
 */
export function updateAccount(db: Db, _clock: Clock, id: string, input: { name?: string; phone?: string | null; country?: string; smsFrom?: string | null }): AccountRow {
  const account = findAccountById(db, id)
  if (!account) throw new AccountInputError(`no account ${id}`, 'account')
  const next: AccountRow = { ...account }
  if (input.name !== undefined) {
    if (!input.name.trim()) throw new AccountInputError('the name must not be blank', 'name')
    next.name = input.name.trim()
  }
  if (input.country !== undefined) {
    const country = input.country.toUpperCase()
    if (!PHONE_COUNTRIES.includes(country)) throw new AccountInputError(`the country must be a two-letter ISO 3166 country code such as US, CA, GB, AU or FR (${PHONE_COUNTRIES.length} are known)`, 'country')
    next.defaultCountry = country
  }
  const phone = (raw: string | null | undefined, what: string) => {
    if (raw === undefined) return undefined
    if (raw === null || raw.trim() === '') return null
    const e164 = normalizePhone(raw, next.defaultCountry)
    if (!e164) throw new AccountInputError(`"${raw}" is not a phone number (${what}); use the +country form`, what === 'company phone' ? 'phone' : 'sms_from')
    return e164
  }
  const p = phone(input.phone, 'company phone')
  if (p !== undefined) next.phone = p
  const from = phone(input.smsFrom, 'sending number')
  if (from !== undefined) next.smsFrom = from
  db.$client.query('UPDATE accounts SET name = ?, default_country = ?, phone = ?, sms_from = ? WHERE id = ?').run(next.name, next.defaultCountry, next.phone, next.smsFrom, id)
  // Resolved keys carry the account's name and phone: this process's must be resolved again.
  keysChanged()
  return next
}

import { AppError } from '../platform/errors'
import { inTransaction } from '../db/client'
import { formVersion } from '../platform/form-version'
import { normalizePhone, PHONE_COUNTRIES } from '../platform/phone'
import type { OperationContext } from '../operations/operation-context'
import { findAccountById, type AccountRow } from './account.queries'
import { requirePermission } from './actor'
import { keysChanged } from './authenticate'
import { nameProblem } from '../platform/chars'
import { MAX_COMPANY_NAME } from './names'
import { TIME_ZONE_HINT, timeZoneNamed } from '../platform/time-zone'

/** A change to an account that cannot be made as asked (blank name, bad phone, unknown country...): 422, each problem by field. */
export class AccountInputError extends AppError {
  constructor(fields: { path: string; message: string }[]) {
    super('validation_failed', fields.map((f) => `${f.path}: ${f.message}`).join('; '), { fields })
  }
}

export { MAX_COMPANY_NAME } from './names'
const MAX_PAYMENT_URL = 2000

/** What is wrong with a payment link (where the tracking page's Pay link sends a customer), or null. */
export function paymentUrlProblem(raw: string): string | null {
  if (raw.length > MAX_PAYMENT_URL) return `must be at most ${MAX_PAYMENT_URL} characters`
  let url: URL
  try { url = new URL(raw) } catch { return 'must be a whole https address, such as https://pay.example.com/towing' }
  if (url.protocol !== 'https:') return 'must start with https:// (customers pay on it)'
  if (!url.hostname) return 'must name a host, such as https://pay.example.com/towing'
  if (url.username || url.password) return 'must not hold a user name or password'
  return null
}

/** What the company settings page was drawn with, in 22 characters: a save over a later save is refused (updateAccount's `expectedVersion`). */
export function accountSettingsVersion(a: AccountRow): string {
  // The fields the page shows (a sending number or country changed from the console is kept by the save, not overwritten).
  const fields = [a.name, a.phone, a.paymentUrl, a.timeZone]
  return formVersion(fields)
}

/** The account's company settings as the owner edits them. */
export function readAccountSettings(ctx: OperationContext): AccountRow {
  requirePermission(ctx.actor, 'settings:manage')
  const account = findAccountById(ctx.db, ctx.account.id)
  if (!account) throw new AppError('not_found', `No account with id ${ctx.account.id} was found.`, { id: ctx.account.id })
  return account
}

/**
 * Changes the context's account: its company name and phone (both shown to customers), the
 * country numbers without +country are read in, the number its texts are sent from (null: the
 * installation's TWILIO_FROM), its payment link (https, or null) and its time zone (IANA). Every problem is reported
 * at once and nothing is written then. With `expectedVersion` (the accountSettingsVersion the page
 * was drawn with) a save that would change what someone else saved since is refused, 409 conflict
 * with `details.changed_since_opened`; a save that changes nothing is never refused. Returns the
 * account as it now is.
 */
export function updateAccount(ctx: OperationContext, input: { name?: string; phone?: string | null; country?: string; smsFrom?: string | null; paymentUrl?: string | null; timeZone?: string }, expectedVersion?: string): AccountRow {
  const before = readAccountSettings(ctx)
  const next: AccountRow = { ...before }
  const problems: { path: string; message: string }[] = []
  if (input.name !== undefined) {
    const name = input.name.trim()
    const problem = nameProblem(name, MAX_COMPANY_NAME)
    if (problem) problems.push({ path: 'name', message: problem })
    else next.name = name
  }
  if (input.country !== undefined) {
    const country = input.country.toUpperCase()
    if (!PHONE_COUNTRIES.includes(country)) problems.push({ path: 'country', message: `must be a two-letter ISO 3166 country code such as US, CA, GB, AU or FR (${PHONE_COUNTRIES.length} are known)` })
    else next.defaultCountry = country
  }
  const phone = (raw: string | null | undefined, path: string, what: string) => {
    if (raw === undefined) return undefined
    if (raw === null || raw.trim() === '') return null
    const e164 = normalizePhone(raw, next.defaultCountry)
    if (!e164) problems.push({ path, message: `"${raw}" is not a phone number (${what}); use the +country form, e.g. +15035550100` })
    return e164 ?? undefined
  }
  const p = phone(input.phone, 'phone', 'company phone')
  if (p !== undefined) next.phone = p
  const from = phone(input.smsFrom, 'sms_from', 'sending number')
  if (from !== undefined) next.smsFrom = from
  if (input.paymentUrl !== undefined) {
    const raw = input.paymentUrl?.trim() ?? ''
    const problem = raw ? paymentUrlProblem(raw) : null
    if (problem) problems.push({ path: 'payment_url', message: problem })
    else next.paymentUrl = raw || null
  }
  if (input.timeZone !== undefined) {
    const zone = timeZoneNamed(input.timeZone)
    if (!zone) problems.push({ path: 'time_zone', message: TIME_ZONE_HINT })
    else next.timeZone = zone
  }
  if (problems.length) throw new AccountInputError(problems)
  const changed = inTransaction(ctx.db, () => {
    const saved = findAccountById(ctx.db, next.id) ?? before
    const savedVersion = accountSettingsVersion(saved)
    // The same form sent twice, or a save of what is there: nothing to write, never stale.
    const every = (a: AccountRow) => JSON.stringify([a.name, a.defaultCountry, a.phone, a.smsFrom, a.paymentUrl, a.timeZone])
    if (every(next) === every(saved)) return false
    if (expectedVersion !== undefined && savedVersion !== expectedVersion) {
      throw new AppError('conflict', 'Someone else saved the company settings after this page was opened; nothing was saved.', { changed_since_opened: true })
    }
    ctx.db.$client.query('UPDATE accounts SET name = ?, default_country = ?, phone = ?, sms_from = ?, payment_url = ?, time_zone = ? WHERE id = ?')
      .run(next.name, next.defaultCountry, next.phone, next.smsFrom, next.paymentUrl, next.timeZone, next.id)
    return true
  })
  // API keys' cached principals carry the company name and phone their texts use: drop them.
  if (changed) keysChanged()
  return next
}

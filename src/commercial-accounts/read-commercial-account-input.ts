import type { OperationContext } from '../operations/operation-context'
import { validationFailed } from '../platform/errors'
import { normalizePhone } from '../platform/phone'
import { COMMERCIAL_ACCOUNT_KINDS, KIND_LABELS, MAX_CONTACTS, MAX_NAME, MAX_PRIVATE_TEXT, type CommercialAccountInput, type CommercialAccountKind } from './commercial-account.model'
import type { CommercialAccountContact } from './commercial-account.table'
import { charCount } from '../platform/chars'

/** A commercial account's values, checked and normalised: what create and update write. */
export interface CheckedCommercialAccount {
  name: string
  kind: CommercialAccountKind
  contacts: CommercialAccountContact[]
  rates: string | null
  billingAddress: string | null
  internalNotes: string | null
}

const EMAIL = /^[^\s@<>"]+@[^\s@<>".]+(\.[^\s@<>".]+)+$/
const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '')

/**
 * Checks every field of a commercial account (all problems at once, at most 10, each at its
 * path: `name`, `kind`, `contacts.0.phone` ...) before anything is written. Phones become E.164
 * in the account's default country, as customers' phones do.
 */
export function readCommercialAccountInput(ctx: OperationContext, input: CommercialAccountInput): CheckedCommercialAccount {
  const problems: { path: string; message: string }[] = []
  const name = text(input.name)
  if (!name) problems.push({ path: 'name', message: 'must not be blank' })
  else if (charCount(name) > MAX_NAME) problems.push({ path: 'name', message: `must be at most ${MAX_NAME} characters` })
  const kind = text(input.kind)
  if (!(COMMERCIAL_ACCOUNT_KINDS as readonly string[]).includes(kind)) problems.push({ path: 'kind', message: `must be one of the kinds listed: ${COMMERCIAL_ACCOUNT_KINDS.map((k) => KIND_LABELS[k]).join(', ')}` })
  const given = Array.isArray(input.contacts) ? input.contacts : []
  if (given.length > MAX_CONTACTS) problems.push({ path: 'contacts', message: `may hold at most ${MAX_CONTACTS} contacts` })
  const contacts: CommercialAccountContact[] = given.slice(0, MAX_CONTACTS).map((c, i) => {
    const at = `contacts.${i}`
    const contact = { name: text(c?.name), role: text(c?.role) || null, phone: null as string | null, email: text(c?.email) || null }
    if (!contact.name) problems.push({ path: `${at}.name`, message: 'must not be blank (every contact has a name)' })
    else if (charCount(contact.name) > MAX_NAME) problems.push({ path: `${at}.name`, message: `must be at most ${MAX_NAME} characters` })
    if (contact.role && charCount(contact.role) > 100) problems.push({ path: `${at}.role`, message: 'must be at most 100 characters' })
    const phone = text(c?.phone)
    if (phone) {
      contact.phone = phone.length > 40 ? null : normalizePhone(phone, ctx.account.defaultCountry)
      if (!contact.phone) problems.push({ path: `${at}.phone`, message: 'is not a phone number (use the +country form, e.g. +15552013344)' })
    }
    if (contact.email && (contact.email.length > 254 || !EMAIL.test(contact.email))) problems.push({ path: `${at}.email`, message: 'must be an email address such as dispatch@example.com' })
    return contact
  })
  const privateText = (path: string, v: string | null | undefined) => {
    const s = text(v)
    if (charCount(s) > MAX_PRIVATE_TEXT) problems.push({ path, message: `must be at most ${MAX_PRIVATE_TEXT} characters` })
    return s || null
  }
  const rates = privateText('rates', input.rates)
  const billingAddress = privateText('billing_address', input.billing_address)
  const internalNotes = privateText('internal_notes', input.internal_notes)
  if (problems.length) throw validationFailed(problems.slice(0, 10))
  return { name, kind: kind as CommercialAccountKind, contacts, rates, billingAddress, internalNotes }
}

import { nameProblem } from '../platform/chars'
import { MAX_COMPANY_NAME, MAX_SITE_NAME } from './names'
import { InputError } from '../platform/errors'
import type { Db } from '../db/client'
import { inTransaction } from '../db/client'
import type { Clock } from '../platform/clock'
import { newId } from '../platform/ids'
import { machineTimeZone, TIME_ZONE_HINT, timeZoneNamed } from '../platform/time-zone'
import { accounts, sites } from './account.table'
import { findDefaultAccount, type AccountRow, type SiteRow } from './account.queries'

/** Creates an account with its first site ("Main yard" unless named), in the time zone given or this machine's. */
export function createAccount(db: Db, clock: Clock, input: { name: string; siteName?: string; isDefault?: boolean; defaultCountry?: string; phone?: string | null; timeZone?: string }): { account: AccountRow; site: SiteRow } {
  const name = input.name.trim()
  const problem = nameProblem(name, MAX_COMPANY_NAME)
  if (problem) throw new InputError(`the account's name ${problem}`, 'name')
  const siteProblem = input.siteName === undefined ? null : nameProblem(input.siteName.trim(), MAX_SITE_NAME)
  if (siteProblem && input.siteName?.trim()) throw new InputError(`the site's name ${siteProblem}`, 'site_name')
  const timeZone = input.timeZone === undefined ? machineTimeZone() : timeZoneNamed(input.timeZone)
  if (!timeZone) throw new InputError(`the time zone ${TIME_ZONE_HINT}`, 'time_zone')
  const now = clock.now()
  const account: AccountRow = { id: newId('acct', now), name, isDefault: input.isDefault ?? false, defaultCountry: (input.defaultCountry ?? 'US').toUpperCase(), phone: input.phone ?? null, smsFrom: null, paymentUrl: null, timeZone, createdAt: now }
  const site: SiteRow = { id: newId('site', now), accountId: account.id, name: input.siteName?.trim() || 'Main yard', createdAt: now }
  inTransaction(db, (tx) => {
    tx.insert(accounts).values(account).run()
    tx.insert(sites).values(site).run()
  })
  return { account, site }
}

/** Returns the default account, creating it (and its site) on an empty database. */
export function ensureDefaultAccount(db: Db, clock: Clock): { account: AccountRow; created: boolean } {
  // Looked up and made in one write transaction: instances starting at once on one database make one.
  return inTransaction(db, () => {
    const existing = findDefaultAccount(db)
    if (existing) return { account: existing, created: false }
    const { account } = createAccount(db, clock, { name: 'My towing company', isDefault: true })
    return { account, created: true }
  })
}

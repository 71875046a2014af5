import { InputError } from '../platform/errors'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { newId } from '../platform/ids'
import { sites } from './account.table'
import { findAccountById, listSites, type SiteRow } from './account.queries'
import { keysChanged } from './authenticate'

/** A site that cannot be added as asked. */
export class SiteInputError extends InputError {}

/** Adds a site (a yard) to an account; names are unique within the account, ignoring case. */
export function addSite(db: Db, clock: Clock, input: { accountId: string; name: string }): SiteRow {
  const name = input.name.trim()
  if (!name) throw new SiteInputError('a site needs a name', 'name')
  if (!findAccountById(db, input.accountId)) throw new SiteInputError(`no account ${input.accountId}`, 'account')
  if (listSites(db, input.accountId).some((s) => s.name.toLowerCase() === name.toLowerCase())) throw new SiteInputError(`the account already has a site named "${name}"`, 'name')
  const now = clock.now()
  const row: SiteRow = { id: newId('site', now), accountId: input.accountId, name, createdAt: now }
  db.insert(sites).values(row).run()
  // Resolved keys carry the sites they see: this process's must be resolved again.
  keysChanged()
  return row
}

/** Finds the account's sites named by id or name (case-insensitive); throws naming the ones that exist. */
export function resolveSites(db: Db, accountId: string, wanted: string[]): SiteRow[] {
  const all = listSites(db, accountId)
  return wanted.map((s) => {
    const site = all.find((x) => x.id === s || x.name.toLowerCase() === s.toLowerCase())
    if (!site) throw new SiteInputError(`no site "${s}" in account ${accountId}; its sites are ${all.map((x) => `${x.id} (${x.name})`).join(', ')}`, 'sites')
    return site
  })
}

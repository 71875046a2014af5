import { nameKey, nameProblem } from '../platform/chars'
import { MAX_SITE_NAME } from './names'
import { InputError } from '../platform/errors'
import { inTransaction, type Db } from '../db/client'
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
  const problem = nameProblem(name, MAX_SITE_NAME)
  if (problem) throw new SiteInputError(`a site's name ${problem}`, 'name')
  const row = inTransaction(db, (tx) => {
    // Checked in the write's transaction: two `sites add` of one name at once make one site.
    if (!findAccountById(tx, input.accountId)) throw new SiteInputError(`no account ${input.accountId}`, 'account')
    if (listSites(tx, input.accountId).some((s) => nameKey(s.name) === nameKey(name))) throw new SiteInputError(`the account already has a site named "${name}"`, 'name')
    const now = clock.now()
    const made: SiteRow = { id: newId('site', now), accountId: input.accountId, name, createdAt: now }
    tx.insert(sites).values(made).run()
    return made
  })
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

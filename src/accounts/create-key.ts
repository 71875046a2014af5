import { InputError } from '../platform/errors'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { newId } from '../platform/ids'
import { apiKeys } from './account.table'
import { findAccountById, listSites, type AccountRow, type SiteRow } from './account.queries'
import { resolveSites, SiteInputError } from './add-site'
import { displayPrefix, hashApiKey, mintApiKey } from './api-key'
import { isScope, SCOPES, type Scope } from './scopes'

/** A key-creation request that cannot be honoured (unknown scope, site or account). */
export class KeyInputError extends InputError {}

export interface CreatedKey {
  object: 'key'
  id: string
  name: string
  key: string
  prefix: string
  account: { id: string; name: string }
  sites: { id: string; name: string }[]
  site_restricted: boolean
  scopes: Scope[]
  created_at: string
}

/** Creates an API key; the secret is returned here once and only its hash is stored. */
export function createKey(
  db: Db,
  clock: Clock,
  input: { accountId: string; name: string; scopes: string[]; sites?: string[] },
): CreatedKey {
  const account: AccountRow | undefined = findAccountById(db, input.accountId)
  if (!account) throw new KeyInputError(`no account with id ${input.accountId}`, 'account')
  const name = input.name.trim()
  if (!name) throw new KeyInputError('a key needs a name (--name)', 'name')
  const wanted = input.scopes.map((s) => s.trim()).filter(Boolean)
  const scopes: Scope[] = wanted.includes('*') || wanted.includes('all') ? [...SCOPES] : []
  if (!scopes.length) {
    for (const s of wanted) {
      if (!isScope(s)) throw new KeyInputError(`unknown scope "${s}"; scopes are ${SCOPES.join(', ')}`, 'scopes')
      if (!scopes.includes(s)) scopes.push(s)
    }
  }
  if (!scopes.length) throw new KeyInputError(`a key needs at least one scope (--scopes), from ${SCOPES.join(', ')}`, 'scopes')
  let siteRows: SiteRow[] | null = null
  if (input.sites?.length) {
    try { siteRows = resolveSites(db, account.id, input.sites) } catch (err) { throw err instanceof SiteInputError ? new KeyInputError(err.message, 'sites') : err }
  }
  const secret = mintApiKey()
  const now = clock.now()
  const id = newId('key', now)
  db.insert(apiKeys).values({
    id,
    accountId: account.id,
    name,
    prefix: displayPrefix(secret),
    hash: hashApiKey(secret),
    scopes: JSON.stringify(scopes),
    siteIds: siteRows ? JSON.stringify(siteRows.map((s) => s.id)) : null,
    createdAt: now,
  }).run()
  const shownSites = siteRows ?? listSites(db, account.id)
  return {
    object: 'key',
    id,
    name,
    key: secret,
    prefix: displayPrefix(secret),
    account: { id: account.id, name: account.name },
    sites: shownSites.map((s) => ({ id: s.id, name: s.name })),
    site_restricted: siteRows !== null,
    scopes,
    created_at: new Date(now).toISOString(),
  }
}

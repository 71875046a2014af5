import { nameProblem } from '../platform/chars'
import { AppError } from '../platform/errors'
import { newId } from '../platform/ids'
import type { OperationContext } from '../operations/operation-context'
import { requirePermission } from './actor'
import { apiKeys } from './account.table'
import { listSites, type SiteRow } from './account.queries'
import { resolveSites, SiteInputError } from './add-site'
import { displayPrefix, hashApiKey, mintApiKey } from './api-key'
import { isScope, SCOPES, type Scope } from './scopes'

/** The longest key name kept: enough to say what a key is for, short enough for a list. */
export const MAX_KEY_NAME = 100

/** A key-creation request that cannot be honoured (no name, unknown scope or site), each problem by its field. */
export class KeyInputError extends AppError {
  constructor(readonly fields: { path: 'name' | 'scopes' | 'sites'; message: string }[]) {
    super('validation_failed', fields.map((f) => f.message).join('; '), { fields })
  }
}

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

/**
 * Creates an API key on the context's account (permission `keys:manage`: an owner, the
 * console); the secret is returned here once and only its hash is stored. `sites` names sites
 * by id or name; none means every site, those added later included.
 */
export function createKey(ctx: OperationContext, input: { name: string; scopes: string[]; sites?: string[] }): CreatedKey {
  requirePermission(ctx.actor, 'keys:manage')
  const account = ctx.account
  const problems: KeyInputError['fields'] = []
  const name = input.name.trim()
  // As every name: characters, not UTF-16 units (an emoji is one); one line, no control or direction-override characters.
  const nameIssue = nameProblem(name, MAX_KEY_NAME)
  if (!name) problems.push({ path: 'name', message: 'a key needs a name' })
  else if (nameIssue) problems.push({ path: 'name', message: `a key's name ${nameIssue}` })
  const wanted = input.scopes.map((s) => s.trim()).filter(Boolean)
  const scopes: Scope[] = wanted.includes('*') || wanted.includes('all') ? [...SCOPES] : []
  if (!scopes.length) {
    const unknown = wanted.find((s) => !isScope(s))
    if (unknown !== undefined) problems.push({ path: 'scopes', message: `unknown scope "${unknown}"; scopes are ${SCOPES.join(', ')}` })
    else for (const s of wanted) if (isScope(s) && !scopes.includes(s)) scopes.push(s)
    if (!wanted.length) problems.push({ path: 'scopes', message: `a key needs at least one scope, from ${SCOPES.join(', ')}` })
  }
  let siteRows: SiteRow[] | null = null
  if (input.sites?.length) {
    try { siteRows = resolveSites(ctx.db, account.id, input.sites) } catch (err) {
      if (!(err instanceof SiteInputError)) throw err
      problems.push({ path: 'sites', message: err.message })
    }
  }
  if (problems.length) throw new KeyInputError(problems)
  const secret = mintApiKey()
  const now = ctx.clock.now()
  const id = newId('key', now)
  ctx.db.insert(apiKeys).values({
    id,
    accountId: account.id,
    name,
    prefix: displayPrefix(secret),
    hash: hashApiKey(secret),
    scopes: JSON.stringify(scopes),
    siteIds: siteRows ? JSON.stringify(siteRows.map((s) => s.id)) : null,
    createdAt: now,
  }).run()
  const shownSites = siteRows ?? listSites(ctx.db, account.id)
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

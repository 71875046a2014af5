import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, printJson, table, withDb } from '../cli/cli'
import { systemClock } from '../platform/clock'
import { createAccount, ensureDefaultAccount } from './create-account'
import { createKey, KeyInputError } from './create-key'
import { revokeKey } from './revoke-key'
import { listAccounts, listKeys, listSites } from './account.queries'
import { SCOPES } from './scopes'
import { PHONE_COUNTRIES } from '../platform/phone'
import { iso } from '../platform/clock'

const keysCreate: Command = {
  name: 'keys create',
  summary: 'Create an API key (printed once; only its hash is kept)',
  usage: `towline keys create --name NAME --scopes SCOPE[,SCOPE...] [--site SITE]... [--account ID] [--db FILE] [--json]

Creates a live API key and prints it once on stdout (details go to stderr, or
everything as JSON with --json). Only a SHA-256 hash and a short prefix are stored.

  --name NAME        what the key is for, e.g. "motor-club-intake"
  --scopes LIST      comma list of: ${SCOPES.join(', ')} (or "all")
  --site SITE        limit the key to a site (id or name); repeat for several
  --account ID       the account (default: the installation's default account)`,
  options: { ...DB_OPTIONS, name: { type: 'string' }, scopes: { type: 'string' }, site: { type: 'string', multiple: true }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    if (!values.name) throw new UsageError('--name is required')
    if (!values.scopes) throw new UsageError(`--scopes is required (from ${SCOPES.join(', ')})`)
    const accountId = values.account ?? ensureDefaultAccount(db, systemClock).account.id
    try {
      const key = createKey(db, systemClock, { accountId, name: values.name, scopes: String(values.scopes).split(','), sites: values.site })
      if (values.json) return printJson(key)
      process.stdout.write(key.key + '\n')
      process.stderr.write(
        `Created ${key.id} "${key.name}" for ${key.account.name} (${key.account.id}) with scopes ${key.scopes.join(', ')}` +
        `${key.site_restricted ? `, limited to ${key.sites.map((s) => s.name).join(', ')}` : ''}.\n` +
        'Store the key now: it is not shown again. Send it as "Authorization: Bearer <key>".\n',
      )
    } catch (err) {
      if (err instanceof KeyInputError) throw new UsageError(err.message)
      throw err
    }
  }),
}

const keysList: Command = {
  name: 'keys list',
  summary: 'List API keys (prefix, scopes, last use; never the key)',
  usage: 'towline keys list [--account ID] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    const rows = listKeys(db, values.account).map((k) => ({
      id: k.id, name: k.name, prefix: k.prefix, account_id: k.accountId, scopes: JSON.parse(k.scopes) as string[],
      site_ids: k.siteIds ? JSON.parse(k.siteIds) : null, created_at: iso(k.createdAt), last_used_at: iso(k.lastUsedAt),
      revoked_at: iso(k.revokedAt), status: k.revokedAt ? 'revoked' : 'active',
    }))
    if (values.json) return printJson({ object: 'list', data: rows })
    if (!rows.length) return void process.stdout.write('No keys yet. Create one with: towline keys create --name NAME --scopes jobs:read\n')
    process.stdout.write(table(rows.map((r) => ({ ...r, prefix: r.prefix + '…', scopes: r.scopes.join(','), sites: r.site_ids ? r.site_ids.join(',') : 'all', last_used_at: r.last_used_at ?? 'never' })),
      ['id', 'name', 'prefix', 'status', 'scopes', 'sites', 'created_at', 'last_used_at']))
  }),
}

const keysRevoke: Command = {
  name: 'keys revoke',
  summary: 'Revoke an API key; it fails from the next request on',
  usage: 'towline keys revoke KEY_ID [--db FILE] [--json]\n\nKEY_ID is the key id (key_...) or its prefix as shown by keys list.',
  options: DB_OPTIONS,
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, (db) => {
    const id = positionals[0]
    if (!id) throw new UsageError('which key? give its id (key_...)')
    const result = revokeKey(db, systemClock, id)
    if (!result) { process.stderr.write(`No key ${id}.\n`); return 1 }
    if (values.json) return void printJson({ id: result.key.id, revoked_at: iso(result.key.revokedAt), already_revoked: result.alreadyRevoked })
    process.stdout.write(result.alreadyRevoked ? `${result.key.id} was already revoked.\n` : `Revoked ${result.key.id} "${result.key.name}".\n`)
  }),
}

const accountsCreate: Command = {
  name: 'accounts create',
  summary: 'Create another account (prints its id)',
  usage: `towline accounts create --name NAME [--site-name NAME] [--country CC] [--db FILE] [--json]\n\nPrints the new account id; then \`towline keys create --account ID ...\` makes a key for it.\n--country: where phone numbers without +country are from (default US; one of ${PHONE_COUNTRIES.join(', ')}).`,
  options: { ...DB_OPTIONS, name: { type: 'string' }, 'site-name': { type: 'string' }, country: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    if (!values.name?.trim()) throw new UsageError('--name is required')
    ensureDefaultAccount(db, systemClock)
    const country = String(values.country ?? 'US').toUpperCase()
    if (!PHONE_COUNTRIES.includes(country)) throw new UsageError(`--country must be one of ${PHONE_COUNTRIES.join(', ')}`)
    const { account, site } = createAccount(db, systemClock, { name: values.name, siteName: values['site-name'], defaultCountry: country })
    if (values.json) return printJson({ object: 'account', id: account.id, name: account.name, sites: [{ id: site.id, name: site.name }], created_at: iso(account.createdAt) })
    process.stdout.write(account.id + '\n')
    process.stderr.write(`Created account "${account.name}" with site "${site.name}" (${site.id}).\n`)
  }),
}

const accountsList: Command = {
  name: 'accounts list',
  summary: 'List accounts and their sites',
  usage: 'towline accounts list [--db FILE] [--json]',
  options: DB_OPTIONS,
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    const rows = listAccounts(db).map((a) => ({ id: a.id, name: a.name, default: a.isDefault, sites: listSites(db, a.id).map((s) => ({ id: s.id, name: s.name })), created_at: iso(a.createdAt) }))
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(table(rows.map((r) => ({ ...r, sites: r.sites.map((s) => `${s.name} (${s.id})`).join(', ') })), ['id', 'name', 'default', 'sites', 'created_at']))
  }),
}

/** Operator commands for accounts and keys. */
export const accountCommands: Command[] = [keysCreate, keysList, keysRevoke, accountsCreate, accountsList]

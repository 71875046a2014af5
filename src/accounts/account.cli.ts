import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, asUsage, printJson, table, withDb, requireKnownAccount, accountFor } from '../cli/cli'
import { systemClock } from '../platform/clock'
import { createAccount, ensureDefaultAccount } from './create-account'
import { createKey, KeyInputError } from './create-key'
import { revokeKey } from './revoke-key'
import { findKey, listAccounts, listKeys, listSites } from './account.queries'
import { SCOPES } from './scopes'
import { normalizePhone, PHONE_COUNTRIES } from '../platform/phone'
import { TIME_ZONE_HINT, timeZoneNamed } from '../platform/time-zone'
import { iso } from '../platform/clock'
import { addSite, SiteInputError } from './add-site'
import { updateAccount } from './update-account'
import { createContextFactory } from '../operations/context-factory'
import type { AccountRow } from './account.queries'

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
  run: ({ values }) => withDb(values, (db, _config, links) => {
    if (!values.name) throw new UsageError('--name is required')
    if (!values.scopes) throw new UsageError(`--scopes is required (from ${SCOPES.join(', ')})`)
    const account = accountFor(db, values.account)
    try {
      const key = createKey(createContextFactory({ db, clock: systemClock, links }).forOperator(account.id), { name: values.name, scopes: String(values.scopes).split(','), sites: values.site })
      if (values.json) return printJson(key)
      process.stdout.write(key.key + '\n')
      process.stderr.write(
        `Created ${key.id} "${key.name}" for ${key.account.name} (${key.account.id}) with scopes ${key.scopes.join(', ')}` +
        `${key.site_restricted ? `, limited to ${key.sites.map((s) => s.name).join(', ')}` : ''}.\n` +
        'Store the key now: it is not shown again. Send it as "Authorization: Bearer <key>".\n',
      )
    } catch (err) {
      if (err instanceof KeyInputError) throw new UsageError(err.fields.map((f) => `--${f.path === 'sites' ? 'site' : f.path}: ${f.message}`).join('; '))
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
    requireKnownAccount(db, values.account)
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
  run: ({ values, positionals }) => withDb(values, (db, _config, links) => {
    const id = positionals[0]
    if (!id) throw new UsageError('which key? give its id (key_...)')
    // The console names a key of any account: its own account is the one acted for.
    const found = findKey(db, id)
    if (!found) { process.stderr.write(`No key ${id}.\n`); return 1 }
    const result = revokeKey(createContextFactory({ db, clock: systemClock, links }).forOperator(found.accountId), found.id)
    if (values.json) return void printJson({ id: result.key.id, revoked_at: iso(result.key.revokedAt), already_revoked: result.alreadyRevoked })
    process.stdout.write(result.alreadyRevoked ? `${result.key.id} was already revoked.\n` : `Revoked ${result.key.id} "${result.key.name}".\n`)
  }),
}

const accountsCreate: Command = {
  name: 'accounts create',
  summary: 'Create another account (prints its id)',
  usage: `towline accounts create --name NAME [--site-name NAME] [--country CC] [--phone PHONE] [--time-zone ZONE] [--db FILE] [--json]\n\nPrints the new account id; then \`towline keys create --account ID ...\` makes a key for it.\n--country: where phone numbers without +country are from (default US; a two-letter ISO 3166 code such as US, CA, GB, AU, FR).\n--phone: the company phone customers see.\n--time-zone: where the company works (an IANA name such as America/Chicago; default this machine's zone): its pages', invoices' and exports' days and times.`,
  options: { ...DB_OPTIONS, name: { type: 'string' }, 'site-name': { type: 'string' }, country: { type: 'string' }, phone: { type: 'string' }, 'time-zone': { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    if (!values.name?.trim()) throw new UsageError('--name is required')
    ensureDefaultAccount(db, systemClock)
    const country = String(values.country ?? 'US').toUpperCase()
    if (!PHONE_COUNTRIES.includes(country)) throw new UsageError(`--country must be a two-letter ISO 3166 country code such as US, CA, GB, AU or FR (${PHONE_COUNTRIES.length} are known)`)
    const phone = values.phone?.trim() ? normalizePhone(values.phone, country) : null
    if (values.phone?.trim() && !phone) throw new UsageError(`--phone: "${values.phone}" is not a phone number; use the +country form`)
    const timeZone = values['time-zone'] === undefined ? undefined : timeZoneNamed(values['time-zone'])
    if (timeZone === null) throw new UsageError(`--time-zone ${TIME_ZONE_HINT}`)
    const { account, site } = createAccount(db, systemClock, { name: values.name, siteName: values['site-name'], defaultCountry: country, phone, timeZone })
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
    const rows = listAccounts(db).map(accountView)
    if (values.json) return printJson({ object: 'list', data: rows.map((r) => ({ ...r, sites: listSites(db, r.id).map((x) => ({ id: x.id, name: x.name })) })) })
    process.stdout.write(table(rows.map((r) => ({ ...r, sites: listSites(db, r.id).map((x) => `${x.name} (${x.id})`).join(', '), phone: r.phone ?? '', sms_from: r.sms_from ?? '(TWILIO_FROM)' })),
      ['id', 'name', 'default', 'phone', 'country', 'time_zone', 'sms_from', 'sites', 'created_at']))
  }),
}

/** An account as the operator commands print it. */
function accountView(a: AccountRow) {
  return { object: 'account' as const, id: a.id, name: a.name, default: a.isDefault, phone: a.phone, country: a.defaultCountry, sms_from: a.smsFrom, payment_url: a.paymentUrl, time_zone: a.timeZone, created_at: iso(a.createdAt) }
}

const accountsUpdate: Command = {
  name: 'accounts update',
  summary: "Change an account's company name, phone, phone country, sending number, payment link or time zone",
  usage: `towline accounts update [ACCOUNT_ID] [--name NAME] [--phone PHONE] [--country CC] [--sms-from PHONE] [--payment-url URL] [--time-zone ZONE] [--account ID] [--db FILE] [--json]

The company name and phone are what customers see (texts, the HELP reply). --country is where
numbers without +country are from (a two-letter ISO 3166 code such as US or GB). --sms-from is the number this
account's texts go out from and replies come back to (Twilio); "" goes back to TWILIO_FROM.
--payment-url is the https address kept for the tracking page's Pay link; "" clears it.
--time-zone is where the company works (an IANA name such as America/Chicago): the days and
times of its pages, invoices and exports.
"--phone ''" clears the phone. Without ACCOUNT_ID (or --account): the default account.
The dashboard's Settings page changes the same (owners).`,
  options: { ...DB_OPTIONS, name: { type: 'string' }, phone: { type: 'string' }, country: { type: 'string' }, 'sms-from': { type: 'string' }, 'payment-url': { type: 'string' }, 'time-zone': { type: 'string' }, account: { type: 'string' } },
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, async (db, _config, links) => {
    const account = accountFor(db, positionals[0] ?? values.account)
    if ([values.name, values.phone, values.country, values['sms-from'], values['payment-url'], values['time-zone']].every((v) => v === undefined)) throw new UsageError('nothing to change: give --name, --phone, --country, --sms-from, --payment-url or --time-zone')
    const ctx = createContextFactory({ db, clock: systemClock, links }).forOperator(account.id)
    const a = await asUsage(() => updateAccount(ctx, { name: values.name, phone: values.phone, country: values.country, smsFrom: values['sms-from'], paymentUrl: values['payment-url'], timeZone: values['time-zone'] }))
    if (values.json) return printJson(accountView(a))
    process.stdout.write(`${a.id} "${a.name}" phone ${a.phone ?? '(none)'}, numbers read in ${a.defaultCountry}, texts from ${a.smsFrom ?? 'TWILIO_FROM'}, payment link ${a.paymentUrl ?? '(none)'}, times in ${a.timeZone}.\n`)
  }),
}

const accountsRename: Command = {
  name: 'accounts rename',
  summary: 'Rename an account (the company name customers see)',
  usage: 'towline accounts rename [ACCOUNT_ID] --name NAME [--account ID] [--db FILE] [--json]\n\nWithout ACCOUNT_ID (or --account): the default account.',
  options: { ...DB_OPTIONS, name: { type: 'string' }, account: { type: 'string' } },
  positionals: 1,
  run: (args) => {
    if (!args.values.name?.trim()) throw new UsageError('--name is required')
    return accountsUpdate.run(args)
  },
}

const sitesAdd: Command = {
  name: 'sites add',
  summary: 'Add a site (a yard) to an account',
  usage: `towline sites add --name NAME [--account ID] [--db FILE] [--json]

Prints the new site id. Keys (keys create --site) and units (units add --site) can then be
limited to it.`,
  options: { ...DB_OPTIONS, name: { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    if (!values.name?.trim()) throw new UsageError('--name is required')
    const account = accountFor(db, values.account)
    try {
      const site = addSite(db, systemClock, { accountId: account.id, name: values.name })
      if (values.json) return printJson({ object: 'site', id: site.id, name: site.name, account_id: account.id, created_at: iso(site.createdAt) })
      process.stdout.write(site.id + '\n')
      process.stderr.write(`Added site "${site.name}" to ${account.name} (${account.id}).\n`)
    } catch (err) {
      if (err instanceof SiteInputError) throw new UsageError(err.message)
      throw err
    }
  }),
}

const sitesList: Command = {
  name: 'sites list',
  summary: "List an account's sites",
  usage: 'towline sites list [--account ID] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    const account = accountFor(db, values.account)
    const rows = listSites(db, account.id).map((x) => ({ object: 'site' as const, id: x.id, name: x.name, account_id: account.id, created_at: iso(x.createdAt) }))
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(table(rows, ['id', 'name', 'created_at']))
  }),
}

/** Operator commands for accounts, sites and keys. */
export const accountCommands: Command[] = [keysCreate, keysList, keysRevoke, accountsCreate, accountsList, accountsUpdate, accountsRename, sitesAdd, sitesList]

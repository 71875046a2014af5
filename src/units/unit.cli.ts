import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, printJson, selfCommand, table, withDb, dbFlag, accountFor } from '../cli/cli'
import { ensureDefaultAccount } from '../accounts/create-account'
import { findAccountById } from '../accounts/account.queries'
import { iso, systemClock } from '../platform/clock'
import { addUnit, UnitInputError } from './add-unit'
import { listUnits } from './unit.queries'
import { resolveSites, SiteInputError } from '../accounts/add-site'
import { publicUrlProblem } from '../platform/public-url'

/** A stderr warning when drivers' phones could not use the public URL, or ''. */
function publicUrlWarning(publicUrl: string): string {
  const problem = publicUrlProblem(publicUrl)
  if (!problem) return ''
  const set = 'Set TOWLINE_PUBLIC_URL to the https address phones use (e.g. https://tow.example.com) for serve and these commands.'
  if (problem.kind === 'plain-http') return `Warning: ${publicUrl} is plain http: positions and the links in texts would cross the phone network unencrypted. ${set}\n`
  return `Warning: drivers' phones cannot reach ${publicUrl} (${problem.reason}), so the Traccar Client app and the links in texts will not work from them. ${set}\n`
}

const unitsAdd: Command = {
  name: 'units add',
  summary: 'Add a unit (truck and driver) and print its tracking device id',
  usage: `towline units add --name NAME [--driver-name NAME] [--driver-phone PHONE] [--site SITE]... [--device-id ID] [--account ID] [--db FILE] [--json]

Adds a unit. The driver's phone shares its position with the free Traccar Client app:
set its server URL to <public url>/osmand and its device identifier to the id printed here.
--site names a site (id or name) the unit serves; repeat it for several. Without it the unit
serves every site of the account. Keys limited to sites see the units that serve them.
Warns (and still adds the unit) when the public URL, TOWLINE_PUBLIC_URL, is one phones
cannot reach (localhost, a private or link-local address, a .local name) or is plain http,
and when --device-id is shorter than 12 characters (the id is all a phone shows to post).`,
  options: { ...DB_OPTIONS, name: { type: 'string' }, 'driver-name': { type: 'string' }, 'driver-phone': { type: 'string' }, site: { type: 'string', multiple: true }, 'device-id': { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db, config) => {
    if (!values.name?.trim()) throw new UsageError('--name is required')
    const account = values.account ? findAccountById(db, values.account) : ensureDefaultAccount(db, systemClock).account
    if (!account) throw new UsageError(`no account ${values.account}`)
    const accountId = account.id
    try {
      const siteIds = values.site?.length ? resolveSites(db, accountId, values.site).map((x) => x.id) : null
      const unit = addUnit(db, systemClock, { accountId, country: account.defaultCountry, name: values.name, driverName: values['driver-name'], driverPhone: values['driver-phone'], deviceId: values['device-id'], siteIds })
      // The device id is all a phone shows to post positions: a short one chosen by hand can be guessed.
      const given = values['device-id']?.trim()
      const weak = given && given.length < 12 ? `Warning: device id ${given} is short enough to guess, and it is all a phone needs to move this truck on the map. Leave --device-id out to get a random one, or choose 12 characters or more.\n` : ''
      const warning = weak + publicUrlWarning(config.publicUrl)
      if (values.json) {
        process.stderr.write(warning)
        return printJson({ object: 'unit', id: unit.id, name: unit.name, driver: { name: unit.driverName, phone: unit.driverPhone }, site_ids: unit.siteIds, device_id: unit.deviceId, osmand_url: `${config.publicUrl}/osmand` })
      }
      process.stdout.write(unit.id + '\n')
      process.stderr.write(`Added unit "${unit.name}". In Traccar Client set the server URL to ${config.publicUrl}/osmand and the device identifier to ${unit.deviceId}.\n${warning}`)
    } catch (err) {
      if (err instanceof UnitInputError || err instanceof SiteInputError) throw new UsageError(err.message)
      if (String(err).includes('UNIQUE')) throw new UsageError(`device id ${values['device-id']} is already used by another unit`)
      throw err
    }
  }),
}

const unitsList: Command = {
  name: 'units list',
  summary: 'List units with their device ids and last positions',
  usage: 'towline units list [--account ID] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db, config) => {
    const accountId = accountFor(db, values.account).id
    const rows = listUnits(db, { accountId, siteIds: null }, 1000).map((u) => ({
      id: u.id, name: u.name, driver_name: u.driverName, driver_phone: u.driverPhone, site_ids: u.siteIds, device_id: u.deviceId,
      position: u.lat !== null ? `${u.lat.toFixed(5)},${u.lng!.toFixed(5)}` : null, position_at: iso(u.positionAt),
    }))
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(rows.length ? table(rows.map((r) => ({ ...r, sites: r.site_ids ? r.site_ids.join(',') : 'all' })), ['id', 'name', 'driver_name', 'driver_phone', 'sites', 'device_id', 'position', 'position_at']) : `No units yet. Add one with: ${selfCommand()} units add${dbFlag(config)} --name "Truck 1"\n`)
  }),
}

/** Operator commands for units. */
export const unitCommands: Command[] = [unitsAdd, unitsList]

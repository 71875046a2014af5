import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, printJson, table, withDb } from '../cli/cli'
import { ensureDefaultAccount } from '../accounts/create-account'
import { findAccountById } from '../accounts/account.queries'
import { systemClock } from '../platform/clock'
import { addService, parseRate, RATE_UNITS, retireService, ServiceInputError } from './add-service'
import { listServicesPage } from './list-services'
import { createContextFactory } from '../operations/context-factory'

const accountOf = (db: Parameters<typeof findAccountById>[0], id: string | undefined) => {
  if (!id) return ensureDefaultAccount(db, systemClock).account
  const a = findAccountById(db, id)
  if (!a) throw new UsageError(`no account ${id}`)
  return a
}

const servicesAdd: Command = {
  name: 'services add',
  summary: 'Add a service with its rate card',
  usage: `towline services add --name NAME --type TYPE --rate KIND=AMOUNT [--rate KIND=AMOUNT]... [--account ID] [--db FILE] [--json]

Adds a service the company sells (GET /api/v1/services lists it). TYPE is what jobs carry as
service_type (e.g. flatbed, wheel_lift, jump_start). Each --rate is a rate kind and an amount in
dollars and cents: ${Object.keys(RATE_UNITS).join(', ')}. Example:
  towline services add --name "Flatbed tow" --type flatbed --rate hook=95.00 --rate per_mile=4.50`,
  options: { ...DB_OPTIONS, name: { type: 'string' }, type: { type: 'string' }, rate: { type: 'string', multiple: true }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    if (!values.name?.trim()) throw new UsageError('--name is required')
    if (!values.type?.trim()) throw new UsageError('--type is required (what jobs carry as service_type, e.g. flatbed)')
    if (!values.rate?.length) throw new UsageError(`give at least one --rate KIND=AMOUNT (kinds: ${Object.keys(RATE_UNITS).join(', ')})`)
    const account = accountOf(db, values.account)
    try {
      const svc = addService(db, systemClock, { accountId: account.id, name: values.name, serviceType: values.type, rates: (values.rate as string[]).map(parseRate) })
      if (values.json) return printJson({ object: 'service', id: svc.id, name: svc.name, service_type: svc.serviceType, rates: svc.rates })
      process.stdout.write(svc.id + '\n')
      process.stderr.write(`Added "${svc.name}" (${svc.serviceType}): ${svc.rates.map((r) => `${r.kind} $${(r.amount_cents / 100).toFixed(2)}/${r.unit}`).join(', ')}.\n`)
    } catch (err) {
      if (err instanceof ServiceInputError) throw new UsageError(err.message)
      throw err
    }
  }),
}

const servicesList: Command = {
  name: 'services list',
  summary: 'List services and their rate cards',
  usage: 'towline services list [--account ID] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db, _config, links) => {
    const account = accountOf(db, values.account)
    const rows = listServicesPage(createContextFactory({ db, clock: systemClock, links }).forOperator(account.id), { limit: '100' }).data
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(rows.length
      ? table(rows.map((r) => ({ ...r, rates: r.rates.map((x) => `${x.kind} $${(x.amount_cents / 100).toFixed(2)}/${x.unit}`).join(', ') })), ['id', 'name', 'service_type', 'rates'])
      : 'No services yet. Add one with: towline services add --name "Flatbed tow" --type flatbed --rate hook=95.00 --rate per_mile=4.50\n')
  }),
}

const servicesRemove: Command = {
  name: 'services remove',
  summary: 'Stop offering a service (it leaves GET /services; past jobs keep their service_type)',
  usage: 'towline services remove SERVICE_ID [--db FILE] [--json]',
  options: DB_OPTIONS,
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, (db) => {
    const id = positionals[0]
    if (!id) throw new UsageError('which service? give its id (svc_...)')
    const svc = retireService(db, id)
    if (!svc) { process.stderr.write(`No service ${id}.\n`); return 1 }
    if (values.json) return void printJson({ object: 'service', id: svc.id, removed: true })
    process.stdout.write(`Removed "${svc.name}" (${svc.id}).\n`)
  }),
}

/** Operator commands for services and the rate card. */
export const serviceCommands: Command[] = [servicesAdd, servicesList, servicesRemove]

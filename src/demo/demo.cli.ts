import type { Command } from '../cli/cli'
import { DB_OPTIONS, dbFlag, printJson, selfCommand, withDb } from '../cli/cli'
import { loadDemo } from './load-demo'
import { createUser } from '../users/create-user'
import { createContextFactory } from '../operations/context-factory'
import { systemClock } from '../platform/clock'

/** `towline demo`: loads a demo account to explore the API with. */
export const demoCommand: Command = {
  name: 'demo',
  summary: 'Load a demo account: units, services, a day of jobs in every status',
  usage: `towline demo [--name NAME] [--db FILE] [--json]

Creates a separate demo account (it never touches your real ones) and prints its id, with
an owner login for the dashboard (email and a generated password, shown once). Then make
a key for it: towline keys create --account ACCOUNT_ID --name demo --scopes all`,
  options: { ...DB_OPTIONS, name: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, async (db, config, links) => {
    const r = loadDemo(db, links, { name: values.name })
    const ctx = createContextFactory({ db, clock: systemClock, links }).forOperator(r.account.id)
    const email = `demo-owner-${r.account.id.slice(-8).toLowerCase()}@example.com`
    const login = await createUser(ctx, { email, role: 'owner' })
    if (values.json) return printJson({ account_id: r.account.id, name: r.account.name, site_id: r.site.id, units: r.units, services: r.services, jobs: r.jobs, commercial_accounts: r.commercialAccounts, login: { email, password: login.password, url: `${config.publicUrl}/login` } })
    process.stdout.write(r.account.id + '\n')
    process.stderr.write(`Loaded "${r.account.name}": ${r.units} units, ${r.services} services, ${r.jobs} jobs, ${r.commercialAccounts} commercial accounts.\n` +
      `Dashboard: sign in at ${config.publicUrl}/login as ${email} with password ${login.password} (shown once).\n` +
      `Make a key for it: ${selfCommand()} keys create${dbFlag(config)} --account ${r.account.id} --name demo --scopes all\n`)
  }, { create: true }),
}

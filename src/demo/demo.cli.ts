import type { Command } from '../cli/cli'
import { DB_OPTIONS, dbFlag, printJson, selfCommand, withDb } from '../cli/cli'
import { loadDemo } from './load-demo'

/** `towline demo`: loads a demo account to explore the API with. */
export const demoCommand: Command = {
  name: 'demo',
  summary: 'Load a demo account: units, services, a day of jobs in every status',
  usage: `towline demo [--name NAME] [--db FILE] [--json]

Creates a separate demo account (it never touches your real ones) and prints its id. Then
make a key for it: towline keys create --account ACCOUNT_ID --name demo --scopes all`,
  options: { ...DB_OPTIONS, name: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db, config, links) => {
    const r = loadDemo(db, links, { name: values.name })
    if (values.json) return printJson({ account_id: r.account.id, name: r.account.name, site_id: r.site.id, units: r.units, services: r.services, jobs: r.jobs })
    process.stdout.write(r.account.id + '\n')
    process.stderr.write(`Loaded "${r.account.name}": ${r.units} units, ${r.services} services, ${r.jobs} jobs.\nMake a key for it: ${selfCommand()} keys create${dbFlag(config)} --account ${r.account.id} --name demo --scopes all\n`)
  }, { create: true }),
}

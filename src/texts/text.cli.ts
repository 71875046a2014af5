import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, asUsage, printJson, table, withDb } from '../cli/cli'
import { ensureDefaultAccount } from '../accounts/create-account'
import { systemClock } from '../platform/clock'
import { listOutbox } from './list-texts'
import { findAccountById } from '../accounts/account.queries'
import { createContextFactory } from '../operations/context-factory'
import type { Db } from '../db/client'
import type { JobLinks } from '../jobs/job-links'
import { TEMPLATE_NAMES } from './templates'
import { listTemplates, resetTemplate, setTemplate } from './manage-templates'
import { lookUpConsent, startTexts, stopTexts } from './manage-consent'

/** What --status takes: the outbox's statuses. */
const TEXT_STATUSES = ['queued', 'skipped', 'sending', 'sent', 'delivered', 'failed']

const textsList: Command = {
  name: 'texts list',
  summary: 'List texts in the outbox (queued, skipped with the reason, sent, delivered, failed)',
  usage: 'towline texts list [--job JOB_ID] [--status S] [--limit N] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, job: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => {
    if (values.status !== undefined && !TEXT_STATUSES.includes(values.status)) throw new UsageError(`--status must be one of ${TEXT_STATUSES.join(', ')}`)
    const limit = values.limit === undefined ? 50 : /^\d{1,4}$/.test(values.limit) ? Number(values.limit) : NaN
    if (!(limit >= 1 && limit <= 1000)) throw new UsageError('--limit must be a whole number from 1 to 1000')
    return withDb(values, (db, _config, links) => {
      const rows = listOutbox(db, links, { jobId: values.job, status: values.status, limit })
      if (values.json) return printJson({ object: 'list', data: rows })
      const none = values.job || values.status ? 'No texts match.\n' : 'No texts yet.\n'
      process.stdout.write(rows.length ? table(rows.map((r) => ({ ...r, status: r.skip_reason ? `${r.status} (${r.skip_reason})` : r.status, body: r.body.slice(0, 60) })), ['created_at', 'job_id', 'recipient', 'to', 'template', 'status', 'body']) : none)
    })
  },
}

const templatesCmd: Command = {
  name: 'texts templates',
  summary: 'Show or change an account\'s text templates',
  usage: `towline texts templates [--set NAME --text TEXT | --reset NAME] [--account ID] [--db FILE] [--json]

Templates: ${TEMPLATE_NAMES.join(', ')}.
Placeholders: {company} {pickup} {tracking_url} {eta} {job_ref} in every text, and {driver_url}
in driver_job_link only; any other {name} is refused. Keep to plain characters (GSM-7) so a
text stays one segment; the link is the part whose length varies. The dashboard's Settings
page (Text templates) changes the same (owners).`,
  options: { ...DB_OPTIONS, set: { type: 'string' }, text: { type: 'string' }, reset: { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, async (db, _config, links) => {
    const ctx = operatorContext(db, links, values.account)
    if (values.text !== undefined && values.set === undefined) throw new UsageError('--text needs --set NAME: which template to change (nothing was changed)')
    if (values.set !== undefined && values.reset !== undefined) throw new UsageError('give --set or --reset, not both (nothing was changed)')
    if (values.set !== undefined) {
      if (!values.text?.trim()) throw new UsageError('--text is required with --set')
      await asUsage(() => setTemplate(ctx, values.set, values.text))
    }
    if (values.reset !== undefined) await asUsage(() => resetTemplate(ctx, values.reset))
    const rows = listTemplates(ctx).map((t) => ({ name: t.name, text: t.text, own: t.own }))
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(table(rows.map((r) => ({ ...r, own: r.own ? 'yes' : '' })), ['name', 'own', 'text']))
  }),
}

const consentCmd: Command = {
  name: 'texts consent',
  summary: 'Show who may be texted; record a STOP or START a customer gave by other means',
  usage: `towline texts consent [--phone NUMBER] [--stop NUMBER | --start NUMBER] [--account ID] [--db FILE] [--json]

Each number's consent with where it came from (api:<key id>, sms:STOP, cli, ...) and when.
--stop opts a number out of the account's texts (as if it had texted STOP); --start lets it
be texted again (as START does). Numbers are read in the account's default country. The
dashboard's Settings page (Consent) does the same (owners).`,
  options: { ...DB_OPTIONS, phone: { type: 'string' }, stop: { type: 'string' }, start: { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, async (db, _config, links) => {
    const ctx = operatorContext(db, links, values.account)
    if (values.stop !== undefined && values.start !== undefined) throw new UsageError('give --stop or --start, not both')
    let phone: string | undefined
    if (values.stop !== undefined) phone = (await asUsage(() => stopTexts(ctx, values.stop))).phone
    if (values.start !== undefined) phone = (await asUsage(() => startTexts(ctx, values.start))).phone
    const rows = (await asUsage(() => lookUpConsent(ctx, phone ?? values.phone))).records
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(rows.length ? table(rows, ['phone', 'texts', 'consent_source', 'consented_at', 'opt_out_source', 'opted_out_at']) : 'No consent records yet.\n')
  }),
}

/** The console's context on the account --account names (else the default one). */
function operatorContext(db: Db, links: JobLinks, accountId: string | undefined) {
  const account = accountId ? findAccountById(db, accountId) : ensureDefaultAccount(db, systemClock).account
  if (!account) throw new UsageError(`no account ${accountId}; towline accounts list shows them`)
  return createContextFactory({ db, clock: systemClock, links }).forOperator(account.id)
}

/** Operator commands for texts. */
export const textCommands: Command[] = [textsList, templatesCmd, consentCmd]

import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, printJson, table, withDb } from '../cli/cli'
import { ensureDefaultAccount } from '../accounts/create-account'
import { systemClock } from '../platform/clock'
import { listOutbox } from './list-texts'
import { listConsents, recordConsent, recordOptOut } from './consent'
import { normalizePhone } from '../platform/phone'
import { findAccountById } from '../accounts/account.queries'
import { DEFAULT_TEMPLATES, type TemplateName } from './templates'
import { templateFor } from './queue-text'

const textsList: Command = {
  name: 'texts list',
  summary: 'List texts in the outbox (queued, skipped with the reason, sent, delivered, failed)',
  usage: 'towline texts list [--job JOB_ID] [--status S] [--limit N] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, job: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db, _config, links) => {
    const limit = Math.min(1000, Math.max(1, Number(values.limit ?? 50) || 50))
    const rows = listOutbox(db, links, { jobId: values.job, status: values.status, limit })
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(rows.length ? table(rows.map((r) => ({ ...r, status: r.skip_reason ? `${r.status} (${r.skip_reason})` : r.status, body: r.body.slice(0, 60) })), ['created_at', 'job_id', 'recipient', 'to', 'template', 'status', 'body']) : 'No texts yet.\n')
  }),
}

const templatesCmd: Command = {
  name: 'texts templates',
  summary: 'Show or change an account\'s text templates',
  usage: `towline texts templates [--set NAME --text TEXT | --reset NAME] [--account ID] [--db FILE] [--json]

Templates: ${Object.keys(DEFAULT_TEMPLATES).join(', ')}.
Placeholders: {company} {pickup} {tracking_url} {driver_url} {eta} {job_ref}. Keep to plain
characters (GSM-7) so a text stays one segment; the link is the part whose length varies.`,
  options: { ...DB_OPTIONS, set: { type: 'string' }, text: { type: 'string' }, reset: { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    const accountId = values.account ?? ensureDefaultAccount(db, systemClock).account.id
    const name = (values.set ?? values.reset) as TemplateName | undefined
    if (name && !(name in DEFAULT_TEMPLATES)) throw new UsageError(`unknown template "${name}"`)
    if (values.set) {
      if (!values.text?.trim()) throw new UsageError('--text is required with --set')
      db.$client.query('INSERT INTO text_templates (account_id, name, body, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id, name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at')
        .run(accountId, values.set, values.text.trim(), systemClock.now())
    }
    if (values.reset) db.$client.query('DELETE FROM text_templates WHERE account_id = ? AND name = ?').run(accountId, values.reset)
    const rows = (Object.keys(DEFAULT_TEMPLATES) as TemplateName[]).map((n) => ({ name: n, text: templateFor(db, accountId, n), own: templateFor(db, accountId, n) !== DEFAULT_TEMPLATES[n] }))
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
be texted again (as START does). Numbers are read in the account's default country.`,
  options: { ...DB_OPTIONS, phone: { type: 'string' }, stop: { type: 'string' }, start: { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    const account = values.account ? findAccountById(db, values.account) : ensureDefaultAccount(db, systemClock).account
    if (!account) throw new UsageError(`no account ${values.account}`)
    const number = (raw: string | undefined) => {
      if (raw === undefined) return undefined
      const phone = normalizePhone(raw, account.defaultCountry)
      if (!phone) throw new UsageError(`"${raw}" is not a phone number`)
      return phone
    }
    const stop = number(values.stop)
    const start = number(values.start)
    if (stop && start) throw new UsageError('give --stop or --start, not both')
    const now = systemClock.now()
    if (stop) recordOptOut(db, account.id, stop, 'cli', now)
    if (start) recordConsent(db, account.id, start, 'cli', now, true)
    const rows = listConsents(db, account.id, number(values.phone) ?? stop ?? start)
    if (values.json) return printJson({ object: 'list', data: rows })
    process.stdout.write(rows.length ? table(rows, ['phone', 'texts', 'consent_source', 'consented_at', 'opt_out_source', 'opted_out_at']) : 'No consent records yet.\n')
  }),
}

/** Operator commands for texts. */
export const textCommands: Command[] = [textsList, templatesCmd, consentCmd]

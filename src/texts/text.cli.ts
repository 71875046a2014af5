import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, printJson, table, withDb } from '../cli/cli'
import { ensureDefaultAccount } from '../accounts/create-account'
import { systemClock } from '../platform/clock'
import { listOutbox } from './list-texts'
import { DEFAULT_TEMPLATES, type TemplateName } from './templates'
import { templateFor } from './queue-text'

const textsList: Command = {
  name: 'texts list',
  summary: 'List texts in the outbox (queued, skipped with the reason, sent, delivered, failed)',
  usage: 'towline texts list [--job JOB_ID] [--status S] [--limit N] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, job: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    const limit = Math.min(1000, Math.max(1, Number(values.limit ?? 50) || 50))
    const rows = listOutbox(db, { jobId: values.job, status: values.status, limit })
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

/** Operator commands for texts. */
export const textCommands: Command[] = [textsList, templatesCmd]

import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, printJson, table, withDb } from '../cli/cli'
import type { Db } from '../db/client'
import { findAccountById } from '../accounts/account.queries'
import { AppError } from '../platform/errors'
import { systemClock } from '../platform/clock'
import { trackingUrlOf, type JobLinks } from './job-links'
import { archiveJob, restoreJob } from './archive-job'
import { createContextFactory } from '../operations/context-factory'
import type { Config } from '../config'
import type { OperationContext } from '../operations/operation-context'
import { jobs } from './job.table'
import { eq } from 'drizzle-orm'
import { listJobs } from './list-jobs'
import { replaceTrackingLink } from './replace-tracking-link'

/** A job context for an operator at the console: acts as the system on the job's own account. */
function operatorContext(db: Db, links: JobLinks, jobId: string): OperationContext {
  const row = db.select({ accountId: jobs.accountId }).from(jobs).where(eq(jobs.id, jobId)).get()
  if (!row) throw new UsageError(`no job ${jobId}`)
  return createContextFactory({ db, clock: systemClock, links }).forOperator(row.accountId)
}

/**
 * A command acting on one job as the operator: `act` runs the operation and prints its outcome
 * (JSON with --json); an operation's refusal is printed as a usage error (exit 2).
 */
function oneJobCommand(name: string, summary: string, more: string, act: (ctx: OperationContext, id: string, links: JobLinks, json: boolean, config: Config) => void): Command {
  return {
    name: `jobs ${name}`,
    summary,
    usage: `towline jobs ${name} JOB_ID [--db FILE] [--json]${more ? `\n\n${more}` : ''}`,
    options: DB_OPTIONS,
    positionals: 1,
    run: ({ values, positionals }) => withDb(values, (db, config, links) => {
      const id = positionals[0]
      if (!id) throw new UsageError('which job? give its id (job_...)')
      try {
        act(operatorContext(db, links, id), id, links, Boolean(values.json), config)
      } catch (err) {
        if (err instanceof AppError) throw new UsageError(err.message)
        throw err
      }
    }),
  }
}

function jobCommand(name: 'archive' | 'restore', summary: string, run: typeof archiveJob): Command {
  return oneJobCommand(name, summary, '', (ctx, id, _links, json) => {
    const job = run(ctx, id)
    if (json) return printJson({ id: job.id, archived: job.archivedAt !== null })
    process.stdout.write(`${job.id} is ${job.archivedAt !== null ? 'archived' : 'active'}.\n`)
  })
}

const newTrackingLink = oneJobCommand('new-tracking-link', 'Give a job a new tracking link; the old one answers 410 (gone) at once',
  `Mints a new tracking link for the job (a leaked or forwarded link, say) and prints it. The old
link answers 410 from now on; the change is a job.updated event naming tracking_url, so webhook
receivers get the new URL. Nobody is texted: send the customer the new link yourself. Links
start with TOWLINE_PUBLIC_URL, so set it as serve has it.`,
  (ctx, id, links, json, config) => {
    const job = replaceTrackingLink(ctx, id)
    const url = trackingUrlOf(links, job)
    // This console cannot know the port serve listens on: a link built on the default address may not be the one customers can open.
    if (config.publicUrlIsDefault) process.stderr.write(`Warning: TOWLINE_PUBLIC_URL is not set, so this link starts with the default ${config.publicUrl}. If serve answers at another address or port, the link is that address followed by the /t/... part printed here. Set TOWLINE_PUBLIC_URL for these commands as serve has it.\n`)
    if (json) return printJson({ id: job.id, tracking_url: url })
    process.stdout.write(`${url}\n`)
  })

const jobsList: Command = {
  name: 'jobs list',
  summary: 'List the newest jobs of an account',
  usage: 'towline jobs list [--status S[,S]] [--limit N] [--account ID] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, status: { type: 'string' }, limit: { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db, _config, links) => {
    const account = values.account ? findAccountById(db, values.account) : undefined
    if (values.account && !account) throw new UsageError(`no account ${values.account}`)
    const accountId = account?.id ?? (db.$client.query('SELECT id FROM accounts WHERE is_default = 1').get() as { id: string } | null)?.id
    if (!accountId) return void process.stdout.write('No jobs yet.\n')
    try {
      const page = listJobs(createContextFactory({ db, clock: systemClock, links }).forOperator(accountId), { status: values.status, limit: values.limit ?? '25' })
      if (values.json) return printJson(page)
      process.stdout.write(table(page.data.map((j) => ({ id: j.id, status: j.status, ref: j.external_ref, customer: j.customer.name, pickup: j.pickup.location.slice(0, 40), unit: j.unit?.name, created_at: j.created_at, archived: j.archived ? 'yes' : '' })),
        ['id', 'status', 'ref', 'customer', 'pickup', 'unit', 'created_at', 'archived']))
    } catch (err) {
      if (err instanceof AppError) throw new UsageError(err.message)
      throw err
    }
  }),
}

/** Operator commands for jobs (archiving lives in the dashboard; these serve until it exists). */
export const jobCommands: Command[] = [
  jobsList,
  jobCommand('archive', 'Archive a job: it refuses every write until restored', archiveJob),
  jobCommand('restore', 'Restore an archived job', restoreJob),
  newTrackingLink,
]

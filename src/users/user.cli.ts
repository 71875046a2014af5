import type { Command } from '../cli/cli'
import { DB_OPTIONS, UsageError, asUsage as asUsageOf, printJson, table, withDb, requireKnownAccount } from '../cli/cli'
import { ensureDefaultAccount } from '../accounts/create-account'
import { findAccountById } from '../accounts/account.queries'
import { createContextFactory } from '../operations/context-factory'
import { iso, systemClock } from '../platform/clock'
import { createUser } from './create-user'
import { setUserDisabled, setUserPassword } from './manage-user'
import { findUserByEmail, listUsers, type UserRow } from './user.queries'
import { MIN_PASSWORD_LENGTH } from './password'
import type { Db } from '../db/client'
import type { JobLinks } from '../jobs/job-links'

/** Runs a users operation: its refusals become usage errors, a login not found says where to look. */
const asUsage = <T>(work: () => T | Promise<T>) => asUsageOf(work, 'towline users list shows them')

/** A login as the console prints it (never its password hash). */
function userView(u: UserRow & { accountName?: string }) {
  return {
    object: 'user' as const, id: u.id, email: u.email, role: u.role, account_id: u.accountId, account_name: u.accountName,
    status: u.disabledAt ? 'disabled' : 'active', created_at: iso(u.createdAt), last_login_at: iso(u.lastLoginAt), disabled_at: iso(u.disabledAt),
  }
}

const usersCreate: Command = {
  name: 'users create',
  summary: 'Create a dashboard login (owner or dispatcher)',
  usage: `towline users create --email EMAIL --role owner|dispatcher [--password P] [--account ID] [--db FILE] [--json]

Creates a login for the dashboard. Without --password one is generated and printed once
on stdout; only its argon2id hash is kept. Passwords have at least ${MIN_PASSWORD_LENGTH} characters.
  --role owner        everything: jobs, board, Developers (keys, webhooks), users, settings
  --role dispatcher   jobs, board, units, import, invoices, accounts directory
  --account ID        the account (default: the installation's default account)`,
  options: { ...DB_OPTIONS, email: { type: 'string' }, role: { type: 'string' }, password: { type: 'string' }, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, async (db, config, links) => {
    if (!values.email) throw new UsageError('--email is required')
    if (!values.role) throw new UsageError('--role is required (owner or dispatcher)')
    if (values.account && !findAccountById(db, values.account)) throw new UsageError(`no account ${values.account}; towline accounts list shows them`)
    const accountId = values.account ?? ensureDefaultAccount(db, systemClock).account.id
    const ctx = createContextFactory({ db, clock: systemClock, links }).forOperator(accountId)
    const made = await asUsage(() => createUser(ctx, { email: values.email, role: values.role, password: values.password }))
    if (values.json) return printJson({ ...userView(made.user), password: made.generated ? made.password : undefined })
    if (made.generated) process.stdout.write(made.password + '\n')
    process.stderr.write(`Created ${made.user.role} login ${made.user.email} (${made.user.id}) for ${ctx.account.name}.` +
      `${made.generated ? ' Its password is printed above, once: pass it on safely.' : ''} Sign in at ${config.publicUrl}/login` +
      // The console does not know where serve listens unless told (serve may run on another port).
      `${config.publicUrlIsDefault ? ' (or at the Dashboard address serve printed, when it listens elsewhere)' : ''}\n`)
  }),
}

const usersList: Command = {
  name: 'users list',
  summary: 'List dashboard logins (email, role, status, last sign-in)',
  usage: 'towline users list [--account ID] [--db FILE] [--json]',
  options: { ...DB_OPTIONS, account: { type: 'string' } },
  positionals: 0,
  run: ({ values }) => withDb(values, (db) => {
    requireKnownAccount(db, values.account)
    const rows = listUsers(db, values.account).map(userView)
    if (values.json) return printJson({ object: 'list', data: rows })
    if (!rows.length) return void process.stdout.write('No logins yet. Make the first owner with: towline users create --email you@example.com --role owner\n')
    process.stdout.write(table(rows.map((r) => ({ ...r, account: `${r.account_name} (${r.account_id})`, last_login_at: r.last_login_at ?? 'never' })),
      ['id', 'email', 'role', 'status', 'account', 'created_at', 'last_login_at']))
  }),
}

/** The operator context of the account a login (named by email) belongs to. */
function contextOfLogin(db: Db, links: JobLinks, email: string | undefined) {
  if (!email) throw new UsageError('which login? give its email')
  const user = findUserByEmail(db, email)
  if (!user) throw new UsageError(`no login ${email}; towline users list shows them`)
  return createContextFactory({ db, clock: systemClock, links }).forOperator(user.accountId)
}

const usersDisable: Command = {
  name: 'users disable',
  summary: 'Disable a login: its sessions end and it can no longer sign in',
  usage: 'towline users disable EMAIL [--db FILE] [--json]',
  options: DB_OPTIONS,
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, async (db, _config, links) => {
    const ctx = contextOfLogin(db, links, positionals[0])
    const r = await asUsage(() => setUserDisabled(ctx, positionals[0]!, true))
    if (values.json) return printJson({ ...userView(r.user), sessions_ended: r.sessionsEnded })
    process.stdout.write(`Disabled ${r.user.email}; ${r.sessionsEnded} session(s) ended.\n`)
  }),
}

const usersEnable: Command = {
  name: 'users enable',
  summary: 'Let a disabled login sign in again',
  usage: 'towline users enable EMAIL [--db FILE] [--json]',
  options: DB_OPTIONS,
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, async (db, _config, links) => {
    const ctx = contextOfLogin(db, links, positionals[0])
    const r = await asUsage(() => setUserDisabled(ctx, positionals[0]!, false))
    if (values.json) return printJson(userView(r.user))
    process.stdout.write(`Enabled ${r.user.email}.\n`)
  }),
}

const usersPassword: Command = {
  name: 'users password',
  summary: "Set a login's password (generated unless given) and end its sessions",
  usage: `towline users password EMAIL [--password P] [--db FILE] [--json]\n\nWithout --password a new one is generated and printed once on stdout. Every session of the\nlogin ends (signed-in browsers go back to the sign-in page).`,
  options: { ...DB_OPTIONS, password: { type: 'string' } },
  positionals: 1,
  run: ({ values, positionals }) => withDb(values, async (db, _config, links) => {
    const ctx = contextOfLogin(db, links, positionals[0])
    const r = await asUsage(() => setUserPassword(ctx, positionals[0]!, values.password))
    if (values.json) return printJson({ ...userView(r.user), password: r.generated ? r.password : undefined, sessions_ended: r.sessionsEnded })
    if (r.generated) process.stdout.write(r.password + '\n')
    process.stderr.write(`New password set for ${r.user.email}${r.generated ? ' (printed above, once)' : ''}; ${r.sessionsEnded} session(s) ended.\n`)
  }),
}

/** The `towline users ...` commands. */
export const userCommands: Command[] = [usersCreate, usersList, usersDisable, usersEnable, usersPassword]

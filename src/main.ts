#!/usr/bin/env bun
/** The `towline` command: the server and the operator commands, one binary. */
import { accountCommands } from './accounts/account.cli'
import { unitCommands } from './units/unit.cli'
import { jobCommands } from './jobs/job.cli'
import { jobsCsvCommands } from './jobs-csv/jobs-csv.cli'
import { backupCommand } from './db/backup.cli'
import { dbCommands } from './db/db.cli'
import { demoCommand } from './demo/demo.cli'
import { textCommands } from './texts/text.cli'
import { serviceCommands } from './services/service.cli'
import { userCommands } from './users/user.cli'
import { ConfigError, configFrom, parseFor, UsageError, withDb, printJson, DB_OPTIONS, type Command } from './cli/cli'
import { DatabaseTooNewError, embeddedMigrations } from './db/migrate'
import { embeddedPgMigrations } from './db/pg/migrate-postgres'
import { describeDatabase } from './db/location'
import { serve } from './server'
import { SealKeyError } from './platform/sealed'
import { TlsFileError } from './platform/tls'
import { VERSION, API_VERSION } from './version'

const serveCmd: Command = {
  name: 'serve',
  summary: 'Run the service: the JSON API, its reference page, webhooks and texts on one port',
  usage: `towline serve [--db FILE|URL] [--port N] [--host ADDR] [--public-url URL] [--tls-cert FILE --tls-key FILE] [--trusted-proxies LIST]

Listens, then migrates the database (creating it, readable by its owner only, if there is
none) and creates the default account on an empty one. A port already in use is refused
(exit 1): two servers never share a port.
Settings (flags win over the environment):
  --db FILE|URL      TOWLINE_DB           SQLite database file (default ./towline.db) or postgres:// URL
  --port N           TOWLINE_PORT         port (default 8080; 0 picks a free one)
  --host ADDR        TOWLINE_HOST         address (default 0.0.0.0)
  --public-url URL   TOWLINE_PUBLIC_URL   base of tracking and driver links (default http://localhost:<port>,
                                          https://localhost:<port> with a certificate)
  --tls-cert FILE    TOWLINE_TLS_CERT     answer HTTPS with this PEM certificate (and chain)...
  --tls-key FILE     TOWLINE_TLS_KEY      ...and its PEM private key; both or neither
  --trusted-proxies LIST  TOWLINE_TRUSTED_PROXIES  load balancers in front (addresses, CIDR ranges):
                                          their X-Forwarded-For names the client (default: none)
A plain http public URL on a host other than this machine gets a warning: phones share their
position and camera only over https (this certificate, or a TLS proxy and an https public URL).
Also: TOWLINE_LINK_KEY_FILE (default <db>.key: keep it with the database), TOWLINE_RATE_LIMIT_READS, TOWLINE_RATE_LIMIT_WRITES, TOWLINE_WEBHOOK_RETRY_SCHEDULE,
TOWLINE_WEBHOOK_TIMEOUT_MS, TOWLINE_WEBHOOK_ALLOW_PRIVATE, TOWLINE_WEBHOOK_HISTORY_DAYS, TOWLINE_POSITION_HISTORY_DAYS, TOWLINE_SMS_PROVIDER, TWILIO_*,
TOWLINE_TWILIO_API_BASE, TOWLINE_SMS_RETRY_SCHEDULE, TOWLINE_SMS_REPLY_WINDOW_HOURS, TOWLINE_TRACKING_LINK_DAYS, TOWLINE_TILE_URL, TOWLINE_IDLE_TIMEOUT_SECONDS, LOG_LEVEL. Logs are JSON lines on stdout; pipe to pino-pretty to read.
SIGTERM or SIGINT drains requests, checkpoints the database and exits 0.`,
  options: { db: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'public-url': { type: 'string' }, 'tls-cert': { type: 'string' }, 'tls-key': { type: 'string' }, 'trusted-proxies': { type: 'string' } },
  positionals: 0,
  run: async ({ values }) => { await serve(configFrom(values)); return -1 },
}

const migrateCmd: Command = {
  name: 'migrate',
  summary: 'Apply pending database migrations (safe to run twice)',
  usage: 'towline migrate [--db FILE|URL] [--json]\n\nApplies every embedded migration the database has not seen, creating the database\n(readable by its owner only) if there is none. serve does this too. A postgres:// URL\nnames a PostgreSQL database (which must exist; its tables are created).',
  options: DB_OPTIONS,
  positionals: 0,
  run: ({ values }) => withDb(values, (db, config, _links, opened) => {
    // withDb already migrated; report what it applied and what the database now holds.
    const all = db.engine === 'postgres' ? embeddedPgMigrations() : embeddedMigrations()
    if (values.json) return printJson({ database: describeDatabase(config.dbPath), engine: db.engine, migrations: all, applied: opened.applied, link_key_created: opened.keyCreated ? config.linkKeyFile : null })
    const did = opened.applied.length ? `applied ${opened.applied.length} migration${opened.applied.length === 1 ? '' : 's'} (${opened.applied[0]}${opened.applied.length > 1 ? ` to ${opened.applied.at(-1)}` : ''}); ` : 'nothing to apply; '
    process.stdout.write(`${describeDatabase(config.dbPath)}: ${did}it is at migration ${all.at(-1)?.tag ?? '(none)'} (${all.length} embedded).\n`)
    if (opened.keyCreated) process.stdout.write(`Created its link key ${config.linkKeyFile}: job links are sealed with it, so back it up with the database (towline backup copies both).\n`)
  }, { create: true }),
}

const versionCmd: Command = {
  name: 'version',
  summary: 'Print the version',
  usage: 'towline version [--json]',
  options: { json: { type: 'boolean' } },
  positionals: 0,
  run: ({ values }) => {
    // The newest migration it carries tells two builds of one version apart, and which of them a database needs.
    const schema = { sqlite: embeddedMigrations().at(-1)?.tag ?? null, postgres: embeddedPgMigrations().at(-1)?.tag ?? null }
    if (values.json) return printJson({ version: VERSION, api_version: API_VERSION, schema, bun: Bun.version })
    process.stdout.write(`towline ${VERSION} (API ${API_VERSION}, schema ${schema.sqlite} / PostgreSQL ${schema.postgres}, bun ${Bun.version})\n`)
  },
}

const COMMANDS: Command[] = [serveCmd, migrateCmd, ...accountCommands, ...userCommands, ...unitCommands, ...serviceCommands, ...jobCommands, ...jobsCsvCommands, ...textCommands, demoCommand, backupCommand, ...dbCommands, versionCmd]

function overview(): string {
  const w = Math.max(...COMMANDS.map((c) => c.name.length))
  return `towline ${VERSION}: towing dispatch service in one executable

Usage: towline COMMAND [options]     (towline COMMAND --help for a command's options)

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`).join('\n')}

The database is --db FILE or TOWLINE_DB (default ./towline.db); only serve, migrate
and demo create it when it does not exist.
`
}

/** Runs the CLI with the given arguments and returns the exit code (-1: keep running). */
export async function main(argv: string[]): Promise<number> {
  if (!argv.length || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(overview())
    return argv.length ? 0 : 2
  }
  if (argv[0] === '--version' || argv[0] === '-v') argv = ['version']
  const two = `${argv[0]} ${argv[1] ?? ''}`
  const cmd = COMMANDS.find((c) => c.name === two) ?? COMMANDS.find((c) => c.name === argv[0])
  if (!cmd) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${argv[0]} `))
    if (group.length) {
      const help = argv.slice(1).some((a) => a === '--help' || a === '-h')
      process[help ? 'stdout' : 'stderr'].write(`${help ? '' : `towline ${argv[0]}: ${argv[1] ? `unknown subcommand "${argv[1]}"` : 'which one?'}\n\n`}Usage:\n${group.map((c) => `  towline ${c.name.padEnd(16)} ${c.summary}`).join('\n')}\n`)
      return help ? 0 : 2
    }
    process.stderr.write(`towline: unknown command "${argv[0]}"\n\n${overview()}`)
    return 2
  }
  const rest = argv.slice(cmd.name.split(' ').length)
  try {
    const args = parseFor(cmd, rest)
    if (args.values.help) { process.stdout.write(cmd.usage + '\n'); return 0 }
    const code = await cmd.run(args)
    return typeof code === 'number' ? code : 0
  } catch (err) {
    if (err instanceof UsageError) { process.stderr.write(`towline ${cmd.name}: ${err.message}\n\nUsage: ${cmd.usage}\n`); return 2 }
    // The reader of our output went away (`towline jobs export | head`): stop without a word, as
    // a program killed by SIGPIPE does (128 + 13), rather than blame ourselves for a broken pipe.
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') return 141
    if (err instanceof ConfigError || err instanceof DatabaseTooNewError || err instanceof SealKeyError || err instanceof TlsFileError) { process.stderr.write(`towline ${cmd.name}: ${err.message}\n`); return 2 }
    process.stderr.write(`towline ${cmd.name}: ${(err as Error).message}\n`)
    return 1
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2))
  if (code >= 0) process.exit(code)
}

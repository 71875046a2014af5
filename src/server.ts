import type { Config } from './config'
import { openDatabase, closeDatabase, restrictKeyToOwner, restrictToOwner } from './db/client'
import { startCheckpointer } from './db/checkpointer'
import { describeDatabase } from './db/location'
import { commandFor } from './cli/cli'
import { migrateDatabase } from './db/migrate'
import { checkLinkKeyPath, migrateWithKey, openLinkKey, recordLinkKey } from './db/link-key'
import { fillSearchText } from './jobs/fill-search-text'
import { ensureDefaultAccount } from './accounts/create-account'
import { createHandler, type AppDeps } from './app'
import { systemClock, type Clock } from './platform/clock'
import { createLogger } from './platform/log'
import { limiterFor, SharedRateLimiter } from './platform/shared-rate-limit'
import { VERSION } from './version'
import { startBackgroundWork } from './background'
import { hasActiveUser } from './users/user.queries'
import { JobEventBus } from './jobs/job-event-bus'
import { MAX_REQUEST_BODY_BYTES } from './platform/route-props'
import { plainHttpBeyondThisMachine } from './platform/public-url'
import { readTlsFiles } from './platform/tls'
import { loadPageAssets } from './pages/assets'

// Moved to the CLI kit (demo and the missing-database message print it too); kept exported here.
export { selfCommand } from './cli/cli'

/**
 * Opens the database, refusing one this process cannot write (a read-only SQLite file or folder):
 * served, it would answer reads and fail every write. The check's write is rolled back.
 */
function writableDatabase(path: string): ReturnType<typeof openDatabase> {
  let db: ReturnType<typeof openDatabase> | undefined
  try {
    db = openDatabase(path)
    if (db.engine === 'sqlite') {
      // A write that changes nothing, rolled back: SQLite takes the lock even on a file it cannot write.
      const { user_version: version } = db.$client.query<{ user_version: number }, []>('PRAGMA user_version').get()!
      db.$client.exec('BEGIN IMMEDIATE')
      try { db.$client.exec(`PRAGMA user_version = ${version}`) } finally { db.$client.exec('ROLLBACK') }
    }
    return db
  } catch (err) {
    const message = (err as Error).message
    if (!/readonly|read-only|unable to open/i.test(message)) throw err
    try { db?.$client.close() } catch { /* closing what could not be used */ }
    throw new Error(`cannot write to the database ${path} (${message}): check that this user may write the file and its folder`)
  }
}

/** Another process already listens on the port `serve` was given; main prints it and exits 1. */
export class PortInUseError extends Error {}

/**
 * Runs `towline serve`: migrates, creates the default account on an empty database, listens,
 * and shuts down gracefully on SIGTERM/SIGINT (drain requests, stop background work,
 * checkpoint the WAL, exit 0). `extra.pages` mounts more route plugins (a test's fixture pages).
 */
export async function serve(given: Config, clock: Clock = systemClock, extra: { pages?: AppDeps['pages'] } = {}): Promise<void> {
  const logger = createLogger(given.logLevel)
  // A certificate that cannot be used stops serve before it binds the port or opens the database.
  const tls = given.tls ? readTlsFiles(given.tls.certFile, given.tls.keyFile) : null
  // Listen before touching the database: a second serve started by mistake on a busy port must
  // not migrate, nor send webhooks and texts from, a database another server is using. Nothing
  // can reach `handle` before it is set: everything up to that assignment is synchronous.
  let handle: ((req: Request, server: Bun.Server<undefined>) => Response | Promise<Response>) | undefined
  const server = listen(given, tls, (req, srv) => handle!(req, srv))
  const scheme = tls ? 'https' : 'http'
  // The default public URL names the port bound, which --port 0 leaves to the system.
  const config = given.publicUrlIsDefault ? { ...given, publicUrl: `${scheme}://localhost:${server.port}` } : given
  // Run from source, the pages' browser code is built now, on another thread, while the
  // database opens (pages/assets.ts); requests wait for it (createHandler).
  const assets = loadPageAssets()
  assets.catch(() => {})
  const loosened = restrictToOwner(config.dbPath)
  if (loosened.length) logger.warn({ files: loosened }, 'database files were readable by other users; made them owner-only')
  const keyFile = restrictKeyToOwner(given.linkKeyFile)
  if (keyFile === 'changed') logger.warn({ file: given.linkKeyFile }, 'the link key file was readable by other users; made it owner-only')
  if (keyFile === 'readable') logger.warn({ file: given.linkKeyFile }, 'the link key file is readable by other users, and this user may not change that: with a copy of the database it opens every job link (chmod 600 it)')
  checkLinkKeyPath(config.linkKeyFile, config.dbPath)
  const db = writableDatabase(config.dbPath)
  const opened = openLinkKey(db, config.linkKeyFile)
  const { key } = opened
  const applied = migrateWithKey(config.linkKeyFile, opened, () => migrateDatabase(db, { linkKey: () => key }))
  recordLinkKey(db, config.linkKeyFile, opened, clock.now())
  if (opened.created) logger.info({ file: config.linkKeyFile }, 'created the link key (keep it with the database: job links are sealed with it)')
  const links = { publicUrl: config.publicUrl, key }
  if (applied.length) logger.info({ applied }, 'migrations applied')
  const filled = fillSearchText(db)
  if (filled) logger.info({ jobs: filled }, 'filled in the jobs list search text of jobs written before it existed')
  const { account, created } = ensureDefaultAccount(db, clock)
  if (created) logger.info({ account_id: account.id }, 'created the default account and site')

  let draining = false
  // Several instances on one PostgreSQL database share each key's limit through the database.
  const limits = { read: config.rateLimitReads, write: config.rateLimitWrites }
  const limiter = limiterFor(db, clock, limits)
  const sharedLimiter = limiter instanceof SharedRateLimiter ? limiter : undefined
  const webhookSend = { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate }
  const bus = new JobEventBus(db, logger)
  const { fetch, ready } = createHandler({ db, clock, config, links, logger, limiter, bus, isDraining: () => draining, webhookSend, pages: extra.pages })
  handle = fetch
  try {
    await assets
    handle = ready
  } catch (err) {
    // Only from source: web/ does not build. Serving pages without their scripts would be worse than not starting.
    await server.stop(true)
    closeDatabase(db)
    throw err
  }
  // WAL checkpoints (copying the log into the file, and its fsync) run on a thread of their own.
  const checkpointer = startCheckpointer(db, logger)
  const background = startBackgroundWork({ db, clock, config, logger, webhookSend, links, bus, sharedLimiter })
  const where = `${scheme}://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${server.port}`
  logger.info({ url: where, host: config.host, port: server.port, tls: tls !== null, public_url: config.publicUrl, db: describeDatabase(config.dbPath), version: VERSION }, 'listening')
  // Browsers give a page the phone's position and camera only over https (or on this machine).
  const insecure = plainHttpBeyondThisMachine(config.publicUrl)
    ? `the public URL ${config.publicUrl} is plain http on a host other than this machine: phones share their position and camera only over https; serve HTTPS (--tls-cert, --tls-key) or put a TLS proxy in front and set an https TOWLINE_PUBLIC_URL`
    : null
  if (insecure) logger.warn({ public_url: config.publicUrl }, insecure)
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    draining = true
    logger.info({ signal }, 'shutting down')
    const hardKill = setTimeout(() => process.exit(1), 15_000)
    // Finish in-flight requests (capped), then cut anything long-lived.
    await Promise.race([server.stop(false), Bun.sleep(8_000)])
    await server.stop(true)
    await Bun.sleep(50)
    // Deliveries in flight get a moment to finish; the rest stay pending and go out after restart.
    await background.stop(3_000)
    await checkpointer?.stop()
    try { closeDatabase(db) } catch (err) { logger.error({ err }, 'closing the database failed') }
    logger.info('shutdown complete')
    logger.flush()
    clearTimeout(hardKill)
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  // The banner last, once the signal handlers are in: a supervisor that stops the server as soon
  // as it reads "listening" gets a graceful shutdown, never the default action of SIGTERM (exit 143).
  // One write, so a supervisor (or test) that sees "listening" has seen the whole banner.
  // The pages' links name the public URL: the one address whose Origin the dashboard's forms accept.
  // Any live key of any account (a demo database's keys are its demo account's, not the default one's).
  const hint = !db.$client.query('SELECT 1 AS one FROM api_keys WHERE revoked_at IS NULL LIMIT 1').get()
    ? `No API key yet. Create one (it is shown once):\n  ${commandFor(config, 'keys create')} --name my-integration --scopes jobs:read,jobs:write\n`
    : ''
  const ownerHint = hasActiveUser(db)
    ? ''
    : `No dashboard login yet. Make the first owner (the password is printed once):\n  ${commandFor(config, 'users create')} --email you@example.com --role owner\nthen sign in at ${config.publicUrl}/login\n`
  process.stderr.write(`${insecure ? `warning: ${insecure}\n` : ''}${ownerHint}${hint}Dashboard: ${config.publicUrl}/login\nAPI reference: ${config.publicUrl}/api/v1/docs\nTowline ${VERSION} listening on ${where} (database ${describeDatabase(config.dbPath)})\n`)
}

/**
 * Binds the port (HTTPS with `tls`) without SO_REUSEPORT (Bun's default on Linux), so a port in use is refused
 * instead of shared with another server (the kernel would split connections between the two).
 */
function listen(config: Config, tls: { cert: string; key: string } | null, fetch: (req: Request, server: Bun.Server<undefined>) => Response | Promise<Response>) {
  try {
    return Bun.serve({
      port: config.port,
      hostname: config.host,
      reusePort: false,
      ...(tls ? { tls } : {}),
      // Each route caps its own body while reading (route-props.ts); this is a backstop only.
      maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
      // A connection silent this long is closed; the live streams send heartbeats well inside it (pages/sse.ts).
      idleTimeout: config.idleTimeoutS,
      development: false,
      fetch,
    })
  } catch (err) {
    const where = `${config.host}:${config.port}`
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new PortInUseError(`port ${config.port} on ${config.host} is already in use (another towline?); stop it or choose another port with --port or TOWLINE_PORT`)
    }
    throw new PortInUseError(`cannot listen on ${where}: ${(err as Error).message}`)
  }
}

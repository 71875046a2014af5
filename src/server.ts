import type { Config } from './config'
import { openDatabase, closeDatabase } from './db/client'
import { migrateDatabase } from './db/migrate'
import { openLinkKey } from './db/link-key'
import { ensureDefaultAccount } from './accounts/create-account'
import { listKeys } from './accounts/account.queries'
import { createHandler } from './app'
import { systemClock, type Clock } from './platform/clock'
import { createLogger } from './platform/log'
import { RateLimiter } from './platform/rate-limit'
import { VERSION } from './version'
import { startBackgroundWork } from './background'

/** How an operator runs a command of this very program (binary, bunx or source). */
export function selfCommand(): string {
  const compiled = import.meta.dir.startsWith('/$bunfs') || import.meta.dir.startsWith('B:/~BUN')
  if (compiled) return process.execPath
  return process.argv[1]?.endsWith('bin/towline.ts') ? 'bunx towline' : 'npm run towline --'
}

/**
 * Runs `towline serve`: migrates, creates the default account on an empty database, listens,
 * and shuts down gracefully on SIGTERM/SIGINT (drain requests, stop background work,
 * checkpoint the WAL, exit 0).
 */
export async function serve(config: Config, clock: Clock = systemClock): Promise<void> {
  const logger = createLogger(config.logLevel)
  const db = openDatabase(config.dbPath)
  const { key, created: keyCreated } = openLinkKey(db, config.linkKeyFile)
  if (keyCreated) logger.info({ file: config.linkKeyFile }, 'created the link key (keep it with the database: job links are sealed with it)')
  const applied = migrateDatabase(db, { linkKey: () => key })
  const links = { publicUrl: config.publicUrl, key }
  if (applied.length) logger.info({ applied }, 'migrations applied')
  const { account, created } = ensureDefaultAccount(db, clock)
  if (created) logger.info({ account_id: account.id }, 'created the default account and site')

  let draining = false
  const limiter = new RateLimiter(clock, { read: config.rateLimitReads, write: config.rateLimitWrites })
  const webhookSend = { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate }
  const { fetch } = createHandler({ db, clock, config, links, logger, limiter, isDraining: () => draining, webhookSend })
  const background = startBackgroundWork({ db, clock, config, logger, webhookSend, links })
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // The API answers 413 in JSON above 256 KiB itself; this hard cap only stops absurd chunked uploads.
    maxRequestBodySize: 32 * 1024 * 1024,
    development: false,
    fetch,
  })
  const where = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${server.port}`
  logger.info({ url: where, host: config.host, port: server.port, db: config.dbPath, version: VERSION }, 'listening')
  const dbFlag = config.dbPath === './towline.db' ? '' : ` --db ${config.dbPath}`
  // One write, so a supervisor (or test) that sees "listening" has seen the whole banner.
  const hint = listKeys(db, account.id).length === 0
    ? `No API key yet. Create one (it is shown once):\n  ${selfCommand()} keys create${dbFlag} --name my-integration --scopes jobs:read,jobs:write\n`
    : ''
  process.stderr.write(`${hint}API reference: ${where}/api/v1/docs\nTowline ${VERSION} listening on ${where} (database ${config.dbPath})\n`)

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
    try { closeDatabase(db) } catch (err) { logger.error({ err }, 'closing the database failed') }
    logger.info('shutdown complete')
    logger.flush()
    clearTimeout(hardKill)
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

import type { Config } from './config'
import { openDatabase, closeDatabase } from './db/client'
import { migrateDatabase } from './db/migrate'
import { ensureDefaultAccount } from './accounts/create-account'
import { listKeys } from './accounts/account.queries'
import { createHandler } from './app'
import { systemClock, type Clock } from './platform/clock'
import { createLogger } from './platform/log'
import { RateLimiter } from './platform/rate-limit'
import { VERSION } from './version'
import { DeliveryScheduler } from './webhooks/scheduler'
import { TextSender } from './texts/text-sender'
import { logProvider, twilioProvider } from './texts/providers'
import { onTextsQueued } from './texts/queue-text'

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
  const applied = migrateDatabase(db)
  if (applied.length) logger.info({ applied }, 'migrations applied')
  const { account, created } = ensureDefaultAccount(db, clock)
  if (created) logger.info({ account_id: account.id }, 'created the default account and site')

  let draining = false
  const limiter = new RateLimiter(clock, { read: config.rateLimitReads, write: config.rateLimitWrites })
  const webhookSend = { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate }
  const { fetch } = createHandler({ db, clock, config, logger, limiter, isDraining: () => draining, webhookSend })
  const scheduler = new DeliveryScheduler({ db, clock, logger, schedule: config.webhookRetryScheduleMs, send: webhookSend })
  scheduler.start()
  const provider = config.smsProvider === 'twilio'
    ? twilioProvider({ ...config.twilio, statusCallbackUrl: `${config.publicUrl}/sms/twilio/status` })
    : logProvider(logger)
  const texts = new TextSender({ db, clock, logger, provider, retryMs: config.smsRetryScheduleMs })
  onTextsQueued(() => texts.wake())
  void texts.start().catch((err) => logger.error({ err }, 'text sender failed to start'))
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // Each route caps its own body while reading (readBody; 256 KiB at most today); this is a backstop.
    maxRequestBodySize: 1024 * 1024,
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
    await scheduler.stop(3_000)
    await texts.stop(3_000)
    try { closeDatabase(db) } catch (err) { logger.error({ err }, 'closing the database failed') }
    logger.info('shutdown complete')
    logger.flush()
    clearTimeout(hardKill)
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

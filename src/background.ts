import type { Config } from './config'
import type { Db } from './db/client'
import { watchOtherWriters } from './db/other-writers'
import type { Clock } from './platform/clock'
import type { Logger } from './platform/log'
import { logProvider, twilioProvider, type SmsProvider } from './texts/providers'
import { onTextsQueued } from './texts/queue-text'
import { TextSender } from './texts/text-sender'
import { pruneWebhookHistory } from './webhooks/prune-history'
import { pruneFixes } from './units/position-history'
import { DeliveryScheduler } from './webhooks/scheduler'
import { endpointsChanged } from './webhooks/fan-out'
import type { SendSettings } from './webhooks/send-attempt'
import type { JobLinks } from './jobs/job-links'
import type { JobEventBus } from './jobs/job-event-bus'

export interface BackgroundDeps {
  db: Db
  clock: Clock
  config: Config
  logger: Logger
  webhookSend: Omit<SendSettings, 'signal'>
  /** The public URL and key job links are made with (payloads and texts store them sealed). */
  links: JobLinks
  /** The post-commit bus: told of other processes' commits too. */
  bus?: JobEventBus
  /** The text provider (default: from the settings). */
  provider?: SmsProvider
  /** How often to look for other processes' commits (1 s). */
  watchMs?: number
  /** How often to prune webhook history (10 min; the first run a minute after start). */
  pruneEveryMs?: number
  /** The shared rate-limit buckets (PostgreSQL), whose full ones are pruned with the history. */
  sharedLimiter?: { pruneFull(): number }
}

/**
 * Starts the work `towline serve` does besides answering requests: the webhook scheduler, the
 * text sender, a watch for commits of other processes (a CLI archive, a second instance) that
 * wakes both and the event bus, and the pruning of old webhook history. Returns them and a stop function.
 */
export function startBackgroundWork(deps: BackgroundDeps) {
  const { db, clock, config, logger, links } = deps
  const scheduler = new DeliveryScheduler({ db, clock, logger, schedule: config.webhookRetryScheduleMs, send: deps.webhookSend, links })
  scheduler.start()
  const provider = deps.provider ?? (config.smsProvider === 'twilio'
    ? twilioProvider({ ...config.twilio, statusCallbackUrl: `${config.publicUrl}/sms/twilio/status` })
    : logProvider(logger))
  const texts = new TextSender({ db, clock, logger, provider, retryMs: config.smsRetryScheduleMs, maxAgeMs: config.smsMaxAgeMs, links })
  onTextsQueued(() => texts.wake())
  void texts.start()
  const stopWatch = watchOtherWriters(db, deps.watchMs ?? 1000, () => { endpointsChanged(); texts.wake(); deps.bus?.notify() },
    (err) => logger.error({ err }, 'could not read the database version; other processes\' writes wait for the next own write'))
  let pruning: Promise<unknown> = Promise.resolve()
  const prune = () => {
    pruning = pruneWebhookHistory(db, clock, config.webhookHistoryMs)
      .then((r) => { if (r.attempts + r.deliveries + r.events) logger.info(r, 'pruned webhook history') })
      .catch((err) => logger.error({ err }, 'pruning webhook history failed; trying again next round'))
      .then(() => {
        try {
          const fixes = pruneFixes(db, clock.now(), config.positionHistoryMs)
          if (fixes) logger.info({ fixes }, 'pruned position history')
          deps.sharedLimiter?.pruneFull()
        } catch (err) {
          logger.error({ err }, 'pruning position history failed; trying again next round')
        }
      })
  }
  const firstPrune = setTimeout(prune, 60_000)
  const pruneTimer = setInterval(prune, deps.pruneEveryMs ?? 600_000)
  return {
    scheduler,
    texts,
    /** Stops everything, giving work in flight up to `graceMs`. */
    async stop(graceMs: number) {
      stopWatch()
      clearTimeout(firstPrune)
      clearInterval(pruneTimer)
      onTextsQueued(() => {})
      await Promise.all([scheduler.stop(graceMs), texts.stop(graceMs), pruning])
    },
  }
}

/** Every table, re-exported for drizzle-kit and for queries. */
export * from '../accounts/account.table'
export * from '../jobs/job.table'
export * from '../units/unit.table'
export * from '../services/service.table'
export * from '../texts/text.table'
export * from '../idempotency/idempotency.table'
export * from '../webhooks/webhook.table'
export * from '../texts/consent.table'

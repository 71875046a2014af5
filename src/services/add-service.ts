import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { newId } from '../platform/ids'
import { services, type Rate } from './service.table'

/** The unit each rate kind is charged by. */
export const RATE_UNITS: Record<Rate['kind'], Rate['unit']> = { hook: 'job', flat: 'job', per_mile: 'mile', per_hour: 'hour', storage_per_day: 'day' }

/** Adds a service with its rate card. */
export function addService(db: Db, clock: Clock, input: { accountId: string; name: string; serviceType: string; rates: { kind: Rate['kind']; amount_cents: number }[] }) {
  const now = clock.now()
  const row = {
    id: newId('svc', now), accountId: input.accountId, name: input.name.trim(), serviceType: input.serviceType.trim(),
    rates: input.rates.map((r) => ({ kind: r.kind, amount_cents: r.amount_cents, unit: RATE_UNITS[r.kind] })), active: true, createdAt: now,
  }
  db.insert(services).values(row).run()
  return row
}

import { InputError } from '../platform/errors'
import { eq } from 'drizzle-orm'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { newId } from '../platform/ids'
import { services, type Rate } from './service.table'
import { nameProblem } from '../platform/chars'

/** The unit each rate kind is charged by. */
export const RATE_UNITS: Record<Rate['kind'], Rate['unit']> = { hook: 'job', flat: 'job', per_mile: 'mile', per_hour: 'hour', storage_per_day: 'day' }

/** A service that cannot be added as asked. */
export class ServiceInputError extends InputError {}

/** Reads `kind=amount` with the amount in dollars and cents (`hook=95.00`, `per_mile=4.5`). */
export function parseRate(text: string): { kind: Rate['kind']; amount_cents: number } {
  const m = /^([a-z_]+)=(\d{1,7})(?:\.(\d{1,2}))?$/.exec(text.trim())
  if (!m) throw new ServiceInputError(`"${text}" is not KIND=AMOUNT (e.g. hook=95.00)`, 'rates')
  const kind = m[1] as Rate['kind']
  if (!(kind in RATE_UNITS)) throw new ServiceInputError(`"${m[1]}" is not a rate kind; kinds are ${Object.keys(RATE_UNITS).join(', ')}`, 'rates')
  return { kind, amount_cents: Number(m[2]) * 100 + Number((m[3] ?? '0').padEnd(2, '0')) }
}

/** Adds a service with its rate card. */
export function addService(db: Db, clock: Clock, input: { accountId: string; name: string; serviceType: string; rates: { kind: Rate['kind']; amount_cents: number }[] }) {
  const name = input.name.trim()
  const serviceType = input.serviceType.trim()
  const problem = nameProblem(name, 100)
  if (problem) throw new ServiceInputError(`a service's name ${problem}`, 'name')
  if (!/^[a-z0-9_]{1,64}$/.test(serviceType)) throw new ServiceInputError(`the type "${input.serviceType}" must be lowercase letters, digits and _ (e.g. flatbed)`)
  const kinds = input.rates.map((r) => r.kind)
  if (new Set(kinds).size !== kinds.length) throw new ServiceInputError('each rate kind may appear once', 'rates')
  const now = clock.now()
  const row = {
    id: newId('svc', now), accountId: input.accountId, name, serviceType,
    rates: input.rates.map((r) => ({ kind: r.kind, amount_cents: r.amount_cents, unit: RATE_UNITS[r.kind] })), active: true, createdAt: now,
  }
  db.insert(services).values(row).run()
  return row
}

/** Stops offering a service: it leaves GET /services. Returns it, or undefined if unknown. */
export function retireService(db: Db, id: string) {
  const svc = db.select().from(services).where(eq(services.id, id)).get()
  if (!svc) return undefined
  db.update(services).set({ active: false }).where(eq(services.id, id)).run()
  return svc
}

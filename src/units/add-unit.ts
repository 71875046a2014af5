import { nameProblem } from '../platform/chars'
import { InputError } from '../platform/errors'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { newId, randomBase62 } from '../platform/ids'
import { normalizePhone } from '../platform/phone'
import { units } from './unit.table'
import type { UnitRow } from './unit.queries'

/** A unit that cannot be added as asked (bad phone...). */
export class UnitInputError extends InputError {}

/**
 * Adds a unit (truck and driver), serving the given sites (none listed: every site of the account). It gets a device id that the driver enters in the Traccar
 * Client app (OsmAnd protocol) so their phone reports positions for this unit.
 */
export function addUnit(db: Db, clock: Clock, input: { accountId: string; name: string; driverName?: string; driverPhone?: string; deviceId?: string; siteIds?: string[] | null; country?: string }): UnitRow {
  const name = input.name.trim()
  const problem = nameProblem(name, 100)
  if (problem) throw new UnitInputError(`a unit's name ${problem}`, 'name')
  const driverProblem = input.driverName?.trim() ? nameProblem(input.driverName.trim(), 100) : null
  if (driverProblem) throw new UnitInputError(`the driver's name ${driverProblem}`, 'driver_name')
  let phone: string | null = null
  if (input.driverPhone?.trim()) {
    phone = normalizePhone(input.driverPhone, input.country ?? 'US')
    if (!phone) throw new UnitInputError(`"${input.driverPhone}" is not a phone number we can text; use the +country form`, 'driver_phone')
  }
  const now = clock.now()
  const row: UnitRow = {
    id: newId('unit', now), accountId: input.accountId, siteIds: input.siteIds?.length ? [...new Set(input.siteIds)] : null, name,
    driverName: input.driverName?.trim() || null, driverPhone: phone,
    deviceId: input.deviceId?.trim() || randomBase62(12), offDuty: false,
    lat: null, lng: null, accuracyM: null, heading: null, speedKph: null, positionAt: null,
    createdAt: now, updatedAt: now,
  }
  db.insert(units).values(row).run()
  return row
}

import { sqliteTable, text, integer, real, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { accounts } from '../accounts/account.table'

/** A truck and its driver, with the last position the driver's phone shared. */
export const units = sqliteTable('units', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  /** JSON array of the site ids the unit serves, or null for every site of the account. */
  siteIds: text('site_ids', { mode: 'json' }).$type<string[]>(),
  name: text('name').notNull(),
  driverName: text('driver_name'),
  driverPhone: text('driver_phone'),
  /** The OsmAnd / Traccar Client device identifier this unit's phone reports with. */
  deviceId: text('device_id').notNull(),
  offDuty: integer('off_duty', { mode: 'boolean' }).notNull().default(false),
  lat: real('lat'),
  lng: real('lng'),
  accuracyM: real('accuracy_m'),
  heading: real('heading'),
  speedKph: real('speed_kph'),
  positionAt: integer('position_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('units_account_idx').on(t.accountId, t.name), uniqueIndex('units_device_uq').on(t.deviceId)])

/**
 * The fixes a unit reported, thinned to one per POSITION_HISTORY_SPACING_MS of fix time and kept
 * TOWLINE_POSITION_HISTORY_DAYS (src/units/position-history.ts): what a GOA evidence pack reads
 * for the fix nearest the arrival. The units row keeps the newest fix for everything live.
 */
export const unitPositions = sqliteTable('unit_positions', {
  id: integer('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  unitId: text('unit_id').notNull().references(() => units.id),
  /** Epoch ms when the phone took the fix. */
  at: integer('at').notNull(),
  lat: real('lat').notNull(),
  lng: real('lng').notNull(),
  accuracyM: real('accuracy_m'),
  receivedAt: integer('received_at').notNull(),
}, (t) => [index('unit_positions_unit_at_idx').on(t.unitId, t.at)])

import { eq } from 'drizzle-orm'
import { inTransaction, type Db } from '../db/client'
import { createAccount } from '../accounts/create-account'
import { addUnit } from '../units/add-unit'
import { units } from '../units/unit.table'
import { addService } from '../services/add-service'
import { createJob } from '../jobs/create-job'
import { updateJob } from '../jobs/update-job'
import { assignJob } from '../jobs/assign-job'
import { reopenJob } from '../jobs/reopen-job'
import { addNote } from '../jobs/add-note'
import type { JobLinks } from '../jobs/job-links'
import { createContextFactory } from '../operations/context-factory'
import type { JobStatus } from '../jobs/job-status'
import type { Clock } from '../platform/clock'
import { createCommercialAccount } from '../commercial-accounts/create-commercial-account'
import type { CommercialAccountInput } from '../commercial-accounts/commercial-account.model'

/** A clock the demo moves forward as its day of work unfolds. */
class DemoClock implements Clock {
  constructor(public ms: number) {}
  now = () => this.ms
  pass(minutes: number) { this.ms += Math.round(minutes * 60_000) }
}

const DRIVERS = [
  ['Truck 1 - Flatbed', 'Marco Diaz', '+15035550101', 45.5231, -122.6765],
  ['Truck 2 - Flatbed', 'Priya Shah', '+15035550102', 45.4871, -122.8037],
  ['Truck 3 - Wheel lift', 'Dale Okafor', '+15035550103', 45.5646, -122.6612],
  ['Truck 4 - Heavy duty', 'Rosa Lindqvist', '+15035550104', 45.4312, -122.7715],
  ['Service van 5', 'Kenji Watanabe', '+15035550105', 45.5118, -122.5587],
] as const

const SERVICES: [string, string, [string, number][]][] = [
  ['Light-duty tow', 'wheel_lift', [['hook', 9500], ['per_mile', 450]]],
  ['Flatbed tow', 'flatbed', [['hook', 12500], ['per_mile', 550]]],
  ['Heavy-duty tow', 'heavy_duty', [['hook', 35000], ['per_mile', 1200], ['per_hour', 18000]]],
  ['Winch-out', 'winch_out', [['flat', 15000], ['per_hour', 9000]]],
  ['Lockout', 'lockout', [['flat', 7500]]],
  ['Jump start', 'jump_start', [['flat', 6500]]],
  ['Tire change', 'tire_change', [['flat', 8500]]],
  ['Fuel delivery', 'fuel_delivery', [['flat', 7000]]],
  ['Vehicle storage', 'storage', [['storage_per_day', 4500]]],
]

const CALLS = [
  ['Ann Lee', 'I-5 N at exit 299B, right shoulder', 'Honda', 'Civic', '2019', 'fwd', 'flatbed', 'motor_club'],
  ['Victor Moreau', '1520 SE Hawthorne Blvd, Portland', 'Ford', 'F-150', '2016', '4wd', 'wheel_lift', 'cash'],
  ['Grace Kim', 'Costco parking lot, 4849 NE 138th Ave', 'Toyota', 'RAV4', '2021', 'awd', 'jump_start', 'motor_club'],
  ['Samuel Ortiz', 'US-26 W mile 70, eastbound', 'Subaru', 'Outback', '2018', 'awd', 'flatbed', 'motor_club'],
  ['Hannah Becker', '820 NW 23rd Ave (garage level 2)', 'BMW', '330i', '2020', 'rwd', 'flatbed', 'fleet'],
  ['Omar Haddad', 'I-205 S near Airport Way', 'Chevrolet', 'Malibu', '2015', 'fwd', 'tire_change', 'motor_club'],
  ['Lucia Romano', '3400 SE Division St', 'Nissan', 'Altima', '2017', 'fwd', 'lockout', 'cash'],
  ['Peter Novak', 'Sauvie Island Rd ditch, mile 3', 'Jeep', 'Wrangler', '2012', '4wd', 'winch_out', 'cash'],
  ['Aisha Bello', 'Lloyd Center lot E', 'Kia', 'Soul', '2019', 'fwd', 'jump_start', 'motor_club'],
  ['Tom Fraser', 'I-84 E at 82nd Ave', 'Freightliner', 'Cascadia', '2014', 'rwd', 'heavy_duty', 'fleet'],
  ['Mei Chen', '2000 NE Broadway (police rotation)', 'Honda', 'Accord', '2011', 'fwd', 'wheel_lift', 'police'],
  ['Diego Alvarez', 'OR-217 S at Greenburg Rd', 'Tesla', 'Model 3', '2022', 'awd', 'flatbed', 'motor_club'],
  ['Nora Walsh', '5th & Oak parking garage', 'Volkswagen', 'Jetta', '2016', 'fwd', 'fuel_delivery', 'cash'],
  ['Ivan Petrov', 'Fred Meyer, 3805 SE Hawthorne', 'Mazda', 'CX-5', '2020', 'awd', 'tire_change', 'motor_club'],
  ['Zoe Adams', 'I-5 S at Terwilliger curves', 'Hyundai', 'Elantra', '2018', 'fwd', 'flatbed', 'motor_club'],
  ['Kwame Mensah', '7600 N Lombard St', 'Dodge', 'Ram 2500', '2013', '4wd', 'wheel_lift', 'cash'],
] as const

/** The demo's commercial accounts directory, by the payer_type of the jobs done for each. */
const DIRECTORY: Record<string, CommercialAccountInput> = {
  motor_club: {
    name: 'Cascade Motor Club', kind: 'motor_club',
    contacts: [
      { name: 'Roadside dispatch desk', role: 'dispatch, 24/7', phone: '+15035550140', email: 'dispatch@cascade-motor.example' },
      { name: 'Dana Whitfield', role: 'provider relations', phone: '+15035550141', email: 'dana.whitfield@cascade-motor.example' },
    ],
    rates: 'Light duty hook 85.00, per mile 4.00 after 5 miles; flatbed hook 110.00. GOA pays 45.00 with photo proof.',
    billing_address: 'Cascade Motor Club, Provider Payments, PO Box 4100, Portland OR 97208',
    internal_notes: 'Submit invoices within 30 days with the call number; they pay net 45.',
  },
  police: {
    name: 'Portland Police Bureau (rotation)', kind: 'police',
    contacts: [{ name: 'Non-emergency dispatch', role: 'tow requests', phone: '+15035550160', email: null }],
    rates: 'City rotation schedule: impound tow 152.00, storage 32.00 a day.',
    billing_address: 'City of Portland, Accounts Payable, 1221 SW 4th Ave, Portland OR 97204',
    internal_notes: 'Hold releases until the officer signs off; keep the case number on every job.',
  },
  fleet: {
    name: 'Columbia Freight Lines', kind: 'fleet',
    contacts: [{ name: 'Maria Santos', role: 'fleet manager', phone: '+15035550170', email: 'fleet@columbia-freight.example' }],
    rates: 'Heavy duty hook 325.00, per hour 175.00, 10% fleet discount.',
    billing_address: 'Columbia Freight Lines, 9000 N Rivergate Blvd, Portland OR 97203',
    internal_notes: 'PO number required on every invoice.',
  },
}

/** How far each demo job gets through the day (every status appears). */
const PLAN: (JobStatus | 'reopened')[] = [
  'completed', 'completed', 'completed', 'cancelled', 'goa', 'reopened', 'at_destination', 'towing', 'on_scene', 'en_route', 'dispatched', 'dispatched', 'confirmed', 'confirmed', 'pending', 'completed',
]
const ROAD: JobStatus[] = ['dispatched', 'en_route', 'on_scene', 'towing', 'at_destination', 'completed']

/**
 * Loads a realistic demo account: five units with drivers and positions, services with a rate
 * card, and a day of jobs in every status, all written through the real operations (so the
 * timeline, milestones and outbox look exactly as in real use). Customers gave no text
 * consent, so no text would leave the machine even with Twilio configured.
 */
export function loadDemo(db: Db, links: JobLinks, opts: { name?: string; nowMs?: number } = {}) {
  // One transaction: a running server never sees half a demo, nor sends its texts.
  return inTransaction(db, () => loadDemoRows(db, links, opts))
}

function loadDemoRows(db: Db, links: JobLinks, opts: { name?: string; nowMs?: number }) {
  const end = opts.nowMs ?? Date.now()
  const clock = new DemoClock(end - 10 * 3_600_000)
  const { account, site } = createAccount(db, clock, { name: opts.name ?? 'Rose City Towing (demo)', siteName: 'Northeast yard' })
  const fleet = DRIVERS.map(([name, driverName, phone, lat, lng]) => {
    const u = addUnit(db, clock, { accountId: account.id, name, driverName, driverPhone: phone })
    db.update(units).set({ lat, lng, accuracyM: 8, heading: 90, speedKph: 0, positionAt: end - 60_000 }).where(eq(units.id, u.id)).run()
    return u
  })
  for (const [name, type, rates] of SERVICES) addService(db, clock, { accountId: account.id, name, serviceType: type, rates: rates.map(([kind, amount_cents]) => ({ kind: kind as any, amount_cents })) })

  const ctx = createContextFactory({ db, clock, links }).forDispatcher({ userId: 'demo', role: 'owner', accountId: account.id })
  const directory = new Map(Object.entries(DIRECTORY).map(([payer, entry]) => [payer, createCommercialAccount(ctx, entry).id]))
  const jobIds: string[] = []
  PLAN.forEach((target, i) => {
    const [customer, location, make, model, year, drive, service, payer] = CALLS[i % CALLS.length]!
    // Calls 35 minutes apart, the last one's whole story (at most 72 minutes: reopened) over before now.
    clock.ms = end - (PLAN.length - i) * 35 * 60_000 - 75 * 60_000
    const job = createJob(ctx, {
      external_ref: `DEMO-${1001 + i}`, source: payer === 'motor_club' ? 'motor_club' : payer === 'police' ? 'police_rotation' : 'phone',
      payer_type: payer, service_type: service, urgency: i % 3 === 0 ? 'urgent' : 'normal',
      customer: { name: customer, phone: `+1503555${String(1100 + i).padStart(4, '0')}`, sms_consent: false },
      vehicle: { year, make, model, drive_type: drive }, pickup: { location }, destination: i % 2 ? 'Rose City Towing yard, 4400 NE Columbia Blvd' : 'Customer\'s home address',
      status: target === 'pending' ? 'pending' : 'confirmed',
      commercial_account_id: directory.get(payer) ?? null,
    })
    jobIds.push(job.id)
    if (target === 'pending' || target === 'confirmed') return
    clock.pass(4)
    assignJob(ctx, job.id, fleet[i % fleet.length]!.id)
    if (target === 'cancelled') { clock.pass(6); updateJob(ctx, job.id, { status: 'cancelled', cancel_reason: 'Customer got a ride and will call back tomorrow' }); return }
    const last = target === 'goa' ? 'on_scene' : target === 'reopened' ? 'completed' : target
    for (const status of ROAD.slice(1, ROAD.indexOf(last as JobStatus) + 1)) {
      clock.pass(9)
      updateJob(ctx, job.id, { status, ...(status === 'en_route' ? { eta_at: new Date(clock.ms + 25 * 60_000).toISOString() } : {}) })
    }
    if (target === 'goa') { clock.pass(12); updateJob(ctx, job.id, { status: 'goa', cancel_reason: 'Vehicle not at location; customer unreachable' }) }
    if (last === 'completed') { clock.pass(2); updateJob(ctx, job.id, { final_price_cents: 12500 + i * 450, payment_method: payer === 'cash' ? 'card' : 'motor_club_account' }) }
    if (target === 'reopened') {
      clock.pass(20)
      reopenJob(ctx, job.id, 'Customer called: car would not start after drop-off')
      clock.pass(1)
      addNote(ctx, job.id, { text: 'Send the same driver back with the jump pack.', customer_visible: false })
    }
  })
  if (clock.ms > end) throw new Error(`the demo's day ran ${Math.round((clock.ms - end) / 60_000)} minutes past now`)
  // The demo's numbers are made up: its texts are recorded (to be read on each job) but never sent.
  db.$client.query("UPDATE texts SET status = 'skipped', skip_reason = 'demo', next_attempt_at = NULL WHERE account_id = ? AND status = 'queued'").run(account.id)
  return { account, site, units: fleet.length, services: SERVICES.length, jobs: jobIds.length, commercialAccounts: directory.size }
}

import { usableTimeZone } from '../platform/time-zone'
import { requirePermission } from '../accounts/actor'
import { findAccountById } from '../accounts/account.queries'
import type { Db } from '../db/client'
import { findJobOrThrow } from '../jobs/job.queries'
import type { JobRow } from '../jobs/job.view'
import type { OperationContext } from '../operations/operation-context'
import { findCustomerInvoiceRow, findInvoiceOrThrow, listPaymentRows } from './invoice.queries'
import { invoiceView, type InvoiceRow, type InvoiceView } from './invoice.view'

/** What a printed invoice says: the company, the invoice, and the job it was raised against. */
export interface InvoiceDocument {
  /** The company issuing it; its time zone dates the invoice and its payments. */
  company: { name: string; phone: string | null; timeZone: string }
  invoice: InvoiceView
  job: {
    id: string
    external_ref: string | null
    customer_name: string
    vehicle: { year: string | null; make: string | null; model: string | null; color: string | null; plate: string | null }
    pickup: string
    destination: string | null
  }
}

function documentOf(db: Db, job: JobRow, inv: InvoiceRow): InvoiceDocument {
  const account = findAccountById(db, job.accountId)
  const v = job.vehicle
  return {
    company: { name: account?.name ?? '', phone: account?.phone ?? null, timeZone: usableTimeZone(account?.timeZone ?? 'UTC') },
    invoice: invoiceView(inv, listPaymentRows(db, inv.id)),
    job: {
      id: job.id, external_ref: job.externalRef, customer_name: job.customer.name,
      vehicle: { year: v.year ?? null, make: v.make ?? null, model: v.model ?? null, color: v.color ?? null, plate: v.plate ?? null },
      pickup: job.pickup.location, destination: job.destination,
    },
  }
}

/** One invoice as its printable page shows it (`/invoices/{id}`), for a user of its account; 404 for anyone else's. */
export function getInvoice(ctx: OperationContext, invoiceId: string): InvoiceDocument {
  requirePermission(ctx.actor, 'jobs:read')
  const inv = findInvoiceOrThrow(ctx.db, ctx.scope, invoiceId)
  return documentOf(ctx.db, findJobOrThrow(ctx.db, ctx.scope, inv.jobId), inv)
}

/**
 * The invoice a job's customer may read through their live tracking link (`/t/{token}/invoice`):
 * the latest issued one, else the latest paid one (a receipt), or null. Void and written-off
 * invoices are not shown to customers.
 */
export function readCustomerInvoice(db: Db, job: JobRow): InvoiceDocument | null {
  const inv = findCustomerInvoiceRow(db, job.id)
  return inv ? documentOf(db, job, inv) : null
}

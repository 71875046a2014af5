import { requirePermission } from '../accounts/actor'
import type { OperationContext } from '../operations/operation-context'
import { readJobInvoices } from './invoice.queries'
import type { InvoiceView } from './invoice.view'

/** The invoices of a job the actor may see (404 otherwise), oldest first, each with its payments: the job page's Invoices section. */
export function listJobInvoices(ctx: OperationContext, jobId: string): InvoiceView[] {
  requirePermission(ctx.actor, 'jobs:read')
  return readJobInvoices(ctx.db, ctx.scope, jobId)
}

import { requirePermission } from '../accounts/actor'
import { findJobOrThrow } from '../jobs/job.queries'
import type { JobRow } from '../jobs/job.view'
import type { OperationContext } from '../operations/operation-context'
import { amountText, dollarsText } from '../platform/money'
import type { Rate } from '../services/service.table'

/** A line of a draft invoice as its form holds it: text as typed, the amount in dollars and cents. */
export interface DraftLine { description: string; amount: string }

const PER: Record<Rate['kind'], string> = { hook: 'Hook-up', flat: 'Flat rate', per_mile: 'Mileage', per_hour: 'Labor', storage_per_day: 'Storage' }
const UNIT: Record<Rate['unit'], string> = { job: 'job', mile: 'mile', hour: 'hour', day: 'day' }

/** The job a draft invoice is for, as its page names it. */
export interface DraftJob { id: string; title: string; archived: boolean }

/**
 * The draft of a new invoice (the job page's **Create invoice**) for a job the actor may see
 * (404 otherwise): the job, and the lines it starts from: the job's final price when it has
 * one, else its quote, else the rate card of the account's service whose
 * service_type is the job's (a per-job rate with its amount; a per-mile, per-hour or per-day
 * rate with its price in the description and the amount left for the dispatcher to work out),
 * else one empty line. Nothing is saved: the draft lives in the form until **Issue invoice**.
 */
export function draftInvoice(ctx: OperationContext, jobId: string): { job: DraftJob; lines: DraftLine[] } {
  requirePermission(ctx.actor, 'jobs:read')
  const job = findJobOrThrow(ctx.db, ctx.scope, jobId)
  const title = job.externalRef ? `${job.customer.name} · ${job.externalRef}` : job.customer.name
  return { job: { id: job.id, title, archived: job.archivedAt !== null }, lines: linesOf(ctx, job) }
}

/** The lines the draft starts from (see draftInvoice). */
function linesOf(ctx: OperationContext, job: JobRow): DraftLine[] {
  const what = job.serviceType ? `${job.serviceType.replace(/_/g, ' ')} service` : 'Towing service'
  const name = what.charAt(0).toUpperCase() + what.slice(1)
  if (job.finalPriceCents !== null && job.finalPriceCents > 0) return [{ description: name, amount: amountText(job.finalPriceCents) }]
  if (job.quoteCents !== null && job.quoteCents > 0) return [{ description: `${name} (as quoted)`, amount: amountText(job.quoteCents) }]
  if (job.serviceType) {
    const service = ctx.db.$client.query<{ name: string; rates: string }, [string, string]>(
      'SELECT name, rates FROM services WHERE account_id = ? AND service_type = ? AND active = 1 ORDER BY created_at, id LIMIT 1',
    ).get(job.accountId, job.serviceType)
    const rates = service ? (JSON.parse(service.rates) as Rate[]).filter((r) => r.amount_cents > 0) : []
    if (service && rates.length) {
      return rates.map((r) => r.unit === 'job'
        ? { description: `${service.name}: ${PER[r.kind]}`, amount: amountText(r.amount_cents) }
        : { description: `${service.name}: ${PER[r.kind]}, ${dollarsText(r.amount_cents)} per ${UNIT[r.unit]}`, amount: '' })
    }
  }
  return [{ description: '', amount: '' }]
}

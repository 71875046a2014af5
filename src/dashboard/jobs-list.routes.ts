import { Elysia } from 'elysia'
import { blankForm, type FormState } from '../pages/form'
import { AppError } from '../platform/errors'
import { searchJobs } from '../jobs/search-jobs'
import type { SessionPlugin } from '../users/session.plugin'
import { jobsListBody, SEARCH_LABELS, type JobsQuery } from './jobs-list.page'
import { dashboardPage } from './shell'

/** One query parameter as text: a repeated one counts once (its first value), anything else is empty. */
function one(value: unknown): string {
  if (Array.isArray(value)) return one(value[0])
  return typeof value === 'string' ? value : ''
}

/** The search as the query string carries it. */
function readQuery(query: Record<string, unknown>): JobsQuery {
  return { q: one(query.q), from: one(query.from), to: one(query.to), status: one(query.status), archived: one(query.archived) !== '', cursor: one(query.cursor) }
}

/** `/jobs`: the jobs list, every job of the account found by customer, phone, plate, reference, id, day and status. */
export function jobsListRoutes(session: SessionPlugin) {
  return new Elysia({ name: 'towline.jobs-list' }).use(session)
    .get('/jobs', ({ ctx, user, query }) => {
      const q = readQuery(query as Record<string, unknown>)
      const form = blankForm({ q: q.q, from: q.from, to: q.to, status: q.status, archived: q.archived ? 'on' : undefined })
      try {
        const page = searchJobs(ctx, { q: q.q, from: q.from, to: q.to, status: q.status, includeArchived: q.archived, cursor: q.cursor || undefined })
        return dashboardPage({ title: 'Jobs', user, active: 'jobs', body: jobsListBody(form, q, page, ctx.account.timeZone) })
      } catch (err) {
        if (!(err instanceof AppError) || err.errorCode !== 'validation_failed') throw err
        // Refused: each message beside its field, all of them in the summary, and no list.
        const fields = (err.details.fields ?? []) as { path: string; message: string }[]
        const refused: FormState = { ...form, errors: Object.fromEntries(fields.map((f) => [f.path, f.message])) }
        refused.alert = `The search was not run. ${fields.map((f) => `${SEARCH_LABELS[f.path] ?? f.path}: ${f.message}.`).join(' ')}`
        return dashboardPage({ title: 'Jobs', user, active: 'jobs', body: jobsListBody(refused, q, null, ctx.account.timeZone), status: 422 })
      }
    }, { signedIn: 'dispatcher' })
}

import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import type { AuthPlugin, Authorizer } from '../accounts/auth.plugin'
import { preRoutedJson } from '../platform/pre-routed'
import { requestInfo } from '../platform/request-info'
import { IdempotencyHeaders, idempotencyOwner, reply, withIdempotency } from '../idempotency/idempotency'
import { addNote } from './add-note'
import { assignJob } from './assign-job'
import { createJob } from './create-job'
import { AddNoteBody, AssignJobBody, CreateJobBody, Job, JobEvent, JobIdParams, ListJobsQuery, ListOf, Note, PageQuery, ReopenJobBody, UpdateJobBody } from './job.model'
import { getJob, getJobJson, listJobEvents, listJobs } from './list-jobs'
import { presentJob } from './present-job'
import { reopenJob } from './reopen-job'
import { unassignJob } from './unassign-job'
import { updateJob } from './update-job'

/**
 * The /jobs endpoints: translation between HTTP and the job operations; and GET /jobs/{id}
 * pre-routed (`preRoutedJob`): the read integrators poll and pages hammer, answered before
 * Elysia routes it with the same authorization, body, headers and errors as the route (a test
 * compares the two), without the router and hooks, which cost more than the read itself.
 */
export function jobRoutes(auth: AuthPlugin, deps: RouteDeps, authorize: Authorizer) {
  const links = deps.links
  const answer = preRoutedJson(deps.config.publicUrl)
  const preRoutedJob = (request: Request, id: string): Response => {
    const principal = authorize(request, '/api/v1/jobs/:id', 'jobs:read')
    return answer(request, getJobJson(deps.contexts.forKey(principal, requestInfo(request).requestId), id))
  }

  const routes = new Elysia({ prefix: '/api/v1' })
    .use(auth)
    .get('/jobs', ({ ctx, query }) => listJobs(ctx, query), {
      scope: 'jobs:read',
      query: ListJobsQuery,
      response: { 200: ListOf(Job) },
      detail: { operationId: 'listJobs', summary: 'List jobs', description: 'Newest first (created time, then id). Cursor-paged: pass next_cursor back as cursor while has_more is true. Filters combine.', tags: ['Jobs'] },
    })
    .post('/jobs', ({ ctx, body, headers, set }) => reply(set, withIdempotency(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: '/jobs', body },
      () => ({ status: 201, body: presentJob(deps.db, links, createJob(ctx, body)) }))), {
      scope: 'jobs:write',
      body: CreateJobBody,
      headers: IdempotencyHeaders,
      response: { 201: Job },
      detail: {
        operationId: 'createJob',
        summary: 'Create a job',
        description: "Creates a job as if a dispatcher had entered it, mints its tracking link and queues the customer's 'request received' text. Requires customer.name and pickup.location.",
        tags: ['Jobs'], 'x-error-codes': ['conflict', 'idempotency_key_reused'], 'x-success-description': 'The job was created.',
      },
    })
    .get('/jobs/:id', ({ ctx, params }) => getJob(ctx, params.id), {
      scope: 'jobs:read',
      params: JobIdParams,
      response: { 200: Job },
      detail: { operationId: 'getJob', summary: 'Get a job', description: 'One job with its unit, the unit\'s last position and the tracking link.', tags: ['Jobs'] },
    })
    .patch('/jobs/:id', ({ ctx, params, body }) => presentJob(deps.db, links, updateJob(ctx, params.id, body)), {
      scope: 'jobs:write',
      params: JobIdParams,
      body: UpdateJobBody,
      response: { 200: Job },
      detail: {
        operationId: 'updateJob',
        summary: 'Update a job',
        description: 'Changes writable fields. A status change goes through the transition rules, stamps its milestone and texts the customer. With expected_status the write is conditional. A status change plus other fields is two writes; if the second fails the error carries details.transition_applied. Idempotency-Key is ignored here: use expected_status to retry safely.',
        tags: ['Jobs'], 'x-error-codes': ['job_transition_refused', 'job_stale', 'job_reason_required', 'invalid_state'],
      },
    })
    .post('/jobs/:id/assign', ({ ctx, params, body, headers, set }) => reply(set, withIdempotency(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: `/jobs/${params.id}/assign`, body },
      () => ({ status: 200, body: presentJob(deps.db, links, assignJob(ctx, params.id, body.unit_id)) }))), {
      scope: 'jobs:write',
      params: JobIdParams,
      body: AssignJobBody,
      headers: IdempotencyHeaders,
      response: { 200: Job },
      detail: {
        operationId: 'assignJob', summary: 'Assign a unit',
        description: 'Hands the job to a unit: pending or confirmed jobs move to dispatched. The driver gets their job link. Assigning another unit reassigns. A unit_id that names no unit the key sees, or one not serving the job\'s site, is 422 on unit_id.',
        tags: ['Jobs'], 'x-error-codes': ['job_transition_refused', 'job_stale', 'invalid_state', 'idempotency_key_reused'],
      },
    })
    .delete('/jobs/:id/assign', ({ ctx, params }) => presentJob(deps.db, links, unassignJob(ctx, params.id)), {
      scope: 'jobs:write',
      params: JobIdParams,
      response: { 200: Job },
      detail: { operationId: 'unassignJob', summary: 'Unassign the unit', description: 'Takes the job off its unit and back to confirmed; the driver is told. A job without a unit is left as it is.', tags: ['Jobs'], 'x-error-codes': ['job_transition_refused', 'job_stale', 'invalid_state'] },
    })
    .post('/jobs/:id/notes', ({ ctx, params, body, headers, set }) => reply(set, withIdempotency(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: `/jobs/${params.id}/notes`, body },
      () => ({ status: 201, body: addNote(ctx, params.id, body) }))), {
      scope: 'jobs:write',
      params: JobIdParams,
      body: AddNoteBody,
      headers: IdempotencyHeaders,
      response: { 201: Note },
      detail: { operationId: 'addJobNote', summary: 'Add a note', description: 'Adds a note to the job\'s timeline (job.note_added); customer_visible notes show on the tracking page.', tags: ['Jobs'], 'x-error-codes': ['job_stale', 'invalid_state', 'idempotency_key_reused'], 'x-success-description': 'The note was added.' },
    })
    .post('/jobs/:id/reopen', ({ ctx, params, body, headers, set }) => reply(set, withIdempotency(deps, idempotencyOwner(ctx.actor), headers['idempotency-key'], { method: 'POST', path: `/jobs/${params.id}/reopen`, body },
      () => ({ status: 200, body: presentJob(deps.db, links, reopenJob(ctx, params.id, body.reason)) }))), {
      scope: 'jobs:write',
      params: JobIdParams,
      body: ReopenJobBody,
      headers: IdempotencyHeaders,
      response: { 200: Job },
      detail: {
        operationId: 'reopenJob',
        summary: 'Reopen a finished job',
        description: 'The only way out of completed, cancelled or goa: back to confirmed, reopen_count + 1, reopened_at set, cancel_reason and rating cleared. Emits job.reopened then job.status_changed.',
        tags: ['Jobs'], 'x-error-codes': ['job_transition_refused', 'job_stale', 'job_reason_required', 'invalid_state', 'idempotency_key_reused'],
      },
    })
    .get('/jobs/:id/events', ({ ctx, params, query }) => listJobEvents(ctx, params.id, query), {
      scope: 'jobs:read',
      params: JobIdParams,
      query: PageQuery,
      response: { 200: ListOf(JobEvent) },
      detail: { operationId: 'listJobEvents', summary: "A job's timeline", description: 'Append-only, oldest first, cursor-paged.', tags: ['Jobs'] },
    })
  return { routes, preRoutedJob }
}

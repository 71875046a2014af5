import { privateImage } from '../pages/private-image'
import { thumbnailResponse } from '../pages/thumbnail'
import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { idempotencyOwner, withIdempotency } from '../idempotency/idempotency'
import { addNote } from '../jobs/add-note'
import { addPhoto } from '../jobs/add-photo'
import { archiveJob, restoreJob } from '../jobs/archive-job'
import { assignJob } from '../jobs/assign-job'
import { changeStatus } from '../jobs/change-status'
import { isStatus, type JobStatus } from '../jobs/job-status'
import { UpdateJobBody } from '../jobs/job.model'
import { readJobPhoto } from '../jobs/job-photos'
import { reopenJob } from '../jobs/reopen-job'
import { replaceTrackingLink } from '../jobs/replace-tracking-link'
import { unassignJob } from '../jobs/unassign-job'
import type { ActionGuard } from '../jobs/job-context'
import { readFieldInput, updateJob } from '../jobs/update-job'
import type { OperationContext } from '../operations/operation-context'
import { postedValues, type FormState } from '../pages/form'
import { AppError, validationFailed, validationProblemsOf } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { randomBase62 } from '../platform/ids'
import { parseDollars } from '../platform/money'
import { BODY_CAPS, isOversizedBody, photoTooLarge, routeProps } from '../platform/route-props'
import { compileChecker, type FieldProblem } from '../platform/validation'
import { resendDriverLink } from '../texts/resend-driver-link'
import type { SessionPlugin } from '../users/session.plugin'
import type { SessionUser } from '../users/sessions'
import { readJobNow, readJobPage } from './job-page.data'
import { editValues, jobPageBody, JOB_ACTIONS, type JobAction, type JobPageState } from './job.page'
import { STATUS_LABELS } from './labels'
import { INVOICE_DONE } from '../invoices/invoice.page'
import { dashboardPage } from './shell'

/** What a done action says on the page it returns to (`?done=`): only these words, never text from the URL. */
const DONE: Record<string, string> = {
  created: 'Job created.', moved: 'Status changed.', cancelled: 'Job cancelled.', goa: 'Marked GOA.', assigned: 'Unit assigned.',
  unassigned: 'Unit taken off the job.', reopened: 'Job reopened.', note: 'Note added.', archived: 'Job archived.', restored: 'Job restored.',
  tracking_link: 'New tracking link made; the old one no longer works.', driver_link: 'Driver link sent again.',
  driver_link_skipped: 'The driver link text was not sent (see Timeline for why).', photo: 'Photo added.', saved: 'Changes saved.', unchanged: 'Nothing to save: no field was changed.',
  ...INVOICE_DONE,
}

const checkUpdate = compileChecker(UpdateJobBody, 'body')
const text = (f: FormFields, name: string) => (typeof f[name] === 'string' ? (f[name] as string).trim() : '')
const label = (s: string) => STATUS_LABELS[s as JobStatus] ?? s

/** The edit form's field an API path belongs to. */
const EDIT_FIELD_OF: Record<string, string> = {
  'customer.name': 'customer_name', 'customer.phone': 'customer_phone', 'customer.sms_consent': 'sms_consent', 'pickup.location': 'pickup',
  destination: 'destination', 'vehicle.year': 'vehicle_year', 'vehicle.make': 'vehicle_make', 'vehicle.model': 'vehicle_model',
  'vehicle.color': 'vehicle_color', 'vehicle.plate': 'vehicle_plate', 'vehicle.vin': 'vehicle_vin', urgency: 'urgency',
  service_type: 'service_type', eta_at: 'eta_minutes', quote_cents: 'quote', final_price_cents: 'final_price', payment_method: 'payment_method',
  commercial_account_id: 'commercial_account_id',
}
const cleanPath = (p: string) => p.replace(/^body\.?/, '').replace(/\//g, '.').replace(/^\./, '')

/**
 * The PATCH body the edit form stands for: only what differs from the job as it is now (so an
 * unchanged form writes nothing), or the fields' problems.
 */
function editBody(ctx: OperationContext, current: Record<string, string>, f: FormFields): { body: Record<string, unknown> } | { problems: FieldProblem[] } {
  const v = (n: string) => (n === 'sms_consent' ? (f[n] === 'on' ? 'on' : '') : text(f, n))
  const changed = (n: string) => v(n) !== (current[n] ?? '')
  const orNull = (n: string) => (v(n) === '' ? null : v(n))
  const problems: FieldProblem[] = []
  const body: Record<string, any> = {}
  const customer: Record<string, unknown> = {}
  if (changed('customer_name')) customer.name = v('customer_name')
  if (changed('customer_phone')) customer.phone = orNull('customer_phone')
  if (changed('sms_consent')) customer.sms_consent = v('sms_consent') === 'on'
  if (Object.keys(customer).length) body.customer = customer
  if (changed('pickup')) body.pickup = { location: v('pickup') }
  if (changed('destination')) body.destination = orNull('destination')
  const vehicle: Record<string, unknown> = {}
  for (const k of ['year', 'make', 'model', 'color', 'plate', 'vin']) if (changed(`vehicle_${k}`)) vehicle[k] = orNull(`vehicle_${k}`)
  if (Object.keys(vehicle).length) body.vehicle = vehicle
  for (const k of ['urgency', 'service_type', 'payment_method', 'commercial_account_id']) if (changed(k)) body[k] = orNull(k)
  if (v('eta_minutes') !== '') {
    const m = /^\d{1,4}$/.test(v('eta_minutes')) ? Number(v('eta_minutes')) : NaN
    if (!(m >= 0 && m <= 1440)) problems.push({ path: 'eta_minutes', message: 'must be a whole number of minutes from 0 to 1440' })
    else body.eta_at = new Date(ctx.clock.now() + m * 60_000).toISOString()
  }
  for (const [field, key] of [['quote', 'quote_cents'], ['final_price', 'final_price_cents']] as const) {
    if (!changed(field)) continue
    const c = parseDollars(v(field))
    if (c === undefined) problems.push({ path: field, message: 'must be dollars and cents, e.g. 185.00' })
    else body[key] = c
  }
  const fieldOf = (path: string) => EDIT_FIELD_OF[cleanPath(path)] ?? EDIT_FIELD_OF[cleanPath(path).split('.').slice(0, 2).join('.')] ?? 'customer_name'
  for (const p of checkUpdate(body) ?? []) problems.push({ path: fieldOf(p.path), message: p.message })
  // Every bad field at once: the operation's own checks (a phone that cannot be texted...) beside the form's and the schema's.
  if (problems.length) for (const p of validationProblemsOf(() => readFieldInput(ctx, body as never))) problems.push({ path: fieldOf(p.path), message: p.message })
  return problems.length ? { problems } : { body }
}

/** The actions posted as plain forms to /jobs/{id}/<action> (a photo is multipart, to /jobs/{id}/photos). */
type FormAction = Exclude<JobAction, 'photo'>

/** Runs one action through its operation; returns the `done` word for the page it leads back to. */
function runAction(ctx: OperationContext, id: string, action: FormAction, f: FormFields, guard: ActionGuard, version: number | null): string {
  switch (action) {
    case 'move': {
      const to = text(f, 'to')
      if (!isStatus(to) || to === 'cancelled' || to === 'goa') throw validationFailed([{ path: 'to', message: 'names no status this button moves to' }])
      changeStatus(ctx, id, { to, expectedStatus: guard.expectedStatus as JobStatus | undefined })
      return 'moved'
    }
    case 'cancel': {
      const to = text(f, 'to')
      if (to !== 'cancelled' && to !== 'goa') throw validationFailed([{ path: 'to', message: 'must be cancelled or goa' }])
      const reason = text(f, 'reason')
      changeStatus(ctx, id, { to, expectedStatus: guard.expectedStatus as JobStatus | undefined, reason: reason === '' && to === 'goa' ? undefined : reason })
      return to
    }
    case 'assign': {
      const unitId = text(f, 'unit_id')
      if (!unitId) throw validationFailed([{ path: 'unit_id', message: 'choose a unit' }])
      assignJob(ctx, id, unitId, guard)
      return 'assigned'
    }
    case 'unassign': unassignJob(ctx, id, guard); return 'unassigned'
    case 'reopen': reopenJob(ctx, id, text(f, 'reason'), guard); return 'reopened'
    case 'note': addNote(ctx, id, { text: text(f, 'note'), customer_visible: f.customer_visible === 'on' }, guard); return 'note'
    case 'archive': archiveJob(ctx, id, guard); return 'archived'
    case 'restore': restoreJob(ctx, id, guard); return 'restored'
    case 'tracking-link': replaceTrackingLink(ctx, id, guard); return 'tracking_link'
    case 'driver-link': return resendDriverLink(ctx, id, guard).skipReason ? 'driver_link_skipped' : 'driver_link'
    case 'edit': {
      const now = readJobNow(ctx, id)
      if (version !== null && now.version !== version) {
        throw new AppError('job_stale', 'This job changed since the page was loaded; nothing was saved.', { expected_status: guard.expectedStatus ?? now.status, current_status: now.status })
      }
      const made = editBody(ctx, editValues(now.job), f)
      if ('problems' in made) throw validationFailed(made.problems)
      if (!Object.keys(made.body).length) return 'unchanged'
      updateJob(ctx, id, { ...made.body, expected_status: guard.expectedStatus as JobStatus | undefined } as UpdateJobBody)
      return 'saved'
    }
  }
}

/** The form field an operation's problem belongs to, per action. */
function fieldFor(action: JobAction, path: string): string {
  const p = cleanPath(path)
  if (action === 'note') return 'note'
  if (action === 'cancel' || action === 'reopen') return 'reason'
  if (action === 'assign') return 'unit_id'
  if (action === 'photo') return 'photo'
  return EDIT_FIELD_OF[p] ?? p
}

/** The job page as it is now, saying `state` (an alert, a refused form with what was typed): what every action on the page answers a refusal with. */
export function jobPageResponse(deps: Pick<RouteDeps, 'bus'>, ctx: OperationContext, user: SessionUser, id: string, state: Omit<JobPageState, 'formKey'> & { formKey?: string }, status = 200): Response {
  const data = readJobPage(ctx, id)
  const body = jobPageBody(data, { formKey: state.formKey ?? randomBase62(24), ...state }, deps.bus.position)
  return dashboardPage({ title: data.job.customer.name, user, active: 'jobs', body: body.text, status, scripts: ['dashboard.js', 'job.js'] })
}

/** `/jobs/{id}`: the job page, and its actions (each a form posting to `/jobs/{id}/<action>`). */
export function jobPageRoutes(session: SessionPlugin, deps: RouteDeps) {
  const render = (ctx: OperationContext, user: SessionUser, id: string, state: Omit<JobPageState, 'formKey'> & { formKey?: string }, status = 200) =>
    jobPageResponse(deps, ctx, user, id, state, status)

  /**
   * Runs one posted action: its form's idempotency key around the operation, then 303 back to the
   * page saying what was done; a refusal renders the page as it is now with one alert and the
   * refused form's values and messages.
   */
  const perform = (ctx: OperationContext, user: SessionUser, id: string, action: JobAction, f: FormFields, extra: Record<string, string>,
    run: (guard: ActionGuard, version: number | null) => string): Response => {
    const expected = text(f, 'expected_status')
    const guard: ActionGuard = isStatus(expected) ? { expectedStatus: expected } : {}
    if (typeof f.expected_unit_id === 'string') guard.expectedUnitId = f.expected_unit_id === '' ? null : f.expected_unit_id
    const version = /^\d{1,12}$/.test(text(f, 'version')) ? Number(text(f, 'version')) : null
    const key = text(f, 'idempotency_key')
    const formKey = /^[0-9A-Za-z]{24}\.[a-z-]{2,20}$/.test(key) ? key : undefined
    const values = postedValues(f)
    try {
      // The form's own key: a double click or a resent form does the action once.
      const made = withIdempotency(deps, idempotencyOwner(ctx.actor), formKey, { method: 'POST', path: `/jobs/${id}/${action}`, body: { ...values, ...extra } },
        () => ({ status: 200, body: { done: run(guard, version) } }))
      const done = (made.body as { done: string }).done
      return new Response(null, { status: 303, headers: { location: `/jobs/${encodeURIComponent(id)}?done=${done}` } })
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      const keep = formKey?.split('.')[0]
      // One visible alert, at the top of the page; the refused form keeps what was typed and its fields' messages.
      const form: FormState = { values, errors: {}, alert: '' }
      switch (err.errorCode) {
        case 'job_stale': {
          const now = String(err.details.current_status ?? '')
          if ('expected_unit_id' in err.details) {
            const units = readJobPage(ctx, id).units
            const unitName = (unitId: unknown) => (typeof unitId === 'string' ? units.find((u) => u.id === unitId)?.name ?? 'another unit' : 'no unit')
            const alert = `Someone else changed this job's unit first: it is now with ${unitName(err.details.current_unit_id)}, not ${unitName(err.details.expected_unit_id)} as this page showed. Nothing was done; the page now shows the job as it is.`
            return render(ctx, user, id, { alert, forms: { [action]: form }, formKey: keep }, 409)
          }
          const alert = action === 'edit'
            ? `Someone else changed this job while you were editing it (it is now ${label(now)}). Nothing was saved: your changes are kept below; check them against the job and save again.`
            : `Someone else changed this job first: it is now ${label(now)}, not ${label(expected)} as this page showed. Nothing was done; the page now shows the job as it is.`
          return render(ctx, user, id, { alert, forms: { [action]: form }, formKey: keep }, 409)
        }
        case 'validation_failed':
        case 'payload_too_large':
        case 'job_reason_required': {
          // The page's field is labelled Reason: its words name it so, not the API's cancel_reason.
          const reasonWords = err.errorCode === 'job_reason_required' ? err.message.replace(`a ${String(err.details.field)} of`, 'a reason of') : ''
          const fields = (err.details.fields as FieldProblem[] | undefined) ?? [{ path: String(err.details.field ?? 'reason'), message: 'must be 3 to 500 characters' }]
          for (const p of fields) form.errors[fieldFor(action, p.path)] ??= p.message
          const alert = reasonWords ? `${reasonWords} Nothing was done.` : `Nothing was ${action === 'edit' ? 'saved' : 'done'}: correct the field${fields.length === 1 ? '' : 's'} marked below.`
          return render(ctx, user, id, { alert, forms: { [action]: form }, formKey: keep }, err.status)
        }
        case 'idempotency_key_reused':
          return render(ctx, user, id, { alert: 'This form was already sent from this page with other values. Nothing more was done; the page now shows the job as it is.' }, 409)
        case 'job_transition_refused':
        case 'invalid_state':
        case 'conflict':
          return render(ctx, user, id, { alert: err.message, forms: { [action]: form }, formKey: keep }, 409)
        default:
          throw err
      }
    }
  }

  return new Elysia({ name: 'towline.job-page' }).use(routeProps).use(session)
    .get('/jobs/:id', ({ ctx, user, params, query }) => {
      const done = typeof query.done === 'string' ? DONE[query.done] : undefined
      return render(ctx, user, params.id, { done })
    }, { signedIn: 'dispatcher' })
    .get('/jobs/:id/photos/:photoId', ({ ctx, params, request }) => {
      const photo = readJobPhoto(ctx, params.id, params.photoId)
      return privateImage(request, photo.data, photo.contentType, photo.sha256)
    }, { signedIn: 'dispatcher' })
    .get('/jobs/:id/photos/:photoId/thumb', ({ ctx, params, request }) => thumbnailResponse(request, readJobPhoto(ctx, params.id, params.photoId)), { signedIn: 'dispatcher' })
    .post('/jobs/:id/photos', async ({ ctx, user, params, body }) => {
      // Over 10 MB without the page's script (which stops it before sending): said beside Photo.
      if (isOversizedBody(body)) return perform(ctx, user, params.id, 'photo', {}, {}, () => { throw photoTooLarge() })
      const f = body as FormFields
      const file = f.photo instanceof File ? f.photo : null
      const bytes = file ? new Uint8Array(await file.arrayBuffer()) : new Uint8Array()
      const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
      return perform(ctx, user, params.id, 'photo', f, { photo_sha256: sha256 }, (guard) => { addPhoto(ctx, params.id, bytes, guard); return 'photo' })
    }, { signedIn: 'dispatcher', accepts: { kind: 'multipart', maxBytes: BODY_CAPS.photo, maxFields: 8, oversized: 'handler' } })
    .post('/jobs/:id/:action', ({ ctx, user, params, body }) => {
      const action = params.action as FormAction
      if (!(JOB_ACTIONS as readonly string[]).includes(action) || params.action === 'photo') throw new AppError('not_found', `There is no job action ${params.action}.`, { action: params.action })
      const f = body as FormFields
      return perform(ctx, user, params.id, action, f, {}, (guard, version) => runAction(ctx, params.id, action, f, guard, version))
    }, { signedIn: 'dispatcher', accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 40 } })
}

import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { AppError, validationProblemsOf } from '../platform/errors'
import { checkboxField, formAlert, inputField, selectField, type FormState as KitForm } from '../pages/form'
import { html } from '../pages/html'
import { BODY_CAPS, routeProps } from '../platform/route-props'
import { compileChecker, type FieldProblem } from '../platform/validation'
import type { FormFields } from '../platform/forms'
import { randomBase62 } from '../platform/ids'
import { createJob, readCreateInput } from '../jobs/create-job'
import { CreateJobBody } from '../jobs/job.model'
import { idempotencyOwner, withIdempotency } from '../idempotency/idempotency'
import type { SessionPlugin } from '../users/session.plugin'
import { dashboardPage } from './shell'
import { commercialAccountSelect } from '../commercial-accounts/commercial-account-select'
import { listCommercialAccountChoices } from '../commercial-accounts/directory.data'
import type { CommercialAccountRef } from '../commercial-accounts/commercial-account.model'
import type { OperationContext } from '../operations/operation-context'

/** The create form's fields: the form name, its label (pages.md's words first), and where it goes in the API body. */
const FIELDS = [
  { name: 'customer_name', label: 'Customer name', path: 'customer.name', required: true, type: 'text', autocomplete: 'off' },
  { name: 'customer_phone', label: 'Phone', path: 'customer.phone', type: 'tel', autocomplete: 'off' },
  { name: 'sms_consent', label: 'Texts allowed', path: 'customer.sms_consent', type: 'checkbox' },
  { name: 'pickup', label: 'Pickup', path: 'pickup.location', required: true, type: 'text' },
  { name: 'destination', label: 'Destination', path: 'destination', type: 'text' },
  { name: 'vehicle_year', label: 'Year', path: 'vehicle.year', type: 'text', inputmode: 'numeric' },
  { name: 'vehicle_make', label: 'Make', path: 'vehicle.make', type: 'text' },
  { name: 'vehicle_model', label: 'Model', path: 'vehicle.model', type: 'text' },
  { name: 'vehicle_color', label: 'Color', path: 'vehicle.color', type: 'text' },
  { name: 'vehicle_plate', label: 'Plate', path: 'vehicle.plate', type: 'text' },
  { name: 'urgency', label: 'Urgency', path: 'urgency', type: 'select', options: ['normal', 'urgent', 'scheduled'] },
  { name: 'external_ref', label: 'Reference', path: 'external_ref', type: 'text' },
] as const

type Values = Partial<Record<(typeof FIELDS)[number]['name'] | 'commercial_account_id', string>>
interface FormState { values: Values; errors: Record<string, string>; alert?: string; idempotencyKey: string }

const checkBody = compileChecker(CreateJobBody, 'body')
const str = (f: FormFields, n: string) => (typeof f[n] === 'string' ? (f[n] as string).trim() : '')

/** The API body a filled-in form stands for (blank fields left out, as a dispatcher means them). */
function bodyOf(v: Values): Record<string, unknown> {
  const vehicle: Record<string, string> = {}
  for (const k of ['year', 'make', 'model', 'color', 'plate'] as const) if (v[`vehicle_${k}`]) vehicle[k] = v[`vehicle_${k}`]!
  return {
    customer: { name: v.customer_name ?? '', ...(v.customer_phone ? { phone: v.customer_phone } : {}), sms_consent: v.sms_consent === 'on' },
    pickup: { location: v.pickup ?? '' },
    ...(v.destination ? { destination: v.destination } : {}),
    ...(Object.keys(vehicle).length ? { vehicle } : {}),
    ...(v.urgency ? { urgency: v.urgency } : {}),
    ...(v.external_ref ? { external_ref: v.external_ref } : {}),
    ...(v.commercial_account_id ? { commercial_account_id: v.commercial_account_id } : {}),
  }
}

/** The form field an API problem path belongs to. */
function fieldOf(path: string): string {
  const clean = path.replace(/^body\.?/, '').replace(/\//g, '.').replace(/^\./, '')
  if (clean === 'commercial_account_id') return clean
  return FIELDS.find((f) => f.path === clean || clean.startsWith(f.path + '.'))?.name ?? (clean.startsWith('customer') ? 'customer_name' : 'pickup')
}

function formPage(user: Parameters<typeof dashboardPage>[0]['user'], ctx: OperationContext, s: FormState, status = 200): Response {
  const choices: CommercialAccountRef[] = listCommercialAccountChoices(ctx)
  const form: KitForm = { values: s.values, errors: s.errors, alert: s.alert }
  const field = (f: (typeof FIELDS)[number]) => {
    const required = 'required' in f && f.required
    if (f.type === 'checkbox') return checkboxField(form, { name: f.name, label: f.label })
    if (f.type === 'select') return selectField(form, { name: f.name, label: f.label, placeholder: '(none)', options: f.options.filter(Boolean).map((o) => ({ value: o, label: o })) })
    return inputField(form, { name: f.name, label: f.label, type: f.type, required, inputmode: 'inputmode' in f ? f.inputmode : undefined, autocomplete: 'autocomplete' in f ? f.autocomplete : undefined })
  }
  const body = html`<h1>New job</h1>
<form method="post" action="/jobs/new" class="job-form" novalidate>
${formAlert(form)}
<input type="hidden" name="idempotency_key" value="${s.idempotencyKey}">
<fieldset><legend>Customer</legend>${FIELDS.slice(0, 3).map(field)}</fieldset>
<fieldset><legend>Where</legend>${FIELDS.slice(3, 5).map(field)}</fieldset>
<fieldset><legend>Vehicle</legend>${FIELDS.slice(5, 10).map(field)}</fieldset>
<fieldset><legend>Job</legend>${FIELDS.slice(10).map(field)}${commercialAccountSelect(form, choices)}</fieldset>
<button type="submit">Create job</button>
</form>`
  return dashboardPage({ title: 'New job', user, active: 'board', body: body.text, status })
}

/** `/jobs/new`: **New job** — the create form, through the same operation as POST /jobs. */
export function newJobRoutes(session: SessionPlugin, deps: RouteDeps) {
  return new Elysia({ name: 'towline.new-job' }).use(routeProps).use(session)
    // Texts allowed starts unticked: consent is the customer's to give (sms_consent defaults to false in the API too).
    .get('/jobs/new', ({ user, ctx }) => formPage(user, ctx, { values: {}, errors: {}, idempotencyKey: randomBase62(24) }), { signedIn: 'dispatcher' })
    .post('/jobs/new', ({ body, user, ctx }) => {
      const f = body as FormFields
      const values: Values = {}
      for (const field of FIELDS) values[field.name] = str(f, field.name)
      values.commercial_account_id = str(f, 'commercial_account_id')
      const idempotencyKey = /^[0-9A-Za-z]{24}$/.test(str(f, 'idempotency_key')) ? str(f, 'idempotency_key') : randomBase62(24)
      const refuse = (problems: FieldProblem[], alert: string) => {
        const errors: Record<string, string> = {}
        for (const p of problems) errors[fieldOf(p.path)] ??= p.message
        return formPage(user, ctx, { values, errors, alert, idempotencyKey }, 422)
      }
      const apiBody = bodyOf(values)
      const problems = checkBody(apiBody)
      // Every bad field at once: the operation's own checks (a phone that cannot be texted...) beside the schema's.
      if (problems) return refuse([...problems, ...validationProblemsOf(() => readCreateInput(ctx, apiBody as never))], 'The job was not created: correct the fields marked below.')
      try {
        // The form's own key: a double-click or a resent form makes one job, not two.
        const made = withIdempotency(deps, idempotencyOwner(ctx.actor), idempotencyKey, { method: 'POST', path: '/jobs', body: apiBody },
          () => ({ status: 201, body: { id: createJob(ctx, apiBody as never).id } }))
        const id = (made.body as { id: string }).id
        return new Response(null, { status: 303, headers: { location: `/jobs/${id}?done=created` } })
      } catch (err) {
        if (err instanceof AppError && (err.errorCode === 'validation_failed' || err.errorCode === 'conflict')) {
          const fields = (err.details.fields as FieldProblem[] | undefined) ?? [{ path: 'external_ref', message: err.message }]
          return refuse(fields, `The job was not created: ${err.message}`)
        }
        throw err
      }
    }, { signedIn: 'dispatcher', accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 32 } })
}

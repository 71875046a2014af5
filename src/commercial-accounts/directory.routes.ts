import { postedVersion } from '../platform/form-version'
import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { dashboardPage } from '../dashboard/shell'
import { idempotencyOwner, withIdempotency } from '../idempotency/idempotency'
import type { OperationContext } from '../operations/operation-context'
import { blankForm, postedValues, refusedForm, type FormState } from '../pages/form'
import { AppError } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { randomBase62 } from '../platform/ids'
import { BODY_CAPS, routeProps } from '../platform/route-props'
import type { SessionPlugin } from '../users/session.plugin'
import type { SessionUser } from '../users/sessions'
import { MAX_CONTACTS, type CommercialAccountInput } from './commercial-account.model'
import { createCommercialAccount } from './create-commercial-account'
import { takenName } from './commercial-account-name'
import { readCommercialAccountForEdit, readDirectory } from './directory.data'
import { accountBody, directoryBody, savedNowDiffering } from './directory.page'
import { updateCommercialAccount } from './update-commercial-account'

const DONE: Record<string, string> = { created: 'Account added.', saved: 'Account saved.' }
const text = (f: FormFields, name: string) => (typeof f[name] === 'string' ? (f[name] as string) : '')
const seeOther = (location: string) => new Response(null, { status: 303, headers: { location } })

/**
 * The operation's input a posted form stands for: contact rows left wholly empty are dropped.
 * `rowOf` maps each kept contact's index back to its row on the form, so a message about
 * `contacts.1.phone` lands beside the row the user typed it in.
 */
function inputOf(f: FormFields): { input: CommercialAccountInput; rowOf: number[] } {
  const contacts: CommercialAccountInput['contacts'] = []
  const rowOf: number[] = []
  for (let i = 0; i < MAX_CONTACTS + 1; i++) {
    const c = { name: text(f, `contacts.${i}.name`), role: text(f, `contacts.${i}.role`), phone: text(f, `contacts.${i}.phone`), email: text(f, `contacts.${i}.email`) }
    if (Object.values(c).every((v) => v.trim() === '')) continue
    contacts.push(c)
    rowOf.push(i)
  }
  return { input: { name: text(f, 'name'), kind: text(f, 'kind'), contacts, rates: text(f, 'rates'), billing_address: text(f, 'billing_address'), internal_notes: text(f, 'internal_notes') }, rowOf }
}

/** The form re-rendered after a refusal: each message beside the row it belongs to. */
function refused(err: unknown, f: FormFields, rowOf: number[]): FormState {
  if (err instanceof AppError && Array.isArray(err.details.fields)) {
    const fields = (err.details.fields as { path: string; message: string }[]).map((p) => ({ ...p, path: p.path.replace(/^contacts\.(\d+)\./, (_, i: string) => `contacts.${rowOf[Number(i)] ?? i}.`) }))
    return refusedForm(new AppError(err.errorCode, err.message, { ...err.details, fields }), f)
  }
  return refusedForm(err, f)
}

/**
 * A refusal of the fields with a taken name said beside them: the operation looks the name up
 * only once the fields pass, and a form shows every problem at the first refusal. `self` is the
 * entry being edited (its own name is not taken).
 */
function withTakenName(err: unknown, ctx: OperationContext, name: string, self: string | null): unknown {
  if (!(err instanceof AppError) || err.errorCode !== 'validation_failed') return err
  const fields = err.details.fields as { path: string; message: string }[]
  if (!name.trim() || fields.some((p) => p.path === 'name')) return err
  try {
    takenName(ctx.db, ctx.scope.accountId, name.trim(), self)
    return err
  } catch (taken) {
    if (!(taken instanceof AppError) || taken.errorCode !== 'conflict') throw taken
    return new AppError('validation_failed', err.message, { ...err.details, fields: [...(taken.details.fields as typeof fields), ...fields] })
  }
}

/**
 * `/accounts`: the commercial accounts directory for every signed-in user (owners and
 * dispatchers alike add and edit entries), through the same operations the console and the demo
 * use. Another account's id answers 404, for reading and for saving.
 */
export function directoryRoutes(session: SessionPlugin, deps: RouteDeps) {
  const list = (user: SessionUser, ctx: OperationContext, form: FormState, key: string, status?: number, done?: string) =>
    dashboardPage({ title: 'Commercial accounts', user, active: 'accounts', body: directoryBody(readDirectory(ctx), form, key, done), status })
  const edit = (user: SessionUser, ctx: OperationContext, id: string, form: FormState | null, status?: number, done?: string, opts: { version?: string; stale?: boolean } = {}) => {
    const row = readCommercialAccountForEdit(ctx, id)
    const savedNow = opts.stale && form ? savedNowDiffering(row, form.values) : undefined
    // A refused form keeps the version it was opened on; one refused as stale takes the saved one (saving again is then a choice).
    const version = opts.stale ? undefined : opts.version
    return dashboardPage({ title: row.name, user, active: 'accounts', body: accountBody(row, form, done, { version, savedNow }), status })
  }

  return new Elysia({ name: 'towline.commercial-accounts.pages' }).use(routeProps).use(session)
    .get('/accounts', ({ user, ctx, query }) => list(user, ctx, blankForm(), randomBase62(24), undefined, typeof query.done === 'string' ? DONE[query.done] : undefined), { signedIn: 'dispatcher' })
    .post('/accounts', ({ body, user, ctx }) => {
      const f = body as FormFields
      const { input, rowOf } = inputOf(f)
      const key = /^[0-9A-Za-z]{24}$/.test(text(f, 'idempotency_key')) ? text(f, 'idempotency_key') : randomBase62(24)
      try {
        // The form's own key: a double click adds one account, not a "name taken" refusal.
        const made = withIdempotency(deps, idempotencyOwner(ctx.actor), key, { method: 'POST', path: '/accounts', body: postedValues(f) },
          () => ({ status: 201, body: { id: createCommercialAccount(ctx, input).id } }))
        return seeOther(`/accounts/${(made.body as { id: string }).id}?done=created`)
      } catch (err) {
        if (!(err instanceof AppError) || !['validation_failed', 'conflict', 'idempotency_key_reused'].includes(err.errorCode)) throw err
        return list(user, ctx, refused(withTakenName(err, ctx, input.name, null), f, rowOf), err.errorCode === 'idempotency_key_reused' ? randomBase62(24) : key, err.status)
      }
    }, { signedIn: 'dispatcher', accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 120 } })
    .get('/accounts/:id', ({ user, ctx, params, query }) => edit(user, ctx, params.id, null, undefined, typeof query.done === 'string' ? DONE[query.done] : undefined), { signedIn: 'dispatcher' })
    .post('/accounts/:id', ({ body, user, ctx, params }) => {
      const f = body as FormFields
      const { input, rowOf } = inputOf(f)
      // The version the page was opened on (a form without one, as the console's, saves as it is).
      const version = postedVersion(text(f, 'version'))
      try {
        updateCommercialAccount(ctx, params.id, input, version)
        return seeOther(`/accounts/${encodeURIComponent(params.id)}?done=saved`)
      } catch (err) {
        if (!(err instanceof AppError) || !['validation_failed', 'conflict'].includes(err.errorCode)) throw err
        const stale = err.details.changed_since_opened === true
        const alert = 'Someone else saved this account after this page was opened; nothing was saved. What you typed is kept below; compare it with what is saved now, then Save account again to keep yours.'
        const form = stale ? { values: postedValues(f), errors: {}, alert } : refused(withTakenName(err, ctx, input.name, params.id), f, rowOf)
        return edit(user, ctx, params.id, form, err.status, undefined, { version, stale })
      }
    }, { signedIn: 'dispatcher', accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 120 } })
}

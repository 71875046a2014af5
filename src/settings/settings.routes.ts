import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { accountSettingsVersion, readAccountSettings, updateAccount } from '../accounts/update-account'
import { blankForm, refusedForm, type FormState } from '../pages/form'
import { AppError } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { BODY_CAPS, routeProps } from '../platform/route-props'
import type { OperationContext } from '../operations/operation-context'
import { lookUpConsent, startTexts, stopTexts } from '../texts/manage-consent'
import { listTemplates, previewTemplate, resetTemplate, setTemplate } from '../texts/manage-templates'
import { isTemplateName, type TemplateName } from '../texts/templates'
import { createUser } from '../users/create-user'
import { listLogins, setUserDisabled, setUserPassword } from '../users/manage-user'
import type { SessionPlugin } from '../users/session.plugin'
import type { SessionUser } from '../users/sessions'
import { companyBody } from './company.page'
import { consentBody, type ConsentLookup } from './consent.page'
import { settingsPage } from './shell'
import { templatesBody, type TemplateEntry } from './templates.page'
import { usersBody, type ShownPassword } from './users.page'
import { idempotencyOwner, withIdempotencyAsync } from '../idempotency/idempotency'
import { randomBase62 } from '../platform/ids'
import { postedVersion } from '../platform/form-version'

/** A posted (or queried) text field, or '' when absent or not text. */
const field = (fields: Record<string, unknown>, name: string): string => (typeof fields[name] === 'string' ? (fields[name] as string) : '')
/** The version a form was drawn with (accountSettingsVersion, templateVersion), or undefined for a form without one (it saves as it is). */
const versionOf = (f: FormFields) => postedVersion(field(f, 'version'))
const seeOther = (location: string) => new Response(null, { status: 303, headers: { location } })
const FORM = (maxFields: number) => ({ kind: 'form' as const, maxBytes: BODY_CAPS.form, maxFields })

/** Whether an error is an operation's refusal of what was typed (shown on the form, 422), not a failure. */
const isRefusal = (err: unknown): err is AppError => err instanceof AppError && err.errorCode === 'validation_failed'

/** `/settings` and its pages (owners only): company, text templates, consent, users. Each acts through the operation the console uses. */
export function settingsRoutes(session: SessionPlugin, deps: RouteDeps) {
  // A new object for each route: Elysia writes a route's macro results into the options object it
  // is given, so one object shared by several routes would carry the last route's body limits to all.
  const owner = () => ({ signedIn: 'owner' as const })

  const company = (user: SessionUser, ctx: OperationContext, form: FormState | null, saved = false, status = 200, stale = false) => {
    const account = readAccountSettings(ctx)
    const state = form ?? blankForm({ name: account.name, phone: account.phone ?? '', payment_url: account.paymentUrl ?? '', time_zone: account.timeZone })
    // The version of what is saved now: a form refused as stale carries it, so Save settings again keeps what was typed.
    const savedNow = stale ? { name: account.name, phone: account.phone, paymentUrl: account.paymentUrl, timeZone: account.timeZone } : null
    return settingsPage({ user, tab: 'company', title: 'Company settings', body: companyBody(state, { country: account.defaultCountry, timeZone: account.timeZone, saved, version: accountSettingsVersion(account), savedNow }), status })
  }

  const templates = (user: SessionUser, ctx: OperationContext, refused: { name: TemplateName; form: FormState } | null, saved: TemplateName | null, status = 200) => {
    const entries: TemplateEntry[] = listTemplates(ctx).map((view) => refused?.name === view.name
      ? { view, form: refused.form, preview: null }
      : { view, form: blankForm({ [view.name]: view.text }), preview: previewTemplate(ctx, view.text) })
    return settingsPage({ user, tab: 'templates', title: 'Text templates', body: templatesBody(entries, saved), status })
  }

  const consent = (user: SessionUser, ctx: OperationContext, typed: string | null, done: 'stop' | 'start' | null = null) => {
    let found: ConsentLookup | null = null
    let form = blankForm({ phone: typed ?? '' })
    let status = 200
    if (typed?.trim()) {
      try {
        const { phone, records } = lookUpConsent(ctx, typed)
        found = { phone: phone!, record: records[0] ?? null }
      } catch (err) {
        if (!isRefusal(err)) throw err
        form = refusedForm(err, { phone: typed })
        status = 422
      }
    }
    return settingsPage({ user, tab: 'consent', title: 'Text consent', body: consentBody(form, found, done, ctx.account.timeZone), status })
  }

  const users = (user: SessionUser, ctx: OperationContext, p: { form?: FormState; shown?: ShownPassword; alert?: string; done?: string; status?: number } = {}) =>
    settingsPage({ user, tab: 'users', title: 'Users', status: p.status,
      body: usersBody({ users: listLogins(ctx), me: user.userId, form: p.form ?? blankForm({ role: 'dispatcher' }), shown: p.shown ?? null, alert: p.alert ?? null, done: p.done ?? null, formKey: randomBase62(24), zone: ctx.account.timeZone }) })
  /** The form's own idempotency key, when it is one the users page made (its 24 characters, then which form; `form` may come from the URL, so it is compared, never made a pattern). */
  const formKeyOf = (f: FormFields, form: string) => {
    const key = field(f, 'idempotency_key')
    return /^[0-9A-Za-z]{24}\./.test(key) && key.slice(25) === form ? key : undefined
  }

  return new Elysia({ name: 'towline.settings' }).use(routeProps).use(session)
    .get('/settings', ({ user, ctx, query }) => company(user, ctx, null, field(query, 'saved') === '1'), owner())
    .post('/settings', ({ user, ctx, body }) => {
      const f = body as FormFields
      const typed = { name: field(f, 'name'), phone: field(f, 'phone'), payment_url: field(f, 'payment_url'), time_zone: field(f, 'time_zone') }
      const version = versionOf(f)
      try {
        updateAccount(ctx, { name: typed.name, phone: typed.phone, paymentUrl: typed.payment_url, timeZone: typed.time_zone || undefined }, version)
      } catch (err) {
        if (err instanceof AppError && err.details.changed_since_opened === true) {
          const alert = 'Someone else saved the company settings after this page was opened; nothing was saved. What you typed is kept below, beside what is saved now: Save settings again to keep yours.'
          return company(user, ctx, { values: typed, errors: {}, alert }, false, 409, true)
        }
        if (!isRefusal(err)) throw err
        return company(user, ctx, refusedForm(err, typed), false, 422)
      }
      return seeOther('/settings?saved=1')
    }, { ...owner(), accepts: FORM(8) })

    .get('/settings/templates', ({ user, ctx, query }) => {
      const saved = field(query, 'saved')
      return templates(user, ctx, null, isTemplateName(saved) ? saved : null)
    }, owner())
    .post('/settings/templates/:name', ({ user, ctx, params, body }) => {
      const text = field(body as FormFields, params.name)
      const version = versionOf(body as FormFields)
      try {
        setTemplate(ctx, params.name, text, version)
      } catch (err) {
        if (err instanceof AppError && err.details.changed_since_opened === true && isTemplateName(params.name)) {
          const alert = `Someone else saved this text after this page was opened; nothing was saved. Saved now: "${String(err.details.saved_text)}". What you typed is kept below: Save template again to keep yours.`
          return templates(user, ctx, { name: params.name, form: { values: { [params.name]: text }, errors: {}, alert } }, null, 409)
        }
        if (!isRefusal(err)) throw err
        // The operation names the wording `text`; on this page it is the field named after the template.
        const name = params.name as TemplateName
        const problem = (err.details.fields as { message: string }[] | undefined)?.[0]?.message ?? err.message
        return templates(user, ctx, { name, form: { values: { [name]: text }, errors: { [name]: problem }, alert: err.message } }, null, 422)
      }
      return seeOther(`/settings/templates?saved=${params.name}#template-${params.name}`)
    }, { ...owner(), accepts: FORM(4) })
    .post('/settings/templates/:name/reset', ({ user, ctx, params, body }) => {
      const version = versionOf((body ?? {}) as FormFields)
      try {
        resetTemplate(ctx, params.name, version)
      } catch (err) {
        if (!(err instanceof AppError && err.details.changed_since_opened === true && isTemplateName(params.name))) throw err
        const alert = `Someone else saved this text after this page was opened; nothing was reset. Saved now: "${String(err.details.saved_text)}". Reset to default again to drop it.`
        return templates(user, ctx, { name: params.name, form: { values: { [params.name]: String(err.details.saved_text) }, errors: {}, alert } }, null, 409)
      }
      return seeOther(`/settings/templates?saved=${params.name}#template-${params.name}`)
    }, { ...owner(), accepts: FORM(4) })

    .get('/settings/consent', ({ user, ctx, query }) => {
      const done = field(query, 'done')
      return consent(user, ctx, typeof query.phone === 'string' ? query.phone : null, done === 'stop' || done === 'start' ? done : null)
    }, owner())
    .post('/settings/consent/:change', ({ user, ctx, params, body }) => {
      if (params.change !== 'stop' && params.change !== 'start') throw new AppError('not_found', 'There is no page at this address.')
      const typed = field(body as FormFields, 'phone')
      try {
        const { phone } = (params.change === 'stop' ? stopTexts : startTexts)(ctx, typed)
        return seeOther(`/settings/consent?phone=${encodeURIComponent(phone)}&done=${params.change}`)
      } catch (err) {
        if (!isRefusal(err)) throw err
        return settingsPage({ user, tab: 'consent', title: 'Text consent', status: 422, body: consentBody(refusedForm(err, { phone: typed }), null, null, ctx.account.timeZone) })
      }
    }, { ...owner(), accepts: FORM(4) })

    .get('/settings/users', ({ user, ctx }) => users(user, ctx), owner())
    .post('/settings/users', async ({ user, ctx, body }) => {
      const f = body as FormFields
      const typed = { email: field(f, 'email'), role: field(f, 'role') }
      try {
        // The form posted again (a reload, a double click) adds no one and shows no password: it says it was done.
        let made: Awaited<ReturnType<typeof createUser>> | undefined
        const outcome = await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), formKeyOf(f, 'add'), { method: 'POST', path: '/settings/users', body: typed }, async () => {
          made = await createUser(ctx, { ...typed, password: field(f, 'password') })
          return { status: 201, body: { email: made.user.email } }
        })
        if (!made) return users(user, ctx, { done: `${(outcome.body as { email: string }).email} was added when this form was first sent; nothing was done again.` })
        // The new password goes in this response only: never in a URL, never stored but as its hash.
        return made.generated
          ? users(user, ctx, { shown: { email: made.user.email, password: made.password, made: 'added' } })
          : users(user, ctx, { done: `Added ${made.user.email} with the password you typed.` })
      } catch (err) {
        if (!isRefusal(err)) throw err
        return users(user, ctx, { form: refusedForm(err, typed), status: 422 })
      }
    }, { ...owner(), accepts: FORM(8) })
    .post('/settings/users/:id/:action', async ({ user, ctx, params, body }) => {
      const who = { id: params.id }
      try {
        if (params.action === 'password') {
          // Reloading the answer resets nothing again: the password shown then still holds.
          let reset: Awaited<ReturnType<typeof setUserPassword>> | undefined
          const outcome = await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), formKeyOf((body ?? {}) as FormFields, `password-${params.id}`), { method: 'POST', path: `/settings/users/${params.id}/password`, body: {} }, async () => {
            reset = await setUserPassword(ctx, who)
            return { status: 200, body: { email: reset.user.email } }
          })
          if (!reset) return users(user, ctx, { done: `The password of ${(outcome.body as { email: string }).email} was reset when this form was first sent; the password shown then still holds. Reset password again for another.` })
          return users(user, ctx, { shown: { email: reset.user.email, password: reset.password, made: 'reset' } })
        }
        if (params.action !== 'disable' && params.action !== 'enable') throw new AppError('not_found', 'There is no page at this address.')
        setUserDisabled(ctx, who, params.action === 'disable')
        return seeOther('/settings/users')
      } catch (err) {
        if (!isRefusal(err)) throw err
        return users(user, ctx, { alert: `Not done: ${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`, status: 422 })
      }
    }, { ...owner(), accepts: FORM(4) })
}

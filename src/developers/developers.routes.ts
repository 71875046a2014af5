import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { createKey } from '../accounts/create-key'
import { listApiKeys } from '../accounts/list-keys'
import { revokeKey } from '../accounts/revoke-key'
import type { OperationContext } from '../operations/operation-context'
import { blankForm, refusedForm } from '../pages/form'
import type { Html } from '../pages/html'
import { AppError, validationFailed } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { BODY_CAPS, routeProps } from '../platform/route-props'
import { randomBase62 } from '../platform/ids'
import { idempotencyOwner, withIdempotency, withIdempotencyAsync } from '../idempotency/idempotency'
import { compileChecker } from '../platform/validation'
import { dashboardPage } from '../dashboard/shell'
import type { SessionPlugin } from '../users/session.plugin'
import type { SessionUser } from '../users/sessions'
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, updateEndpoint } from '../webhooks/manage-endpoints'
import { listAttempts, pingEndpoint, resendDelivery } from '../webhooks/send-now'
import { CreateWebhookEndpointBody } from '../webhooks/webhook.model'
import { giveSendTime, webhookDeps } from '../webhooks/webhook.routes'
import { developersBody, type DevelopersView, type ShownSecret } from './developers.page'
import { deleteBody, endpointBody, type EndpointPageView } from './endpoint.page'

const checkEndpointBody = compileChecker(CreateWebhookEndpointBody, 'body')
const text = (f: FormFields, name: string) => (typeof f[name] === 'string' ? (f[name] as string) : '')
const list = (f: FormFields, name: string) => (Array.isArray(f[name]) ? (f[name] as unknown[]) : []).filter((v): v is string => typeof v === 'string')
const seeOther = (location: string) => new Response(null, { status: 303, headers: { location } })
const page = (user: SessionUser, title: string, body: Html, status?: number) => dashboardPage({ title, user, active: 'developers', body: body.text, status })

/**
 * `/developers` (owners only): API keys (create, shown once; revoke) and webhook endpoints (add,
 * pause, resume, rotate, delete, Send test, the last 100 attempts and Resend), each through the
 * operation the console or the API uses, so a page never does more than they do.
 */
export function developersRoutes(session: SessionPlugin, deps: RouteDeps) {
  const { manage, sendNow } = webhookDeps(deps)

  const overview = (user: SessionUser, ctx: OperationContext, forms: Partial<Pick<DevelopersView, 'keyForm' | 'endpointForm' | 'secret' | 'alreadyMade'>> = {}, status?: number) => {
    const { keys, sites } = listApiKeys(ctx)
    const endpoints = listEndpoints(ctx, { limit: '100' }).data
    return page(user, 'Developers', developersBody({
      keys, sites, endpoints, keyForm: forms.keyForm ?? blankForm(), endpointForm: forms.endpointForm ?? blankForm(), secret: forms.secret, alreadyMade: forms.alreadyMade, formKey: randomBase62(24), zone: ctx.account.timeZone,
    }), status)
  }
  /** The form's own key (a reload or a second click posts it again), or none when it is not one this page makes. */
  const formKeyOf = (f: FormFields, form: string) => (new RegExp(`^[0-9A-Za-z]{24}\\.${form}$`).test(text(f, 'idempotency_key')) ? text(f, 'idempotency_key') : undefined)
  const endpointPage = (user: SessionUser, ctx: OperationContext, id: string, extra: Omit<EndpointPageView, 'endpoint' | 'attempts' | 'formKey' | 'zone'> = {}, status?: number) =>
    page(user, 'Webhook endpoint', endpointBody({ endpoint: getEndpoint(ctx, id), attempts: listAttempts(ctx, id, 100).data, formKey: randomBase62(24), zone: ctx.account.timeZone, ...extra }), status)

  return new Elysia({ name: 'towline.developers' }).use(routeProps).use(session)
    .get('/developers', ({ user, ctx }) => overview(user, ctx), { signedIn: 'owner' })
    // Where a refused form was posted: reloading it comes back to the page.
    .get('/developers/keys', () => seeOther('/developers#keys'), { signedIn: 'owner' })
    .get('/developers/webhooks', () => seeOther('/developers#webhooks'), { signedIn: 'owner' })

    .post('/developers/keys', ({ body, user, ctx }) => {
      const f = body as FormFields
      const input = { name: text(f, 'name'), scopes: list(f, 'scopes'), sites: list(f, 'sites') }
      try {
        // The form posted again makes no second key. Its answer keeps the key's id and name only
        // (only the key's hash is stored): the secret is shown once, by the post that made it.
        let made: ReturnType<typeof createKey> | undefined
        const outcome = withIdempotency(deps, idempotencyOwner(ctx.actor), formKeyOf(f, 'key'), { method: 'POST', path: '/developers/keys', body: input }, () => {
          made = createKey(ctx, input)
          return { status: 201, body: { id: made.id, name: made.name } }
        })
        if (!made) return overview(user, ctx, { alreadyMade: outcome.body as { id: string; name: string } })
        const secret: ShownSecret = { heading: `Key "${made.name}" created`, label: 'New key', value: made.key, note: 'Send it as the header Authorization: Bearer <key>.' }
        return overview(user, ctx, { secret })
      } catch (err) {
        return overview(user, ctx, { keyForm: refusedForm(err, f) }, 422)
      }
    }, { signedIn: 'owner', accepts: { kind: 'form', maxBytes: BODY_CAPS.form } })

    .post('/developers/keys/:id/revoke', ({ params, ctx }) => {
      revokeKey(ctx, params.id)
      return seeOther('/developers#keys')
    }, { signedIn: 'owner' })

    .post('/developers/webhooks', async ({ body, user, ctx }) => {
      const f = body as FormFields
      const description = text(f, 'description').trim()
      const input = { url: text(f, 'url').trim(), events: list(f, 'events'), ...(description ? { description } : {}) }
      try {
        const problems = checkEndpointBody(input)
        if (problems) throw validationFailed(problems)
        // The form posted again makes no second endpoint, and shows its secret again, as the API's replay does.
        const outcome = await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), formKeyOf(f, 'endpoint'), { method: 'POST', path: '/developers/webhooks', body: input }, async () => {
          const e = await createEndpoint(manage, ctx, input)
          return { status: 201, body: { url: e.url, secret: e.secret } }
        })
        const e = outcome.body as { url: string; secret: string }
        return overview(user, ctx, { secret: { heading: `Endpoint added: ${e.url}`, label: 'Signing secret', value: e.secret, note: 'Receivers check X-SVC-Signature with it.' } })
      } catch (err) {
        return overview(user, ctx, { endpointForm: refusedForm(err, f) }, 422)
      }
    }, { signedIn: 'owner', accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 40 } })

    .get('/developers/webhooks/:id', ({ params, query, user, ctx }) => {
      const sent = typeof query.sent === 'string' ? query.sent : undefined
      return endpointPage(user, ctx, params.id, { sent })
    }, { signedIn: 'owner' })

    .post('/developers/webhooks/:id/test', async ({ params, ctx, request }) => {
      giveSendTime(deps, request)
      const outcome = await pingEndpoint(sendNow, ctx, params.id)
      return seeOther(`/developers/webhooks/${params.id}?sent=${outcome.delivery_id}`)
    }, { signedIn: 'owner' })

    .post('/developers/webhooks/:id/deliveries/:delivery_id/resend', async ({ params, user, ctx, request }) => {
      giveSendTime(deps, request)
      try {
        const outcome = await resendDelivery(sendNow, ctx, params.id, params.delivery_id)
        return seeOther(`/developers/webhooks/${params.id}?sent=${outcome.delivery_id}`)
      } catch (err) {
        if (err instanceof AppError && err.errorCode === 'delivery_in_flight') return endpointPage(user, ctx, params.id, { alert: err.message }, err.status)
        throw err
      }
    }, { signedIn: 'owner' })

    .post('/developers/webhooks/:id/pause', async ({ params, ctx }) => {
      await updateEndpoint(manage, ctx, params.id, { status: 'paused' })
      return seeOther(`/developers/webhooks/${params.id}`)
    }, { signedIn: 'owner' })

    .post('/developers/webhooks/:id/resume', async ({ params, ctx }) => {
      await updateEndpoint(manage, ctx, params.id, { status: 'active' })
      return seeOther(`/developers/webhooks/${params.id}`)
    }, { signedIn: 'owner' })

    .post('/developers/webhooks/:id/rotate', async ({ params, user, ctx, body }) => {
      // The form posted again (a reload of this answer) rotates once and shows the same secret, as the API's replay does.
      const outcome = await withIdempotencyAsync(deps, idempotencyOwner(ctx.actor), formKeyOf(body as FormFields, 'rotate'), { method: 'POST', path: `/developers/webhooks/${params.id}/rotate`, body: null }, async () => {
        const { endpoint, secret } = await updateEndpoint(manage, ctx, params.id, { rotate_secret: true })
        return { status: 200, body: { id: endpoint.id, secret } }
      })
      const rotated = outcome.body as { id: string; secret: string }
      const shown: ShownSecret = { heading: 'Secret rotated', label: 'Signing secret', value: rotated.secret, note: 'The old secret keeps signing beside it for 24 hours, so receivers can switch over.' }
      return endpointPage(user, ctx, rotated.id, { secret: shown })
    }, { signedIn: 'owner', accepts: { kind: 'form', maxBytes: BODY_CAPS.form } })

    .get('/developers/webhooks/:id/delete', ({ params, user, ctx }) => page(user, 'Delete endpoint', deleteBody(getEndpoint(ctx, params.id))), { signedIn: 'owner' })
    .post('/developers/webhooks/:id/delete', ({ params, ctx }) => {
      deleteEndpoint(manage, ctx, params.id)
      return seeOther('/developers#webhooks')
    }, { signedIn: 'owner' })
}

import { privateImage } from '../pages/private-image'
import { thumbnailResponse } from '../pages/thumbnail'
import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { idempotencyOwner, withIdempotency } from '../idempotency/idempotency'
import { acknowledgeJob } from '../jobs/acknowledge-job'
import { addPhoto } from '../jobs/add-photo'
import { captureSignature } from '../jobs/capture-signature'
import { changeStatus } from '../jobs/change-status'
import { findJobByLink } from '../jobs/find-job-by-link'
import { readJobPhoto } from '../jobs/job-photos'
import { readJobSignature } from '../jobs/job-signatures'
import { isStatus, type JobStatus } from '../jobs/job-status'
import type { JobRow } from '../jobs/job.view'
import type { OperationContext } from '../operations/operation-context'
import { phonePageHeaders } from '../pages/layout'
import { htmlResponse } from '../pages/html'
import { goneSentence } from '../pages/gone-links'
import { AppError, validationFailed } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { randomBase62 } from '../platform/ids'
import { BODY_CAPS, isOversizedBody, photoTooLarge, routeProps } from '../platform/route-props'
import type { FieldProblem } from '../platform/validation'
import { parsePositionReport, PositionError, recordUnitPosition } from '../units/record-position'
import type { SessionPlugin } from '../users/session.plugin'
import { readDriverPage, SHARING_STATUSES } from './driver.data'
import { DRIVER_DONE, driverActions, driverActionsKey, driverFacts, driverPage, statusLabel, type DriverPageState } from './driver.page'
import { driverStream } from './driver-stream'
import { heartbeatTicks, resumeFrom } from '../pages/sse'
import { DRIVER_SERVICE_WORKER } from './service-worker'

const text = (f: FormFields, name: string) => (typeof f[name] === 'string' ? (f[name] as string).trim() : '')
/** A form's idempotency key as the page writes it (`<24 base62>.<action>`) or the offline queue does (a UUID). */
const FORM_KEY = /^[0-9A-Za-z-]{20,64}(\.[a-z_-]{2,40})?$/

/** An opened driver link: the job as it is now and the driver's operation context. */
interface OpenLink { job: JobRow; ctx: OperationContext; token: string; base: string }

/**
 * `/d/{token}`: the driver's page and its actions, each through the same operation as the API
 * with actor `driver`; its state and live stream; the job's photos and signatures for this link.
 * A link taken back (reassign, unassign) or 24 hours past the job's finish answers 410 for every
 * request, reads and writes alike, and nothing is written. Also `/jobs/{id}/signatures/{sigId}`
 * for the account's sessions (the job page's signatures).
 */
export function driverRoutes(session: SessionPlugin, deps: RouteDeps) {
  const driverHeartbeatTicks = heartbeatTicks(deps.config.idleTimeoutS)
  const open = (token: string): OpenLink => {
    const found = findJobByLink(deps.db, 'driver', token, { nowMs: deps.clock.now(), trackingLinkMs: deps.config.trackingLinkMs })
    // Worded as for any address with no page: nothing tells a live token from a guess.
    if (!found) throw new AppError('not_found', 'There is no page at this address.')
    if ('gone' in found) throw new AppError('link_gone', goneSentence('driver', found.gone, ''), { reason: found.gone })
    const job = found.job
    if (!job.unitId) throw new AppError('link_gone', goneSentence('driver', 'unassigned', ''), { reason: 'unassigned' })
    return { job, token, base: `/d/${token}`, ctx: deps.contexts.forDriver({ accountId: job.accountId, jobId: job.id, unitId: job.unitId }) }
  }

  const render = (link: OpenLink, state: Partial<DriverPageState>, status = 200) => {
    const position = deps.bus.position
    const data = readDriverPage(link.ctx, link.job.id)
    return htmlResponse(driverPage(data, { base: link.base, formKey: randomBase62(24), position, ...state }), { status, headers: { 'cache-control': 'no-store', ...phonePageHeaders(deps.config.tileUrl) } })
  }

  /**
   * Runs one posted action under its form's idempotency key, then 303 back to the page saying
   * what was done; a refusal renders the page as it is now with one alert (409 stale or refused,
   * 422 for a field), and nothing written.
   */
  const perform = (link: OpenLink, action: string, f: FormFields, extra: Record<string, string>, run: (guard: { expectedStatus?: JobStatus }) => string): Response => {
    const expected = text(f, 'expected_status')
    const guard = isStatus(expected) ? { expectedStatus: expected } : {}
    const key = text(f, 'idempotency_key')
    const values: Record<string, string> = {}
    for (const [k, v] of Object.entries(f)) if (typeof v === 'string') values[k] = v
    try {
      // The form's own key: a double tap, a resent form or the offline queue's replay acts once.
      const made = withIdempotency(deps, idempotencyOwner(link.ctx.actor), FORM_KEY.test(key) ? key : undefined, { method: 'POST', path: `/d/${action}`, body: { ...values, ...extra } },
        () => ({ status: 200, body: { done: run(guard) } }))
      return new Response(null, { status: 303, headers: { location: `${link.base}?done=${(made.body as { done: string }).done}` } })
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      const fields = (err.details.fields as FieldProblem[] | undefined) ?? []
      switch (err.errorCode) {
        case 'job_stale': {
          const now = String(err.details.current_status ?? '')
          return render(link, { alert: `The job changed: it is now ${statusLabel(now)}, not ${statusLabel(expected)} as this page showed. Nothing was done; the page now shows the job as it is.` }, 409)
        }
        case 'validation_failed':
        case 'payload_too_large': {
          const errors: Record<string, string> = {}
          for (const p of fields) errors[p.path] ??= p.message
          const alert = `Nothing was saved: ${fields.map((p) => `${p.path === 'signer_name' ? 'Signer name' : p.path === 'photo' ? 'the photo' : p.path === 'to' ? 'the status' : 'the signature'} ${p.message}`).join('; ')}.`
          return render(link, { alert, photoError: errors.photo, signature: action === 'signature' ? { signerName: text(f, 'signer_name'), errors } : undefined }, err.status)
        }
        case 'idempotency_key_reused':
          return render(link, { alert: 'This form was already sent from this page with other values. Nothing more was done; the page now shows the job as it is.' }, 409)
        case 'job_transition_refused':
        case 'invalid_state':
          return render(link, { alert: `${err.message} Nothing was done.` }, 409)
        default:
          throw err
      }
    }
  }

  const form = { accepts: { kind: 'form' as const, maxBytes: BODY_CAPS.form, maxFields: 8 } }
  const multipart = { accepts: { kind: 'multipart' as const, maxBytes: BODY_CAPS.photo, maxFields: 8 } }

  return new Elysia({ name: 'towline.driver' }).use(routeProps).use(session)
    // Served under /d/ so its scope covers the driver's pages; no-cache so a new version is picked up.
    .get('/d/sw.js', () => new Response(DRIVER_SERVICE_WORKER, { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' } }), { detail: { hide: true } })
    .get('/d/:token', ({ params, query }) => {
      const done = typeof query.done === 'string' ? DRIVER_DONE[query.done] : undefined
      return render(open(params.token), { done })
    }, { detail: { hide: true } })
    .get('/d/:token/state', ({ params }) => {
      const link = open(params.token)
      const position = deps.bus.position
      const d = readDriverPage(link.ctx, link.job.id)
      return {
        position, status: d.job.status, status_label: statusLabel(d.job.status), acknowledged: d.acknowledged, moves: d.moves, sharing: d.sharing,
        actions_key: driverActionsKey(d), actions_html: driverActions(d, { base: link.base, formKey: randomBase62(24), position }).text,
        facts_html: driverFacts(d).text,
      }
    }, { answers: 'json', detail: { hide: true } })
    .get('/d/:token/events', ({ params, request, query }) => {
      const link = open(params.token)
      return driverStream({ bus: deps.bus, isDraining: deps.isDraining, heartbeatTicks: driverHeartbeatTicks, stillLive: () => { try { return open(params.token).job.id === link.job.id } catch { return false } } },
        request, link.job.id, resumeFrom(request, query as Record<string, unknown>))
    }, { answers: 'json', detail: { hide: true } })
    .post('/d/:token/acknowledge', ({ params, body }) => {
      const link = open(params.token)
      // The status the page showed does not matter to an acknowledgement (a press queued offline
      // while the dispatcher moved the job on still says the driver saw it): the operation checks the rest.
      return perform(link, 'acknowledge', body as FormFields, {}, () => { acknowledgeJob(link.ctx, link.job.id); return 'acknowledged' })
    }, { ...form, detail: { hide: true } })
    .post('/d/:token/status', ({ params, body }) => {
      const link = open(params.token)
      const f = body as FormFields
      return perform(link, 'status', f, {}, (guard) => {
        const to = text(f, 'to')
        if (!isStatus(to)) throw validationFailed([{ path: 'to', message: 'is not a status this page can move the job to' }])
        const reason = to === 'goa' ? text(f, 'reason') : ''
        changeStatus(link.ctx, link.job.id, { to, expectedStatus: guard.expectedStatus, ...(reason ? { reason } : {}) })
        return to === 'goa' ? 'goa' : 'moved'
      })
    }, { ...form, detail: { hide: true } })
    .post('/d/:token/photos', async ({ params, body }) => {
      const link = open(params.token)
      // Over 10 MB without the page's script (which shrinks a photo before sending): said beside Add photo.
      if (isOversizedBody(body)) return perform(link, 'photo', {}, {}, () => { throw photoTooLarge() })
      const f = body as FormFields
      const bytes = f.photo instanceof File ? new Uint8Array(await f.photo.arrayBuffer()) : new Uint8Array()
      const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
      return perform(link, 'photo', f, { photo_sha256: sha256 }, () => { addPhoto(link.ctx, link.job.id, bytes); return 'photo' })
    }, { accepts: { ...multipart.accepts, oversized: 'handler' as const }, detail: { hide: true } })
    .post('/d/:token/signature', async ({ params, body }) => {
      const link = open(params.token)
      const f = body as FormFields
      const png = f.signature instanceof File ? new Uint8Array(await f.signature.arrayBuffer()) : new Uint8Array()
      const sha256 = new Bun.CryptoHasher('sha256').update(png).digest('hex')
      return perform(link, 'signature', f, { signature_sha256: sha256 }, () => {
        captureSignature(link.ctx, link.job.id, { signerName: text(f, 'signer_name'), png })
        return 'signature'
      })
    }, { ...multipart, detail: { hide: true } })
    .post('/d/:token/position', ({ params, body }) => {
      const link = open(params.token)
      if (!SHARING_STATUSES.includes(link.job.status as JobStatus) || link.job.archivedAt !== null) {
        throw new AppError('invalid_state', `The job is ${link.job.status}: the phone's position is shared only while the job is active.`, { reason: 'not_active' })
      }
      const b = (body ?? {}) as Record<string, unknown>
      try {
        const now = deps.clock.now()
        const fix = parsePositionReport({}, { device_id: 'driver-page', location: { timestamp: b.timestamp, coords: { latitude: b.lat, longitude: b.lng, accuracy: b.accuracy, heading: b.heading, speed: b.speed } } }, now)
        return { stored: recordUnitPosition(deps.db, deps.clock, link.job.unitId!, fix).stored }
      } catch (err) {
        if (err instanceof PositionError) throw validationFailed([{ path: 'position', message: err.message }])
        throw err
      }
    }, { answers: 'json', accepts: { kind: 'json', maxBytes: 4096 }, detail: { hide: true } })
    .get('/d/:token/photos/:photoId', ({ params, request }) => {
      const link = open(params.token)
      const photo = readJobPhoto(link.ctx, link.job.id, params.photoId)
      return privateImage(request, photo.data, photo.contentType, photo.sha256)
    }, { detail: { hide: true } })
    .get('/d/:token/photos/:photoId/thumb', ({ params, request }) => {
      const link = open(params.token)
      return thumbnailResponse(request, readJobPhoto(link.ctx, link.job.id, params.photoId))
    }, { detail: { hide: true } })
    .get('/d/:token/signatures/:sigId', ({ params, request }) => {
      const link = open(params.token)
      const sig = readJobSignature(link.ctx, link.job.id, params.sigId)
      return privateImage(request, sig.data, sig.contentType, params.sigId)
    }, { detail: { hide: true } })
    .get('/jobs/:id/signatures/:sigId', ({ ctx, params, request }) => {
      const sig = readJobSignature(ctx, params.id, params.sigId)
      return privateImage(request, sig.data, sig.contentType, params.sigId)
    }, { signedIn: 'dispatcher' })
}

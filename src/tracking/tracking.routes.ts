import { Elysia } from 'elysia'
import { charCount } from '../platform/chars'
import type { RouteDeps } from '../app'
import { findAccountById } from '../accounts/account.queries'
import { addCustomerMessage } from '../jobs/add-customer-message'
import { rateJob } from '../jobs/rate-job'
import { recordCustomerLocation } from '../jobs/record-customer-location'
import type { JobRow } from '../jobs/job.view'
import { refusedForm, type FormState } from '../pages/form'
import { htmlResponse } from '../pages/html'
import { heartbeatTicks, resumeFrom, sseResponse } from '../pages/sse'
import { AppError, validationFailed } from '../platform/errors'
import type { FormFields } from '../platform/forms'
import { limiterFor } from '../platform/shared-rate-limit'
import { BODY_CAPS, routeProps } from '../platform/route-props'
import { readCustomerInvoice } from '../invoices/get-invoice'
import { invoiceDocumentHtml } from '../invoices/invoice.page'
import { layout, phonePageHeaders } from '../pages/layout'
import { payLinkResponse } from './pay-link'
import { TrackingHub, type TrackingMessage } from './tracking-hub'
import { lookUpTracking, trackedJob } from './tracking-link'
import { liveHtml, MESSAGE_MAX, nothingToPayPage, ratingHtml, trackingPage, type TrackingForm } from './tracking.page'
import { findPayableInvoice, readTrackingState, type TrackingState } from './tracking-state'

const encoder = new TextEncoder()

/** What a done action says on the page it returns to (`?done=`): only these words, never text from the URL. */
const DONE: Record<TrackingForm, string> = {
  location: 'Your location was sent. Thank you.',
  message: 'Your message was sent.',
  rating: 'Thank you for your rating.',
}

/**
 * What one job's tracking links may send (messages, locations, ratings, Pay): an allowance of
 * this many that refills at this many a minute (a token bucket, as the API keys' limits), so 20
 * at once and then one every 3 seconds: more than a customer taps, few enough that a forwarded
 * or scripted link cannot flood the board, the timeline and the webhook receivers. Counted per
 * job, so a new link does not reset it.
 */
export const TRACKING_POSTS_PER_MINUTE = 20

const text = (f: FormFields, name: string) => (typeof f[name] === 'string' ? (f[name] as string) : '')
/** A number typed into a form: NaN when blank or not a number (the operation says why). */
const numberOf = (raw: string) => (raw.trim() === '' ? NaN : Number(raw.trim()))

/** Where a stream resumes from: Last-Event-ID, else `?last_event_id=` (web/shared/live.ts), else `?after=` (the page's own position). */
/**
 * `/t/{token}`: the customer's tracking page, its state as JSON, its live stream, its forms
 * (location, message, rating) and its Pay link. The token is the capability: no session. A
 * link that was replaced or expired answers 410; a token that never was one, the same 404 as
 * any address with no page.
 */
export function trackingRoutes(deps: RouteDeps) {
  const path = (token: string) => `/t/${token}`
  // The stream's positions are the job's own event count, never the service-wide event position:
  // a tracking link must not tell how busy the company is.
  const stateOf = (token: string, job: JobRow): TrackingState =>
    readTrackingState(deps.db, job, { trackingPath: path(token), streamPosition: job.eventSeq })
  const customer = (job: JobRow) => deps.contexts.forCustomer({ accountId: job.accountId, jobId: job.id })

  const messageFor = (token: string): TrackingMessage => {
    const found = lookUpTracking(deps, token)
    if (!found || !('job' in found)) return { gone: goneMessage(found?.gone ?? 'This tracking link no longer works.') }
    const state = stateOf(token, found.job)
    const data = JSON.stringify({ state, live_html: liveHtml(state).text, rating_html: ratingHtml(state, path(token)).text })
    return { state: encoder.encode(`id: ${state.stream_position}\nevent: state\ndata: ${data}\n\n`) }
  }
  const goneFor = (token: string) => {
    const found = lookUpTracking(deps, token)
    return found && 'job' in found ? null : goneMessage(found?.gone ?? 'This tracking link no longer works.')
  }
  const hub = new TrackingHub({ db: deps.db, bus: deps.bus, messageFor, goneFor, heartbeatTicks: heartbeatTicks(deps.config.idleTimeoutS), logger: deps.logger, isDraining: deps.isDraining })

  const page = (token: string, job: JobRow, opts: { alert?: string; done?: string; forms?: Partial<Record<TrackingForm, FormState>>; status?: number } = {}) =>
    htmlResponse(trackingPage(stateOf(token, job), { path: path(token), tileUrl: deps.config.tileUrl, extras: { alert: opts.alert, done: opts.done, forms: opts.forms } }), { status: opts.status, headers: phonePageHeaders(deps.config.tileUrl) })
  const done = (token: string, what: TrackingForm) => new Response(null, { status: 303, headers: { location: `${path(token)}?done=${what}` } })
  /** Runs a form's operation: 303 to the page when it succeeds, the page again with the form's messages when it is refused. */
  const act = (token: string, form: TrackingForm, fields: FormFields, run: (job: JobRow) => void) => {
    const job = trackedJob(deps, token)
    const wait = slowDown(token, job)
    if (wait) return wait
    try {
      run(job)
      return done(token, form)
    } catch (err) {
      if (!(err instanceof AppError) || !['validation_failed', 'invalid_state'].includes(err.errorCode)) throw err
      // The job moved on (rated already, finished): the form may be gone from the page, so the page says why.
      if (err.errorCode === 'invalid_state') return page(token, trackedJob(deps, token), { alert: err.message, status: err.status })
      const state = refusedForm(err, fields)
      // The location's fields are hidden (the phone fills them): its message goes in the form's alert.
      if (form === 'location') state.alert = err.message
      return page(token, trackedJob(deps, token), { forms: { [form]: state }, status: err.status })
    }
  }
  const form = { accepts: { kind: 'form' as const, maxBytes: BODY_CAPS.form, maxFields: 8 } }
  const limiter = limiterFor(deps.db, deps.clock, { post: TRACKING_POSTS_PER_MINUTE })
  /** The page saying to wait (429, Retry-After), or null when this link may act now. */
  const slowDown = (token: string, job: JobRow): Response | null => {
    const d = limiter.take(job.id, 'post')
    if (d.allowed) return null
    const res = page(token, job, { alert: `Too many requests from this page. Nothing was sent; please wait ${d.retryAfterS} second${d.retryAfterS === 1 ? '' : 's'} and try again.`, status: 429 })
    res.headers.set('retry-after', String(d.retryAfterS))
    return res
  }

  return new Elysia({ name: 'towline.tracking' }).use(routeProps)
    .get('/t/:token', ({ params, query }) => {
      const job = trackedJob(deps, params.token)
      const doneKey = typeof query.done === 'string' && query.done in DONE ? (query.done as TrackingForm) : undefined
      return page(params.token, job, { done: doneKey && DONE[doneKey] })
    }, { detail: { hide: true } })
    .get('/t/:token/state', ({ params }) => stateOf(params.token, trackedJob(deps, params.token)), { answers: 'json', detail: { hide: true } })
    .get('/t/:token/events', ({ params, request, query }) => {
      const job = trackedJob(deps, params.token)
      return trackingStream(hub, { token: params.token, jobId: job.id }, request, resumeFrom(request, query as Record<string, unknown>))
    }, { answers: 'json', detail: { hide: true } })
    .post('/t/:token/location', ({ params, body }) => {
      const f = body as FormFields
      return act(params.token, 'location', f, (job) => recordCustomerLocation(customer(job), job.id, {
        lat: numberOf(text(f, 'lat')), lng: numberOf(text(f, 'lng')), accuracyM: text(f, 'accuracy_m').trim() === '' ? null : numberOf(text(f, 'accuracy_m')),
      }))
    }, { ...form, detail: { hide: true } })
    .post('/t/:token/message', ({ params, body }) => {
      const f = body as FormFields
      return act(params.token, 'message', f, (job) => {
        const message = text(f, 'message').trim()
        if (!message) throw validationFailed([{ path: 'message', message: 'Write a message first.' }])
        if (charCount(message) > MESSAGE_MAX) throw validationFailed([{ path: 'message', message: `A message can be at most ${MESSAGE_MAX} characters.` }])
        addCustomerMessage(customer(job), job.id, { text: message, via: 'tracking_page' })
      })
    }, { ...form, detail: { hide: true } })
    .post('/t/:token/rating', ({ params, body }) => {
      const f = body as FormFields
      return act(params.token, 'rating', f, (job) => {
        const raw = text(f, 'rating').trim()
        rateJob(customer(job), job.id, { rating: /^[1-5]$/.test(raw) ? Number(raw) : NaN, comment: text(f, 'comment') || null })
      })
    }, { ...form, detail: { hide: true } })
    .get('/t/:token/pay', ({ params }) => {
      const job = trackedJob(deps, params.token)
      const wait = slowDown(params.token, job)
      if (wait) return wait
      const paymentUrl = findAccountById(deps.db, job.accountId)?.paymentUrl ?? null
      try {
        return payLinkResponse(customer(job), job.id, findPayableInvoice(deps.db, job), paymentUrl, `${path(params.token)}/invoice`)
          ?? htmlResponse(nothingToPayPage(stateOf(params.token, job), path(params.token)))
      } catch (err) {
        // An archived job refuses every write, the Pay link's record of its opening included: the page says why.
        if (err instanceof AppError && err.errorCode === 'invalid_state') return page(params.token, job, { alert: err.message, status: err.status })
        throw err
      }
    }, { detail: { hide: true } })
    .get('/t/:token/invoice', ({ params }) => {
      const job = trackedJob(deps, params.token)
      const doc = readCustomerInvoice(deps.db, job)
      if (!doc) return htmlResponse(nothingToPayPage(stateOf(params.token, job), path(params.token)))
      return htmlResponse(layout({ title: `Invoice ${doc.invoice.number}`, body: invoiceDocumentHtml(doc, { customer: true, backHref: path(params.token), backText: 'Back to your tow' }) }))
    }, { detail: { hide: true } })
}

/** The last message of a dead link's stream: the page says so. */
function goneMessage(sentence: string): Uint8Array {
  return encoder.encode(`event: gone\ndata: ${JSON.stringify({ message: sentence })}\n\n`)
}

/** A tracking page's Server-Sent Events stream: `hello`, the state when it changed since `after`, then each new state; `gone` and the end when the link dies. */
function trackingStream(hub: TrackingHub, link: { token: string; jobId: string }, request: Request, after: number | null): Response {
  return sseResponse(request, { position: hub.positionOf(link.jobId), resumed_from: after }, (sink) => hub.connect({ ...link, send: sink.send, close: sink.close }, after))
}

import { Elysia } from 'elysia'
import { createAccessLog, type Logger } from './log'
import { AppError, renderError, validationFailed } from './errors'
import { requestInfo } from './request-info'
import { randomBase62 } from './ids'
import { BodyError, readBody } from './body'
import { loneSurrogatePath, MAX_JSON_DEPTH, nulCharacterPath, parseUntrustedJson } from './json'
import { problemsOf, type FieldProblem, type RouteCheckers } from './validation'
import { FormError, parseMultipart, parseUrlEncoded } from './forms'
import { OVERSIZED_BODY, resolveRouteProps, type Answers, type BodySpec, type RouteProps } from './route-props'
import { comesFromOwnPages, publicOriginOf } from './same-origin'
import { errorPage } from './error-page'
import { dataResponseHeaders, securityHeaders } from './security-headers'
import type { PreRouted } from './pre-routed'
import { clientAddress, type TrustedProxies } from './client-address'

const SURROGATE_MESSAGE = 'holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair); send well-formed text'

/** A byte count as people read it: `256 KiB`, `10 MiB`. */
const sizeText = (bytes: number) => (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`)

/** The 413 of a body over its route's cap; the connection closes, so the rest of the upload is never taken. */
function tooLarge(limitBytes: number): AppError {
  return new AppError('payload_too_large', `The request body is larger than ${sizeText(limitBytes)}.`, { limit_bytes: limitBytes }, { connection: 'close' })
}

/**
 * Reads an API body as one JSON object, whatever its Content-Type: capped while reading (413),
 * UTF-8, nested at most MAX_JSON_DEPTH deep (400), and holding no lone surrogate (422).
 */
async function readJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  let bytes: Uint8Array
  try {
    bytes = await readBody(request, maxBytes)
  } catch (err) {
    if (err instanceof BodyError && err.problem === 'too_large') throw tooLarge(maxBytes)
    throw new AppError('invalid_json', 'The request body ended before it was complete.')
  }
  if (bytes.byteLength === 0) return {}
  const info = requestInfo(request)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    info.bodyProblem = 'not_json'
    throw new AppError('invalid_json', 'The request body is not UTF-8 text.')
  }
  const parsed = parseUntrustedJson(text)
  if (!parsed.ok) {
    info.bodyProblem = 'not_json'
    throw parsed.problem === 'too_deep'
      ? new AppError('invalid_json', `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`, { max_depth: MAX_JSON_DEPTH })
      : new AppError('invalid_json', 'The request body is not valid JSON.')
  }
  const value = parsed.value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    info.bodyProblem = 'not_object'
    throw new AppError('invalid_json', 'The request body must be a JSON object.')
  }
  const lone = loneSurrogatePath(value, text)
  if (lone !== null) throw validationFailed([{ path: lone, message: SURROGATE_MESSAGE }])
  const nul = nulCharacterPath(value, text)
  if (nul !== null) throw validationFailed([{ path: nul, message: 'holds the NUL character (\\u0000), which no text may hold' }])
  return value as Record<string, unknown>
}

/** `details.fields` for a ValidationError that reached Elysia's own validator, read without stringifying its value. */
function fieldsOf(error: any): { path: string; message: string }[] {
  const root = error?.type === 'query' ? 'query' : 'body'
  try {
    const fields = problemsOf(error.validator.Errors(error.value), root)
    if (fields.length) return fields
  } catch {}
  return [{ path: root, message: 'is not valid' }]
}

const INTERNAL_MESSAGE = 'Something went wrong on our side. The request id identifies it in the logs.'

/** Renders an error the way the route answers: JSON, plain text (device and provider callbacks) or an HTML page. */
function renderFor(answers: Answers, err: AppError, request: Request, htmlSentence?: string): Response {
  if (answers === 'json') return renderError(err)
  // A page asked for without a session: to the sign-in page, which brings the user back here after.
  if (answers === 'html' && err.errorCode === 'not_signed_in') return signInRedirect(request)
  if (answers === 'text') return new Response(`${err.message}\n`, { status: err.status, headers: { ...err.headers, 'content-type': 'text/plain; charset=utf-8' } })
  const sentence = htmlSentence ?? (err.errorCode === 'internal_error'
    ? 'Something went wrong on our side. If it keeps happening, give the request id below to whoever runs this service.'
    : err.message)
  return errorPage(err.status, sentence, requestInfo(request).requestId, err.headers)
}

/** 303 to /login, with the page asked for (a GET's own path and query) to return to. */
function signInRedirect(request: Request): Response {
  const url = new URL(request.url)
  const next = request.method === 'GET' ? url.pathname + url.search : formPageOf(request, url)
  const back = next && next !== '/' ? `?next=${encodeURIComponent(next)}` : ''
  return new Response(null, { status: 303, headers: { location: `/login${back}` } })
}

/**
 * The page a form was posted from, to come back to after signing in (its script puts back what
 * was typed): the Referer, which the pages send on their own origin only, when it names this
 * origin; else none.
 */
function formPageOf(request: Request, url: URL): string | null {
  const referer = request.headers.get('referer')
  if (!referer) return null
  try {
    const from = new URL(referer)
    if (from.origin !== url.origin || from.pathname === '/login') return null
    // What the last form did (`?done=`) is not said again on the way back.
    from.searchParams.delete('done')
    return from.pathname + from.search
  } catch {
    return null
  }
}

/**
 * The path of a request no route matched, as the logs may show it: a segment shaped like a
 * tracking or driver link's token (`/t/{token}/foo`, a wrong method on `/d/{token}`, a token with
 * a stop after it), and whatever follows `/t/` or `/d/`, is written `:token`, as a matched
 * route's pattern would be. Links must never reach the log.
 */
export function loggedPath(url: string): string {
  // A segment that starts with a token's 24 characters (a link pasted with a stop or a bracket
  // after it), percent-encoded or not, and whatever follows /t/ or /d/.
  const token = (segment: string) => {
    let plain = segment
    try { plain = decodeURIComponent(segment) } catch { /* not encoded text: read as it is */ }
    return /^[0-9A-Za-z]{24}/.test(plain)
  }
  const segments = new URL(url).pathname.split('/')
  return segments.map((segment, i) => ((i === 2 && (segments[1] === 't' || segments[1] === 'd') && segment !== '') || token(segment) ? ':token' : segment)).join('/')
}

/** How an unmatched request is answered: JSON under /api/, a page elsewhere. */
const answersByPath = (pathname: string): Answers => (pathname.startsWith('/api/') ? 'json' : 'html')

/** Turns a body that could not be read (over its cap, or cut off) into the error of its kind. */
function bodyRefused(err: BodyError, kind: BodySpec['kind']): AppError {
  if (err.problem === 'too_large') return tooLarge(err.limitBytes)
  return new AppError(kind === 'json' ? 'invalid_json' : 'invalid_form', 'The request body ended before it was complete.')
}

/** Reads a body as its route declared it (see route-props.ts); `{}` for a route that reads none. */
async function readDeclaredBody(request: Request, spec: BodySpec | undefined): Promise<unknown> {
  if (!spec) return {}
  if (spec.kind === 'json') return readJsonObject(request, spec.maxBytes)
  let bytes: Uint8Array
  try {
    bytes = await readBody(request, spec.maxBytes)
  } catch (err) {
    if (err instanceof BodyError && err.problem === 'too_large' && spec.oversized === 'handler') {
      requestInfo(request).bodyProblem = 'too_large'
      return OVERSIZED_BODY
    }
    if (err instanceof BodyError) throw bodyRefused(err, spec.kind)
    throw err
  }
  // Device callbacks take what they are sent; invalid bytes become U+FFFD, as form decoding does.
  if (spec.kind === 'text') return new TextDecoder().decode(bytes)
  try {
    return spec.kind === 'form'
      ? parseUrlEncoded(bytes, spec.maxFields)
      : parseMultipart(bytes, request.headers.get('content-type'), spec.maxFields)
  } catch (err) {
    if (!(err instanceof FormError)) throw err
    requestInfo(request).bodyProblem = 'not_form'
    throw new AppError('invalid_form', err.message)
  }
}

/** Turns an Elysia route path (`/jobs/:id`, `/files/*`) into a pattern its requests' paths match. */
function routePattern(path: string): RegExp {
  const source = path.split('/').map((seg) => seg === '*' ? '.*' : seg.startsWith(':') ? (seg.endsWith('?') ? '[^/]*' : '[^/]+') : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('/')
  return new RegExp(`^${source}/?$`)
}

/**
 * The one error renderer and body reader, as a global Elysia plugin. Before a body is read it
 * settles the route's properties (route-props.ts), refuses a cross-site page request (403) and
 * authenticates API keys; then it reads the body the route declared, under its cap. Every error
 * leaves the way the route answers: `{ error: { code, message, details } }` for the API and
 * machine routes, plain text for device callbacks, an HTML page for pages.
 */
export function httpPlugin(deps: {
  logger: Logger
  /** The API's JSON cap, for /api/ routes that declare no body of their own. */
  maxBodyBytes: number
  /** The public URL: state-changing page requests must come from its origin. */
  publicUrl: string
  /** Runs before a body is read or an input checked (authentication, so that 401/403 come before 400/413/422). */
  beforeBody?: (request: Request, route: string) => void
  /** The compiled input checks of a route (`GET`, `/api/v1/jobs/:id`). */
  checkersOf?: (method: string, route: string) => RouteCheckers | undefined
  /** What a route declared with the `answers`, `accepts` and `sameOrigin` options. */
  declaredOf?: (method: string, route: string) => Partial<RouteProps> | undefined
  /** Every route, so that a known path asked with another method is told apart (405) from an unknown one. */
  routes?: () => { method: string; path: string }[]
}) {
  const publicOrigin = publicOriginOf(deps.publicUrl)
  const apiHeaders = dataResponseHeaders({ publicUrl: deps.publicUrl })
  const methodOf = (request: Request) => (request.method === 'HEAD' ? 'GET' : request.method)
  // What the request path needs of a route (its properties and input checks), settled once per
  // route and method: the hot path allocates nothing for it.
  const settled = new Map<string, Map<string, { props: RouteProps; checkers: RouteCheckers | undefined }>>()
  const settle = (method: string, route: string) => {
    let methods = settled.get(route)
    if (!methods) settled.set(route, methods = new Map())
    let entry = methods.get(method)
    if (!entry) {
      entry = { props: resolveRouteProps(method, route, deps.declaredOf?.(method, route), deps.maxBodyBytes), checkers: deps.checkersOf?.(method, route) }
      methods.set(method, entry)
    }
    return entry
  }
  const propsOf = (method: string, route: string): RouteProps => settle(method, route).props
  /** Settles the route's properties, then the checks that come before its body: same origin, then the API key. Once per request. */
  const beforeBody = (request: Request, route: string): RouteProps => {
    const info = requestInfo(request)
    if (info.props) return info.props
    const props = propsOf(methodOf(request), route)
    info.props = props
    // The route's pattern, not its path: page paths carry secret tokens, which the access log must not.
    info.route ??= route
    if (props.sameOrigin && !comesFromOwnPages(request.headers, publicOrigin)) {
      throw new AppError('cross_site_request', `This request did not come from this service's own pages at ${publicOrigin}; nothing was changed. Open the page at that address and try again.`, { public_origin: publicOrigin })
    }
    deps.beforeBody?.(request, route)
    return props
  }
  let patterns: { method: string; path: string; pattern: RegExp }[] | undefined
  /** The routes whose path matches this one, whatever their method. */
  const routesAt = (pathname: string) => {
    patterns ??= (deps.routes?.() ?? []).map((r) => ({ method: r.method, path: r.path, pattern: routePattern(r.path) }))
    return patterns.filter((r) => r.pattern.test(pathname))
  }
  const logError = (request: Request, route: string | undefined, err: unknown, message: string) => {
    const info = requestInfo(request)
    deps.logger.error({ err, request_id: info.requestId, method: request.method, route: info.route ?? route ?? loggedPath(request.url) }, message)
  }
  return new Elysia({ name: 'towline.http' })
    .onParse({ as: 'global' }, ({ request, route }) => readDeclaredBody(request, beforeBody(request, route).accepts))
    .onTransform({ as: 'global' }, (ctx) => {
      const { request, route } = ctx
      beforeBody(request, route)
      const checkers = settle(methodOf(request), route).checkers
      if (checkers) {
        // A path parameter that does not even decode names nothing that exists.
        if (checkers.params?.(ctx.params)) {
          const { pathname } = new URL(request.url)
          throw new AppError('not_found', `Nothing exists at ${request.method} ${pathname}.`, { method: request.method, path: pathname })
        }
        // An authenticated API route that declares no query takes none.
        const takesNoQuery = !checkers.query && requestInfo(request).principal !== undefined
        // Headers are read from the request, not ctx.headers: naming those would make Elysia copy
        // every request's headers into an object, checked or not.
        if (checkers.headers || checkers.query || checkers.body || takesNoQuery) {
          const problems = [
            ...(checkers.headers?.((request.headers as unknown as { toJSON(): Record<string, string> }).toJSON()) ?? []),
            ...(checkers.query ? [...repeatedQueryNames(request.url, route), ...(checkers.query(ctx.query) ?? [])] : takesNoQuery ? undeclaredQueryNames(request.url, route) : []),
            ...(checkers.body ? checkers.body(ctx.body) ?? [] : []),
          ]
          if (problems.length) throw validationFailed(problems.slice(0, 10))
        }
      }
      // An authenticated API route answers a JSON object: its Response is built with every header
      // at once (Request-Id, the rate-limit quota, the security headers); the fetch handler then
      // has nothing to add.
      const info = requestInfo(request)
      if (info.principal !== undefined && info.requestId !== undefined) {
        const headers = ctx.set.headers as Record<string, string>
        headers['request-id'] = info.requestId
        if (info.headers) Object.assign(headers, info.headers)
        Object.assign(headers, apiHeaders)
      }
    })
    .onError({ as: 'global' }, (ctx) => {
      const { code, error, request } = ctx
      const route = (ctx as { route?: string }).route
      const info = requestInfo(request)
      const answers = info.props?.answers ?? (route ? propsOf(methodOf(request), route).answers : answersByPath(new URL(request.url).pathname))
      if (error instanceof AppError) return renderFor(answers, error, request)
      // An AppError thrown while parsing (e.g. 401 before the body is read) arrives wrapped.
      if ((error as any)?.cause instanceof AppError) return renderFor(answers, (error as any).cause, request)
      // A handler that read a body itself through readBody and could not.
      if (error instanceof BodyError) return renderFor(answers, bodyRefused(error, 'form'), request)
      switch (code) {
        case 'PARSE': {
          // Elysia calls anything thrown while the body is read a parse error: only a JSON syntax
          // error is the client's; a failure of the service's own (a database that refuses writes) is a 500.
          const cause = (error as { cause?: unknown }).cause
          if (cause !== undefined && !(cause instanceof SyntaxError)) {
            logError(request, route, cause, 'failed while reading the request')
            return renderFor(answers, new AppError('internal_error', INTERNAL_MESSAGE), request)
          }
          return renderFor(answers, new AppError('invalid_json', 'The request body is not valid JSON.'), request)
        }
        case 'VALIDATION': {
          if ((error as any).type === 'response') {
            logError(request, route, error, 'response failed its own schema')
            return renderFor(answers, new AppError('internal_error', INTERNAL_MESSAGE), request)
          }
          return renderFor(answers, validationFailed(fieldsOf(error)), request)
        }
        case 'NOT_FOUND': {
          const { pathname } = new URL(request.url)
          const at = pathname.startsWith('/api/') ? [] : routesAt(pathname)
          if (at.length) {
            // The API keeps answering 404 for these, as documented; pages and callbacks say 405.
            const allow = [...new Set(at.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])))].join(', ')
            const err = new AppError('method_not_allowed', `${pathname} does not take ${request.method}; it takes ${allow}.`, { method: request.method, allow }, { allow })
            return renderFor(propsOf(at[0]!.method, at[0]!.path).answers, err, request, `This address does not take ${request.method} requests.`)
          }
          const err = new AppError('not_found', `There is no ${request.method} ${pathname} endpoint.`, { method: request.method, path: pathname })
          return renderFor(answersByPath(pathname), err, request, 'There is no page at this address.')
        }
        default: {
          logError(request, route, error, 'unhandled error')
          return renderFor(answers, new AppError('internal_error', INTERNAL_MESSAGE), request)
        }
      }
    })
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
// Request ids: a random per-process prefix and a counter; unique, cheap, and in order per process.
const REQUEST_PREFIX = `req_${randomBase62(10)}`
let requestCounter = 0
const ZEROS = ['', '0', '00', '000', '0000', '00000']
/** The next request id: the prefix and the counter in base 36, at least six digits. */
const nextRequestId = () => {
  const digits = (++requestCounter).toString(36)
  return digits.length >= 6 ? REQUEST_PREFIX + digits : REQUEST_PREFIX + ZEROS[6 - digits.length] + digits
}

/** What Bun.serve passes beside the request: where it came from. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null
  /** Bun.serve's per-request idle timeout, in seconds. */
  timeout?(request: Request, seconds: number): void
}

/**
 * Wraps the Elysia app as Bun.serve's fetch handler: a Request-Id on every response, the
 * security headers (security-headers.ts), the client's address for the routes that need it,
 * and one access-log line per request. Bodies are capped by the routes that read them;
 * Bun.serve's maxRequestBodySize is only a backstop. A route that answers synchronously (the
 * API's GET routes: see createApp) is answered synchronously here too: no promise is made for
 * it, which Bun.serve then has no need to wait on.
 */
export function createFetchHandler(
  app: { fetch: (req: Request) => Promise<Response> | Response },
  deps: {
    logger: Logger; isDraining?: () => boolean; publicUrl?: string; tileUrl?: string | null
    /** Load balancers whose X-Forwarded-For names the client (client-address.ts). */
    trustedProxies?: TrustedProxies
    /** GET answers that skip Elysia's router and hooks (pre-routed.ts). */
    preRouted?: PreRouted
    /** The server's idle timeout (TOWLINE_IDLE_TIMEOUT_SECONDS): what a request given more time (RequestInfo.allowTime) gets beyond it. */
    idleTimeoutS: number
  },
) {
  const idleS = deps.idleTimeoutS
  const addSecurityHeaders = securityHeaders({ publicUrl: deps.publicUrl, tileUrl: deps.tileUrl })
  const accessLog = createAccessLog(deps.logger)
  const pre = deps.preRouted
  const trusted = deps.trustedProxies ?? []
  /**
   * The answer to an error that did not reach httpPlugin's error hook: the app itself threw, or a
   * route compiled as synchronous (createApp) answered with a promise that rejected. An AppError
   * is answered as the error hook answers it; anything else is a logged 500.
   */
  const threw = (request: Request, err: unknown): Response => {
    const info = requestInfo(request)
    const answers = info.props?.answers ?? answersByPath(new URL(request.url).pathname)
    if (err instanceof AppError) return renderFor(answers, err, request)
    deps.logger.error({ err, request_id: info.requestId, method: request.method, route: info.route ?? loggedPath(request.url) }, 'handler threw outside Elysia')
    return renderFor(answers, new AppError('internal_error', INTERNAL_MESSAGE), request)
  }
  /** Adds what every response carries and writes the access-log line. */
  const finish = (request: Request, response: Response, started: number): Response => {
    const info = requestInfo(request)
    const requestId = info.requestId!
    // Authenticated API responses were built with their headers (httpPlugin's transform step).
    if (!response.headers.has('request-id')) {
      response.headers.set('Request-Id', requestId)
      if (info.headers) for (const [k, v] of Object.entries(info.headers)) response.headers.set(k, v)
      addSecurityHeaders(response.headers)
    }
    // A body over its cap was not read to its end: the connection cannot carry another request.
    if (deps.isDraining?.() || info.bodyProblem === 'too_large') response.headers.set('Connection', 'close')
    if (accessLog.enabled()) accessLog({
      request_id: requestId,
      method: request.method,
      route: info.route ?? loggedPath(request.url),
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      key_id: info.keyId,
      user_id: info.userId,
      // A client that hung up mid-upload is its own doing, not a fault: it shows here, never as an error.
      body_problem: info.bodyProblem,
    })
    return response
  }
  return function fetch(original: Request, server?: PeerSource): Response | Promise<Response> {
    const started = performance.now()
    // Elysia finds the path by searching for "/" from index 11 of the URL, so a short Host
    // (a proxy's upstream named "api", say) would route /api/v1/me as /v1/me. Rebuild those.
    const url = original.url
    const pathAt = url.indexOf('/', url.indexOf('//') + 2)
    const request = pathAt < 11 ? new Request('http://localhost' + url.slice(pathAt), original) : original
    const incoming = request.headers.get('request-id') ?? request.headers.get('x-request-id')
    const info = requestInfo(request)
    // Known before the app runs, so error pages and error log lines can name it.
    info.requestId = incoming && REQUEST_ID.test(incoming) ? incoming : nextRequestId()
    if (server) info.peer = trusted.length
      ? () => clientAddress(server.requestIP(original)?.address, request.headers.get('x-forwarded-for'), trusted)
      : () => server.requestIP(original)?.address
    // Only requests that can carry a body or make the server wait on a third party need more time (GETs read and answer).
    if (server?.timeout && request.method !== 'GET' && request.method !== 'HEAD') info.allowTime = (seconds) => server.timeout!(original, Math.min(255, idleS + Math.ceil(seconds)))
    let answer: Response | Promise<Response>
    try {
      answer = (pre && request.method === 'GET' && url.indexOf('?', pathAt) === -1 && preRoute(pre, request, url.slice(pathAt))) || app.fetch(request)
    } catch (err) {
      answer = threw(request, err)
    }
    if (answer instanceof Response) return finish(request, answer, started)
    return Promise.resolve(answer).then((response) => finish(request, response, started), (err) => finish(request, threw(request, err), started))
  }
}

/** One plain path segment, as ids are: anything else (encoded, empty, deeper) goes through the router. */
const SEGMENT = /^[0-9A-Za-z_]{1,64}$/

/**
 * The query parameters an API request gives more than once (`?status=a&status=b`): each names
 * one value, and reading only the last would hide the mistake.
 */
function repeatedQueryNames(url: string, route: string): FieldProblem[] {
  const names = queryNames(url, route)
  return [...new Set(names.filter((name, i) => names.indexOf(name) !== i))].map((name) => ({ path: name, message: 'must be given once' }))
}

/**
 * The query parameters of an API request to a route that takes none (GET /jobs/{id}, POST
 * /jobs, ...): refused like an unknown body field, so that a mistyped `?expand=` or a filter
 * sent to the wrong route is said rather than silently ignored.
 */
function undeclaredQueryNames(url: string, route: string): FieldProblem[] {
  return [...new Set(queryNames(url, route))].map((name) => ({ path: name.replace(/\p{Cs}/gu, '\ufffd') || 'query', message: 'is not a field this request accepts' }))
}

/** The names of an API request's query parameters, in order, repeats kept (none outside /api/). */
function queryNames(url: string, route: string): string[] {
  const at = url.indexOf('?')
  return at === -1 || !route.startsWith('/api/') ? [] : [...new URLSearchParams(url.slice(at + 1)).keys()]
}

/** The pre-routed answer for a query-less GET `path`, or null when the router must answer it. */
function preRoute(pre: PreRouted, request: Request, path: string): Response | null {
  const exact = pre.exact.get(path)
  if (exact) return exact(request)
  for (const [prefix, answer] of pre.under) {
    if (!path.startsWith(prefix)) continue
    const segment = path.slice(prefix.length)
    return SEGMENT.test(segment) ? answer(request, segment) : null
  }
  return null
}

/** A logger whose lines carry the request's id (`request_id`, as its Request-Id header), for what is logged while handling it. */
export function requestLogger(logger: Logger, request: Request): Logger {
  const id = requestInfo(request).requestId
  return id ? logger.child({ request_id: id }) : logger
}

import { Elysia } from 'elysia'
import type { Logger } from './log'
import { AppError, errorBody, renderError, validationFailed, type ErrorCode } from './errors'
import { requestInfo } from './request-info'
import { randomBase62 } from './ids'
import { BodyError, plainBodyErrorResponse, readBody } from './body'
import { loneSurrogatePath, MAX_JSON_DEPTH, parseUntrustedJson } from './json'
import { problemsOf, type RouteCheckers } from './validation'

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

function errorResponse(code: ErrorCode, status: number, message: string, details: Record<string, unknown> = {}): Response {
  return new Response(JSON.stringify(errorBody(code, message, details)), { status, headers: JSON_HEADERS })
}

const SURROGATE_MESSAGE = 'holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair); send well-formed text'

/** The 413 of an API body over its cap; the connection closes, so the rest of the upload is never taken. */
function tooLarge(limitBytes: number): AppError {
  return new AppError('payload_too_large', `The request body is larger than ${limitBytes / 1024} KiB.`, { limit_bytes: limitBytes }, { connection: 'close' })
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

/**
 * The one error renderer and body parser, as a global Elysia plugin: every error, from a
 * domain AppError to an unknown route or a crash, leaves as `{ error: { code, message, details } }`.
 */
export function httpPlugin(deps: {
  logger: Logger
  maxBodyBytes: number
  /** Runs before a body is read or an input checked (authentication, so that 401/403 come before 400/413/422). */
  beforeBody?: (request: Request, route: string) => void
  /** The compiled input checks of a route (`GET`, `/api/v1/jobs/:id`). */
  checkersOf?: (method: string, route: string) => RouteCheckers | undefined
}) {
  return new Elysia({ name: 'towline.http' })
    .onParse({ as: 'global' }, ({ request, route }) => {
      // Only the JSON API reads bodies here; device and provider callbacks (OsmAnd, Twilio)
      // read their own form or JSON bodies through readBody with their own caps.
      if (!route.startsWith('/api/')) return {}
      deps.beforeBody?.(request, route)
      return readJsonObject(request, deps.maxBodyBytes)
    })
    .onTransform({ as: 'global' }, (ctx) => {
      const { request, route } = ctx
      const checkers = deps.checkersOf?.(request.method === 'HEAD' ? 'GET' : request.method, route)
      if (!checkers) return
      if (route.startsWith('/api/')) deps.beforeBody?.(request, route)
      // A path parameter that does not even decode names nothing that exists.
      if (checkers.params?.(ctx.params)) {
        const { pathname } = new URL(request.url)
        throw new AppError('not_found', `Nothing exists at ${request.method} ${pathname}.`, { method: request.method, path: pathname })
      }
      const problems = [
        ...(checkers.headers?.(ctx.headers) ?? []),
        ...(checkers.query?.(ctx.query) ?? []),
        ...(checkers.body ? checkers.body(ctx.body) ?? [] : []),
      ]
      if (problems.length) throw validationFailed(problems.slice(0, 10))
    })
    .onError({ as: 'global' }, ({ code, error, request }) => {
      if (error instanceof AppError) return renderError(error)
      // An AppError thrown while parsing (e.g. 401 before the body is read) arrives wrapped.
      if ((error as any)?.cause instanceof AppError) return renderError((error as any).cause)
      // A device or provider route could not read its body (over its cap, or the client hung up).
      if (error instanceof BodyError) return plainBodyErrorResponse(error)
      switch (code) {
        case 'PARSE': return errorResponse('invalid_json', 400, 'The request body is not valid JSON.')
        case 'VALIDATION': {
          if ((error as any).type === 'response') {
            deps.logger.error({ err: error, path: new URL(request.url).pathname }, 'response failed its own schema')
            return errorResponse('internal_error', 500, 'Something went wrong on our side. The request id identifies it in the logs.')
          }
          return renderError(validationFailed(fieldsOf(error)))
        }
        case 'NOT_FOUND': {
          const { pathname } = new URL(request.url)
          return errorResponse('not_found', 404, `There is no ${request.method} ${pathname} endpoint.`, { method: request.method, path: pathname })
        }
        default: {
          deps.logger.error({ err: error, path: new URL(request.url).pathname }, 'unhandled error')
          return errorResponse('internal_error', 500, 'Something went wrong on our side. The request id identifies it in the logs.')
        }
      }
    })
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
// Request ids: a random per-process prefix and a counter; unique, cheap, and in order per process.
const REQUEST_PREFIX = `req_${randomBase62(10)}`
let requestCounter = 0
const nextRequestId = () => `${REQUEST_PREFIX}${(++requestCounter).toString(36).padStart(6, '0')}`

/** What Bun.serve passes beside the request: where it came from. */
export interface PeerSource { requestIP(request: Request): { address: string } | null }

/**
 * Wraps the Elysia app as Bun.serve's fetch handler: a Request-Id on every response, the
 * client's address for the routes that need it, and one access-log line per request. Bodies
 * are capped by the routes that read them (readBody); Bun.serve's maxRequestBodySize is only
 * a backstop.
 */
export function createFetchHandler(
  app: { handle: (req: Request) => Promise<Response> | Response },
  deps: { logger: Logger; isDraining?: () => boolean },
) {
  return async function fetch(original: Request, server?: PeerSource): Promise<Response> {
    const started = performance.now()
    // Elysia finds the path by searching for "/" from index 11 of the URL, so a short Host
    // (a proxy's upstream named "api", say) would route /api/v1/me as /v1/me. Rebuild those.
    const url = original.url
    const request = url.indexOf('/', url.indexOf('//') + 2) < 11
      ? new Request('http://localhost' + url.slice(url.indexOf('/', url.indexOf('//') + 2)), original)
      : original
    const incoming = request.headers.get('request-id') ?? request.headers.get('x-request-id')
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : nextRequestId()
    const info = requestInfo(request)
    info.requestId = requestId
    if (server) info.peer = () => server.requestIP(original)?.address
    let response: Response
    try {
      response = await app.handle(request)
    } catch (err) {
      deps.logger.error({ err, request_id: requestId }, 'handler threw outside Elysia')
      response = errorResponse('internal_error', 500, 'Something went wrong on our side. The request id identifies it in the logs.')
    }
    response.headers.set('Request-Id', requestId)
    if (info.headers) for (const [k, v] of Object.entries(info.headers)) response.headers.set(k, v)
    if (deps.isDraining?.()) response.headers.set('Connection', 'close')
    deps.logger.info({
      request_id: requestId,
      method: request.method,
      route: info.route ?? new URL(request.url).pathname,
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      key_id: info.keyId,
      // A client that hung up mid-upload is its own doing, not a fault: it shows here, never as an error.
      body_problem: info.bodyProblem,
    }, 'request')
    return response
  }
}

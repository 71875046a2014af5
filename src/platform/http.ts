import { Elysia } from 'elysia'
import type { Logger } from './log'
import { AppError, errorBody, renderError, validationFailed, type ErrorCode } from './errors'
import { requestInfo } from './request-info'
import { randomBase62 } from './ids'

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

function errorResponse(code: ErrorCode, status: number, message: string, details: Record<string, unknown> = {}): Response {
  return new Response(JSON.stringify(errorBody(code, message, details)), { status, headers: JSON_HEADERS })
}

/** Reads a request body as a JSON object, whatever its Content-Type; records why when it cannot. */
async function readJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const buf = await request.arrayBuffer()
  const info = requestInfo(request)
  if (buf.byteLength > maxBytes) { info.bodyProblem = 'too_large'; throw new Error('too large') }
  if (buf.byteLength === 0) return {}
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder().decode(buf))
  } catch {
    info.bodyProblem = 'not_json'
    throw new Error('not json')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) { info.bodyProblem = 'not_object'; throw new Error('not object') }
  return value as Record<string, unknown>
}

const FIELD_MESSAGES: Record<string, string> = {
  'Unexpected property': 'is not a field this request accepts',
  'Expected required property': 'is required',
}

/** Turns typebox errors into `details.fields`, one entry per path. */
function fieldsOf(error: any): { path: string; message: string }[] {
  const seen = new Map<string, string>()
  const all: any[] = Array.isArray(error?.all) ? error.all : []
  for (const e of all) {
    const path = String(e.path ?? '').replace(/^\//, '').replace(/\//g, '.') || (error.type === 'query' ? 'query' : 'body')
    if (seen.has(path)) continue
    const raw = String(e.message ?? e.summary ?? 'is not valid')
    seen.set(path, FIELD_MESSAGES[raw] ?? raw.charAt(0).toLowerCase() + raw.slice(1))
  }
  if (!seen.size) seen.set(error?.type === 'query' ? 'query' : 'body', String(error?.message ?? 'is not valid'))
  return [...seen].map(([path, message]) => ({ path, message }))
}

/**
 * The one error renderer and body parser, as a global Elysia plugin: every error, from a
 * domain AppError to an unknown route or a crash, leaves as `{ error: { code, message, details } }`.
 */
export function httpPlugin(deps: {
  logger: Logger
  maxBodyBytes: number
  /** Runs before a body is read (authentication, so that 401/403 come before 400/413/422). */
  beforeBody?: (request: Request, route: string) => void
}) {
  return new Elysia({ name: 'towline.http' })
    .onParse({ as: 'global' }, ({ request, route }) => {
      // Only the JSON API reads bodies here; device and provider callbacks (OsmAnd, Twilio)
      // read their own form or JSON bodies from the untouched request.
      if (!route.startsWith('/api/')) return {}
      deps.beforeBody?.(request, route)
      return readJsonObject(request, deps.maxBodyBytes)
    })
    .onError({ as: 'global' }, ({ code, error, request }) => {
      if (error instanceof AppError) return renderError(error)
      // An AppError thrown while parsing (e.g. 401 before the body is read) arrives wrapped.
      if ((error as any)?.cause instanceof AppError) return renderError((error as any).cause)
      switch (code) {
        case 'PARSE': {
          const problem = requestInfo(request).bodyProblem
          if (problem === 'too_large') return errorResponse('payload_too_large', 413, `The request body is larger than ${deps.maxBodyBytes / 1024} KiB.`, { limit_bytes: deps.maxBodyBytes })
          if (problem === 'not_object') return errorResponse('invalid_json', 400, 'The request body must be a JSON object.')
          return errorResponse('invalid_json', 400, 'The request body is not valid JSON.')
        }
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

/**
 * Wraps the Elysia app as Bun.serve's fetch handler: a Request-Id on every response, the
 * 256 KiB limit on declared bodies before any byte is read, and one access-log line per request.
 */
export function createFetchHandler(
  app: { handle: (req: Request) => Promise<Response> | Response },
  deps: { logger: Logger; maxBodyBytes: number; isDraining?: () => boolean },
) {
  return async function fetch(original: Request): Promise<Response> {
    const started = performance.now()
    // Elysia finds the path by searching for "/" from index 11 of the URL, so a short Host
    // (a proxy's upstream named "api", say) would route /api/v1/me as /v1/me. Rebuild those.
    const url = original.url
    const request = url.indexOf('/', url.indexOf('//') + 2) < 11
      ? new Request('http://localhost' + url.slice(url.indexOf('/', url.indexOf('//') + 2)), original)
      : original
    const incoming = request.headers.get('request-id') ?? request.headers.get('x-request-id')
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : nextRequestId()
    let response: Response
    const length = Number(request.headers.get('content-length') ?? 0)
    if (length > deps.maxBodyBytes) {
      response = errorResponse('payload_too_large', 413, `The request body is larger than ${deps.maxBodyBytes / 1024} KiB.`, { limit_bytes: deps.maxBodyBytes })
    } else {
      try {
        response = await app.handle(request)
      } catch (err) {
        deps.logger.error({ err, request_id: requestId }, 'handler threw outside Elysia')
        response = errorResponse('internal_error', 500, 'Something went wrong on our side. The request id identifies it in the logs.')
      }
    }
    const info = requestInfo(request)
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
    }, 'request')
    return response
  }
}

/**
 * JSON requests from a page to its own endpoints (`/t/{token}/state`, `/d/{token}/...`): same
 * origin only, with the session cookie, and an `Origin` header the browser adds to every
 * non-GET request, which the server's same-origin guard checks. A refusal arrives in the
 * service's error shape and is thrown as an ApiError a form can show (forms.ts).
 */

/** One field's problem, as `details.fields` of a 422 names it. */
export interface FieldProblem {
  path: string
  message: string
}

/** A refusal from the server (`{ error: { code, message, details } }`), or no answer at all (status 0, code `network_error`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }

  /** The fields the server named, each with its message (empty when it named none). */
  get fields(): FieldProblem[] {
    const fields = this.details.fields
    return Array.isArray(fields) ? fields.filter((f): f is FieldProblem => typeof f?.path === 'string' && typeof f?.message === 'string') : []
  }
}

/** What a JSON request may carry. */
export interface JsonRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Sent as JSON. */
  body?: unknown
  /** The Idempotency-Key header: a replay of the same key and body answers the first response and writes nothing. */
  idempotencyKey?: string
  signal?: AbortSignal
}

/** Reads the service's error shape out of a refused response, or describes the status when it is something else. */
async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { error?: { code?: unknown; message?: unknown; details?: unknown } }
    const e = body.error
    if (e && typeof e.code === 'string' && typeof e.message === 'string') {
      return new ApiError(res.status, e.code, e.message, (e.details ?? {}) as Record<string, unknown>)
    }
  } catch { /* not JSON: described below */ }
  return new ApiError(res.status, 'http_error', `The server answered ${res.status}. Try again in a moment.`)
}

/** Sends a JSON request to this page's own origin and returns the parsed answer (undefined for 204); throws ApiError on refusal or no connection. */
export async function fetchJson<T = unknown>(url: string, req: JsonRequest = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (req.body !== undefined) headers['content-type'] = 'application/json'
  if (req.idempotencyKey) headers['idempotency-key'] = req.idempotencyKey
  let res: Response
  try {
    res = await fetch(url, {
      method: req.method ?? (req.body === undefined ? 'GET' : 'POST'),
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      // Never another origin: the cookie and the page's data stay here.
      mode: 'same-origin',
      credentials: 'same-origin',
      signal: req.signal,
    })
  } catch (err) {
    if (req.signal?.aborted) throw err
    throw new ApiError(0, 'network_error', 'Could not reach the server. Check the connection and try again.')
  }
  if (!res.ok) throw await errorOf(res)
  if (res.status === 204) return undefined as T
  return (await res.json()) as T
}

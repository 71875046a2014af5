/** What the access log and the response headers need to know about a request, filled in while Elysia handles it. */
export interface RequestInfo {
  /** The Request-Id the response carries (and every log line about the request). */
  requestId?: string
  route?: string
  keyId?: string
  accountId?: string
  /** The authenticated caller, once known (typed by the auth feature). */
  principal?: unknown
  /** Headers every response to this request carries (rate-limit quota). */
  headers?: Record<string, string>
  /** Why the body could not be read, when it could not. */
  bodyProblem?: 'too_large' | 'aborted' | 'not_json' | 'not_object'
  /** The client's address as the socket saw it (absent in-process). */
  peer?: () => string | undefined
}

const infos = new WeakMap<Request, RequestInfo>()

/** Returns the mutable record of a request. */
export function requestInfo(req: Request): RequestInfo {
  let info = infos.get(req)
  if (!info) { info = {}; infos.set(req, info) }
  return info
}

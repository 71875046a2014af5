import type { RouteProps } from './route-props'

/** What the access log and the response headers need to know about a request, filled in while Elysia handles it. */
export interface RequestInfo {
  /** The id its response's Request-Id header carries (set before the app runs). */
  requestId?: string
  route?: string
  /** The matched route's properties after defaults (route-props.ts), once settled. */
  props?: RouteProps
  keyId?: string
  /** The signed-in dashboard user, once known. */
  userId?: string
  /** The dashboard session, once resolved (typed by the users feature). */
  session?: unknown
  accountId?: string
  /** The authenticated caller, once known (typed by the auth feature). */
  principal?: unknown
  /** Headers every response to this request carries (rate-limit quota). */
  headers?: Record<string, string>
  /** Why the body could not be read, when it could not. */
  bodyProblem?: 'too_large' | 'aborted' | 'not_json' | 'not_object' | 'not_form'
  /** The client's address: the socket's peer, or behind a trusted proxy the client it names (absent in-process). */
  peer?: () => string | undefined
  /**
   * Gives the request this many seconds more than the idle timeout (at most 255 s in all) before
   * Bun cuts it off: Bun's idle timer runs while a body comes in and while a handler works
   * without answering. Absent in-process.
   */
  allowTime?: (seconds: number) => void
}

// Kept on the request itself: a WeakMap entry per request cost more to add and to look up (about
// six lookups a request), and its weak entries more to collect.
const INFO = Symbol('towline.requestInfo')

/** Returns the mutable record of a request. */
export function requestInfo(req: Request): RequestInfo {
  const holder = req as unknown as { [INFO]?: RequestInfo }
  return holder[INFO] ??= {}
}

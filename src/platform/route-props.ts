/**
 * What the HTTP layer needs to know about each route, declared with the route itself:
 * who reads its answers (`answers`), what body it reads and how much (`accepts`), and whether a
 * state-changing request must come from this service's own pages (`sameOrigin`).
 *
 * ```ts
 * new Elysia().use(routeProps)
 *   .post('/d/:token/photos', handler, { answers: 'json', accepts: { kind: 'multipart', maxBytes: BODY_CAPS.photo } })
 * ```
 *
 * Defaults: a route under `/api/` always answers JSON and reads a JSON object of at most the
 * API's cap (256 KiB). Any other route answers HTML pages, reads no body, and refuses a POST,
 * PUT, PATCH or DELETE that does not come from this service's own pages.
 */
import { Elysia } from 'elysia'
import { AppError } from './errors'

/** How a route's errors are written: an HTML page for a browser, JSON or plain text for a program. */
export type Answers = 'html' | 'json' | 'text'

/**
 * What a route reads as its body, counted while reading and refused (413) past `maxBytes`:
 * `json` an object, `form` urlencoded fields, `multipart` fields and Files (see forms.ts; at most
 * `maxFields` fields or parts), `text` the UTF-8 text as it came (device callbacks).
 */
export interface BodySpec {
  kind: 'json' | 'form' | 'multipart' | 'text'; maxBytes: number; maxFields?: number
  /**
   * `handler`: a body over the cap reaches the handler as an empty one marked oversized
   * (isOversizedBody), for a page to say so beside its file field (413); otherwise it is refused
   * whole before the handler runs. Either way the rest of the upload is not read.
   */
  oversized?: 'handler'
}

/** The body a route declared `oversized: 'handler'` gets when the upload was over its cap. */
export const OVERSIZED_BODY: Readonly<Record<string, never>> = Object.freeze({})
/** Whether a handler's body stands for an upload over the route's cap (see BodySpec.oversized). */
export const isOversizedBody = (body: unknown): boolean => body === OVERSIZED_BODY

/** The body caps routes declare, in bytes. */
export const BODY_CAPS = {
  /** A JSON object for the API or a page's JSON endpoint. */
  json: 256 * 1024,
  /** A page's urlencoded form. */
  form: 64 * 1024,
  /** A photo upload from the driver's page or the job page (multipart). */
  photo: 10 * 1024 * 1024,
  /** A CSV import (multipart). */
  csv: 2 * 1024 * 1024,
} as const

/**
 * A photo file's limit as a page's file input checks it before sending (`data-max-bytes`): the
 * upload's cap less room for the form's other fields, so a file the page lets through is never
 * refused whole by the cap, and one it stops gets its message beside the field.
 */
export const PHOTO_FILE_LIMIT = { bytes: BODY_CAPS.photo - 16 * 1024, message: 'is larger than 10 MB: choose a smaller photo' } as const

/** The refusal of a photo upload over the cap, said beside the photo field (a page's route declared `oversized: 'handler'`). */
export function photoTooLarge(): AppError {
  return new AppError('payload_too_large', 'The photo is larger than 10 MB.', { limit_bytes: BODY_CAPS.photo, fields: [{ path: 'photo', message: PHOTO_FILE_LIMIT.message }] })
}

/**
 * Bun.serve's own limit, none in effect: every route caps its body itself (a declared
 * Content-Length over the cap is refused before a byte is read), and Bun takes none of a body a
 * route does not read. So any declared size, 2 GiB or 2^53 - 1 bytes, gets the route's own 413
 * (JSON with its Request-Id, or a page) rather than Bun's empty one.
 */
export const MAX_REQUEST_BODY_BYTES = Number.MAX_SAFE_INTEGER

/** A route's properties after defaults. */
export interface RouteProps { answers: Answers; accepts?: BodySpec; sameOrigin: boolean }

const KEY = 'x-towline-route'
type Declared = Partial<RouteProps>
const declare = (props: Declared) => ({ detail: { [KEY]: props } as Record<string, unknown> })

/** The `answers`, `accepts` and `sameOrigin` route options (an Elysia macro); `.use()` it where routes declare them. */
export const routeProps = new Elysia({ name: 'towline.route-props' }).macro({
  answers: (answers: Answers) => declare({ answers }),
  accepts: (accepts: BodySpec) => {
    // A route that declares a nonsense cap fails at start-up, not on the first upload.
    if (!Number.isInteger(accepts.maxBytes) || accepts.maxBytes < 1 || accepts.maxBytes > MAX_REQUEST_BODY_BYTES) throw new Error(`accepts.maxBytes must be a whole number of bytes from 1 to ${MAX_REQUEST_BODY_BYTES}`)
    return declare({ accepts })
  },
  sameOrigin: (sameOrigin: boolean) => declare({ sameOrigin }),
})

/** The properties a route declared, read from its `detail` (where the macro keeps them). */
export function declaredRouteProps(detail: unknown): Declared | undefined {
  return (detail as Record<string, Declared> | undefined)?.[KEY]
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Applies the defaults to what a route declared (see the top of this file). */
export function resolveRouteProps(method: string, path: string, declared: Declared | undefined, apiJsonBytes: number): RouteProps {
  const api = path.startsWith('/api/')
  return {
    answers: api ? 'json' : declared?.answers ?? 'html',
    accepts: declared?.accepts ?? (api ? { kind: 'json', maxBytes: apiJsonBytes } : undefined),
    sameOrigin: declared?.sameOrigin ?? (!api && !SAFE_METHODS.has(method)),
  }
}

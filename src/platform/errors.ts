/**
 * The one error catalog. Operations throw `AppError`s by code; only this file knows
 * HTTP statuses, and `renderError` is the only place an error body is shaped.
 */

/** Every error code the API can answer with, its HTTP status and when it is used. */
export const ERROR_CATALOG = {
  invalid_json: { status: 400, when: 'The body is not UTF-8 JSON, not a JSON object, nests deeper than 64 levels, or ended before it was complete.' },
  invalid_form: { status: 400, when: 'A form or multipart body (pages, provider callbacks) is malformed, not UTF-8, holds too many fields, a field name too long or a field twice, or ended before it was complete.' },
  unauthorized: { status: 401, when: 'No key, a malformed, unknown or revoked key.' },
  not_signed_in: { status: 401, when: "A dashboard page's data or live stream was asked for without a live session (pages themselves redirect to /login with 303)." },
  insufficient_scope: { status: 403, when: 'The key lacks the scope the endpoint needs (details.required_scope).' },
  forbidden: { status: 403, when: "The actor (a dashboard user's role, a driver's or customer's link) may not do this (details.actor, details.required_permission)." },
  cross_site_request: { status: 403, when: 'A state-changing page request did not come from this service\'s own pages (Origin or Sec-Fetch-Site); nothing was read or written (details.public_origin).' },
  not_found: { status: 404, when: 'Unknown route or id, or a resource of another account or site.' },
  method_not_allowed: { status: 405, when: 'Outside /api/, the path exists but not for this method (Allow lists those it takes).' },
  conflict: { status: 409, when: 'Another job on the account already has that external_ref (details.existing_job_id); in the dashboard, another commercial account of the directory already has that name (details.existing_commercial_account_id), or someone saved the entry after its page was opened (details.changed_since_opened).' },
  job_transition_refused: { status: 409, when: 'The status move is not allowed (details.from, details.to, details.reason when known).' },
  job_stale: { status: 409, when: 'expected_status was sent and the job is in another status (details.expected_status, details.current_status).' },
  invalid_state: { status: 409, when: 'The job is archived (restore it first), or not in a state the action needs, such as a driver link to send with no unit on the job, or an invoice whose status refuses the step (details.reason).' },
  delivery_in_flight: { status: 409, when: 'The webhook delivery is being attempted right now (a resend waits for that attempt to finish).' },
  link_gone: { status: 410, when: 'A tracking or driver link that was replaced, taken back (reassign, unassign) or expired after its job finished (details.reason).' },
  payload_too_large: { status: 413, when: 'The body is over its route\'s cap (256 KiB for the API), counted while reading (details.limit_bytes).' },
  validation_failed: { status: 422, when: 'The body or query does not match the schema, names a date that does not exist, or holds a lone UTF-16 surrogate or the NUL character (details.fields: [{ path, message }], at most 10).' },
  job_reason_required: { status: 422, when: 'Cancelling without cancel_reason, or reopening without reason (3 to 500 characters after trimming).' },
  limit_exceeded: { status: 422, when: 'An account limit would be passed, e.g. more than 100 webhook endpoints (details.limit).' },
  idempotency_key_in_use: { status: 409, when: 'A request with the same Idempotency-Key is still being handled (a webhook send); retry in a moment to get its answer.' },
  idempotency_key_reused: { status: 422, when: 'The Idempotency-Key was used before with a different request.' },
  rate_limited: { status: 429, when: 'The key went over its per-minute limit (Retry-After, details.retry_after_seconds).' },
  internal_error: { status: 500, when: 'Something failed inside the service; nothing internal is echoed.' },
} as const

export type ErrorCode = keyof typeof ERROR_CATALOG

/** An error an operation raises on purpose; rendered as `{ error: { code, message, details } }`. */
export class AppError extends Error {
  // Named `errorCode`, not `code`: Elysia reads `error.code` to classify errors and would
  // otherwise treat ours as one of its own kinds.
  readonly errorCode: ErrorCode
  readonly details: Record<string, unknown>
  readonly headers: Record<string, string>
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, headers: Record<string, string> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.errorCode = code
    this.details = details
    this.headers = headers
  }
  get status(): number {
    return ERROR_CATALOG[this.errorCode].status
  }
}

/** Returns the JSON body of an error: details repeat the message as database_message, as the spec says. */
export function errorBody(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
  return { error: { code, message, details: { ...details, database_message: message } } }
}

/** Renders an AppError as a JSON response with its catalog status and extra headers. */
export function renderError(err: AppError): Response {
  return new Response(JSON.stringify(errorBody(err.errorCode, err.message, err.details)), {
    status: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...err.headers },
  })
}

/**
 * An input an operation refuses, named by its field: a 422 validation_failed for the API and the
 * pages (the message goes beside the field), a one-line message at the console.
 */
export class InputError extends AppError {
  constructor(message: string, field = 'input') {
    super('validation_failed', message, { fields: [{ path: field, message }] })
  }
}

/** Builds the 422 validation_failed error from a list of field problems. */
export function validationFailed(fields: { path: string; message: string }[], message?: string): AppError {
  const first = fields[0]
  const text = message ?? (first ? `${first.path ? `${first.path}: ` : ''}${first.message}` : 'The request is not valid.')
  return new AppError('validation_failed', text, { fields })
}

/**
 * The fields a check refuses (its validation_failed), or none: for a page's form, which shows an
 * operation's own checks beside its schema's so that every bad field is marked at once.
 */
export function validationProblemsOf(check: () => unknown): { path: string; message: string }[] {
  try {
    check()
    return []
  } catch (err) {
    if (err instanceof AppError && err.errorCode === 'validation_failed') return err.details.fields as { path: string; message: string }[]
    throw err
  }
}

/** The error for an id that does not exist for this key (other accounts' ids included). */
export function notFound(what: string, id: string): AppError {
  return new AppError('not_found', `No ${what} with id ${id} was found.`, { id })
}

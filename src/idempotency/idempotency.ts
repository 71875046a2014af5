import { createHash } from 'node:crypto'
import { t } from 'elysia'
import type { Actor } from '../accounts/actor'
import { inTransaction, type Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { AppError, validationFailed } from '../platform/errors'
import { openLinksIn, sealLinksIn, type JobLinks } from '../jobs/job-links'

/** Keys are kept at least this long (24 h promised; 48 h kept). */
const KEEP_MS = 48 * 3_600_000
/** A key whose first request is still running (a send can take the webhook timeout) holds this long before a crash's leftover is released. */
const IN_FLIGHT_MS = 5 * 60_000

/** The Idempotency-Key header as every POST documents and accepts it. */
export const IdempotencyHeaders = t.Object({
  'idempotency-key': t.Optional(t.String({ description: 'Makes a retry safe: the same key and body answer the first response (Idempotent-Replayed: true) and write nothing; the same key with another body is 422 idempotency_key_reused, and a retry while the first request still runs is 409 idempotency_key_in_use. 1 to 255 visible ASCII characters (a UUID is ideal), kept at least 24 hours per API key.' })),
})

/** Canonical JSON: object keys sorted, so the same body always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

export interface StoredResponse { status: number; body: unknown; replayed: boolean }
export interface IdempotencyDeps { db: Db; clock: Clock; links: JobLinks }
/** The request a key is bound to: a retry must repeat it exactly. */
export interface IdempotentRequest { method: string; path: string; body: unknown }

/** Whose keys these are: an API key's, a user's, a job link's; two owners never share a key space. */
export function idempotencyOwner(actor: Actor): string {
  switch (actor.kind) {
    case 'system': return actor.via === 'key' ? actor.keyId : `system:${actor.via}`
    case 'dispatcher': return actor.userId
    case 'driver': return `driver:${actor.jobId}:${actor.unitId}`
    case 'customer': return `customer:${actor.jobId}`
  }
}

function checkKey(idemKey: string): void {
  if (idemKey.length < 1 || idemKey.length > 255 || !/^[\x21-\x7e]+$/.test(idemKey)) {
    throw validationFailed([{ path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters (a UUID is ideal)' }])
  }
}

const hashOf = (r: IdempotentRequest) => createHash('sha256').update(`${r.method} ${r.path}\n${canonical(r.body)}`).digest('hex')

type Row = { request_hash: string; status_code: number; response_body: string; created_at: number }

/**
 * Looks a key up inside a transaction: the kept response (replayed), a refusal (another request
 * under the key: 422; the first one still running: 409), or null when the key is free. Expired
 * keys are dropped on the way.
 */
function lookUp(tx: Db, deps: IdempotencyDeps, owner: string, idemKey: string, hash: string): StoredResponse | null {
  const now = deps.clock.now()
  tx.$client.query('DELETE FROM idempotency_keys WHERE created_at < ?').run(now - KEEP_MS)
  const seen = tx.$client.query<Row, [string, string]>('SELECT request_hash, status_code, response_body, created_at FROM idempotency_keys WHERE key_id = ? AND idem_key = ?').get(owner, idemKey)
  if (!seen) return null
  if (seen.request_hash !== hash) {
    throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request. Use a new key for a new request.', { idempotency_key: idemKey })
  }
  if (seen.status_code === 0) {
    // Reserved by a first request that is still running, unless a crash left it behind.
    if (seen.created_at >= now - IN_FLIGHT_MS) {
      throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being handled. Retry in a moment to get its answer.', { idempotency_key: idemKey })
    }
    tx.$client.query('DELETE FROM idempotency_keys WHERE key_id = ? AND idem_key = ?').run(owner, idemKey)
    return null
  }
  return { status: seen.status_code, body: JSON.parse(openLinksIn(deps.links, seen.response_body)), replayed: true }
}

function keep(tx: Db, deps: IdempotencyDeps, owner: string, idemKey: string, hash: string, result: { status: number; body: unknown }): void {
  tx.$client.query(
    `INSERT INTO idempotency_keys (key_id, idem_key, request_hash, status_code, response_body, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (key_id, idem_key) DO UPDATE SET status_code = excluded.status_code, response_body = excluded.response_body`,
  ).run(owner, idemKey, hash, result.status, sealLinksIn(deps.links, JSON.stringify(result.body)), deps.clock.now())
}

/**
 * Runs a synchronous write under an Idempotency-Key: the first request's successful response is
 * kept in the same transaction as the write, and a retry with the same key and body gets it
 * back without writing anything. The same key with another request: 422
 * idempotency_key_reused. Without a key, just runs the write. The kept response holds the job's
 * links sealed, like every other stored copy of them.
 */
export function withIdempotency(
  deps: IdempotencyDeps, owner: string, idemKey: string | undefined, request: IdempotentRequest, run: () => { status: number; body: unknown },
): StoredResponse {
  if (idemKey === undefined) return { ...run(), replayed: false }
  checkKey(idemKey)
  const hash = hashOf(request)
  // One synchronous transaction: two concurrent retries are serialised, so one key makes one write.
  return inTransaction(deps.db, (tx) => {
    const seen = lookUp(tx, deps, owner, idemKey, hash)
    if (seen) return seen
    const result = run()
    if (result.status >= 200 && result.status < 300) keep(tx, deps, owner, idemKey, hash, result)
    return { ...result, replayed: false }
  })
}

/**
 * The same for a write whose checks are long (a 500-row CSV import): `check` runs outside the
 * transaction, so the write lock is held only while `write` writes. A key that already has its
 * answer is looked up first (a retry of a done import replays it instead of being checked again
 * against the jobs it wrote); `check` may answer at once (`{ done }`: refused rows, nothing
 * kept); then, in one transaction, the key is looked up again (a concurrent twin may have
 * written meanwhile) and `write` runs and its success is kept.
 */
export function withIdempotencyChecked<P>(
  deps: IdempotencyDeps, owner: string, idemKey: string, request: IdempotentRequest,
  check: () => { done: { status: number; body: unknown } } | { checked: P }, write: (checked: P) => { status: number; body: unknown },
): StoredResponse {
  checkKey(idemKey)
  const hash = hashOf(request)
  const kept = deps.db.$client.query<Row, [string, string]>('SELECT request_hash, status_code, response_body, created_at FROM idempotency_keys WHERE key_id = ? AND idem_key = ? AND status_code <> 0')
    .get(owner, idemKey)
  if (kept) {
    const seen = inTransaction(deps.db, (tx) => lookUp(tx, deps, owner, idemKey, hash))
    if (seen) return seen
  }
  const first = check()
  if ('done' in first) return { ...first.done, replayed: false }
  return inTransaction(deps.db, (tx) => {
    const seen = lookUp(tx, deps, owner, idemKey, hash)
    if (seen) return seen
    const result = write(first.checked)
    if (result.status >= 200 && result.status < 300) keep(tx, deps, owner, idemKey, hash, result)
    return { ...result, replayed: false }
  })
}

/**
 * The same for a write that waits on the network (a URL check, a webhook send): the key is
 * reserved first, so a concurrent retry answers 409 idempotency_key_in_use instead of sending
 * twice; the response is kept when it succeeds, and the reservation released when it fails (a
 * refusal writes nothing, so the retry may run).
 */
export async function withIdempotencyAsync(
  deps: IdempotencyDeps, owner: string, idemKey: string | undefined, request: IdempotentRequest, run: () => Promise<{ status: number; body: unknown }>,
): Promise<StoredResponse> {
  if (idemKey === undefined) return { ...(await run()), replayed: false }
  checkKey(idemKey)
  const hash = hashOf(request)
  const seen = inTransaction(deps.db, (tx) => {
    const found = lookUp(tx, deps, owner, idemKey, hash)
    if (!found) {
      tx.$client.query('INSERT INTO idempotency_keys (key_id, idem_key, request_hash, status_code, response_body, created_at) VALUES (?, ?, ?, 0, ?, ?)')
        .run(owner, idemKey, hash, '', deps.clock.now())
    }
    return found
  })
  if (seen) return seen
  let result: { status: number; body: unknown }
  try {
    result = await run()
  } catch (err) {
    inTransaction(deps.db, (tx) => tx.$client.query('DELETE FROM idempotency_keys WHERE key_id = ? AND idem_key = ? AND status_code = 0').run(owner, idemKey))
    throw err
  }
  inTransaction(deps.db, (tx) => {
    if (result.status >= 200 && result.status < 300) keep(tx, deps, owner, idemKey, hash, result)
    else tx.$client.query('DELETE FROM idempotency_keys WHERE key_id = ? AND idem_key = ? AND status_code = 0').run(owner, idemKey)
  })
  return { ...result, replayed: false }
}

/** Sets a route's status and the Idempotent-Replayed header from a stored response, and returns its body. */
export function reply(set: { status?: number | string; headers: Record<string, string | number> }, r: StoredResponse): any {
  set.status = r.status
  if (r.replayed) set.headers['idempotent-replayed'] = 'true'
  return r.body
}

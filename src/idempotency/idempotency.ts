import { createHash } from 'node:crypto'
import { and, eq, lt } from 'drizzle-orm'
import { inTransaction, type Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { AppError, validationFailed } from '../platform/errors'
import { idempotencyKeys } from './idempotency.table'
import { openLinksIn, sealLinksIn, type JobLinks } from '../jobs/job-links'

/** Keys are kept at least this long (24 h promised; 48 h kept). */
const KEEP_MS = 48 * 3_600_000

/** Canonical JSON: object keys sorted, so the same body always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

export interface StoredResponse { status: number; body: unknown; replayed: boolean }

/**
 * Runs a write under an Idempotency-Key, per API key: the first request's successful response
 * is stored in the same transaction as the write, and a retry with the same key and body gets
 * it back without writing anything. The same key with another request: 422
 * idempotency_key_reused. Without a key, just runs the write. The kept response holds the job's
 * links sealed, like every other stored copy of them.
 */
export function withIdempotency(
  deps: { db: Db; clock: Clock; links: JobLinks },
  keyId: string,
  idemKey: string | undefined,
  request: { method: string; path: string; body: unknown },
  run: () => { status: number; body: unknown },
): StoredResponse {
  if (idemKey === undefined) return { ...run(), replayed: false }
  if (idemKey.length < 1 || idemKey.length > 255 || !/^[\x21-\x7e]+$/.test(idemKey)) {
    throw validationFailed([{ path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters (a UUID is ideal)' }])
  }
  const hash = createHash('sha256').update(`${request.method} ${request.path}\n${canonical(request.body)}`).digest('hex')
  // One synchronous transaction: two concurrent retries are serialised, so one key makes one job.
  return inTransaction(deps.db, (tx) => {
    const now = deps.clock.now()
    tx.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, now - KEEP_MS)).run()
    const seen = tx.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.keyId, keyId), eq(idempotencyKeys.idemKey, idemKey))).get()
    if (seen) {
      if (seen.requestHash !== hash) {
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request. Use a new key for a new request.', { idempotency_key: idemKey })
      }
      return { status: seen.statusCode, body: JSON.parse(openLinksIn(deps.links, seen.responseBody)), replayed: true }
    }
    const result = run()
    if (result.status >= 200 && result.status < 300) {
      tx.insert(idempotencyKeys).values({ keyId, idemKey, requestHash: hash, statusCode: result.status, responseBody: sealLinksIn(deps.links, JSON.stringify(result.body)), createdAt: now }).run()
    }
    return { ...result, replayed: false }
  })
}

import type { Db } from '../db/client'
import type { PgClient } from '../db/pg/pg-client'
import type { Clock } from './clock'
import { decisionOf, RateLimiter, type LimitDecision, type LimitKind, type Limiter } from './rate-limit'

/**
 * The API keys' token buckets kept in the database, for several instances on one PostgreSQL
 * database: each key gets its `limit` a minute across all of them, as RateLimiter gives it in one
 * process. One statement per request reads, refills and takes from the bucket atomically (the
 * row's lock orders instances taking at once). Buckets live in an UNLOGGED table (no WAL; emptied
 * if PostgreSQL crashes, when every key starts full again); full ones are pruned (pruneFull).
 */
export class SharedRateLimiter<K extends string = LimitKind> implements Limiter<K> {
  private readonly takeOne
  private readonly read
  private readonly dropFull
  constructor(db: Db, private readonly clock: Clock, private readonly limits: Record<K, number>) {
    // ?3 limit, ?4 now, ?5 tokens per ms. A refill never runs backwards when clocks differ a little.
    const refilled = 'LEAST(?3, b.tokens + GREATEST(0, ?4 - b.at) * ?5)'
    // Unannounced: other instances' caches and boards have nothing to learn from a bucket.
    const client = db.$client as unknown as PgClient
    this.takeOne = client.unannounced<{ tokens: number; allowed: number }, [string, string, number, number, number]>(
      `INSERT INTO rate_limit_buckets AS b (kind, id, tokens, at, allowed) VALUES (?1, ?2, ?3 - 1, ?4, 1)
       ON CONFLICT (kind, id) DO UPDATE SET
         tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
         allowed = CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
         at = GREATEST(b.at, ?4)
       RETURNING tokens, allowed`,
    )
    this.read = client.query<{ tokens: number; at: number }, [string, string]>('SELECT tokens, at FROM rate_limit_buckets WHERE kind = ? AND id = ?')
    this.dropFull = client.unannounced<unknown, [number]>('DELETE FROM rate_limit_buckets WHERE at < ?')
  }

  take(id: string, kind: K): LimitDecision {
    const limit = this.limits[kind]
    const perMs = limit / 60_000
    const row = this.takeOne.get(kind, id, limit, this.clock.now(), perMs)!
    return decisionOf(limit, perMs, Number(row.tokens), row.allowed === 1)
  }

  peek(id: string, kind: K): LimitDecision {
    const limit = this.limits[kind]
    const perMs = limit / 60_000
    const row = this.read.get(kind, id)
    const tokens = row ? Math.min(limit, Number(row.tokens) + Math.max(0, this.clock.now() - Number(row.at)) * perMs) : limit
    return decisionOf(limit, perMs, tokens, tokens >= 1)
  }

  /** Forgets buckets that have refilled (a minute untouched): they behave exactly like new ones. */
  pruneFull(): number {
    return this.dropFull.run(this.clock.now() - 60_000).changes
  }
}

/**
 * A limiter for `limits`: in this process's memory on SQLite (one process), in the database on
 * PostgreSQL, where several instances must count together (each kind is its own set of buckets).
 */
export function limiterFor<K extends string>(db: Db, clock: Clock, limits: Record<K, number>): Limiter<K> {
  return db.engine === 'postgres' ? new SharedRateLimiter(db, clock, limits) : new RateLimiter(clock, limits)
}

import type { Clock } from './clock'

export type LimitKind = 'read' | 'write'

export interface LimitDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Milliseconds until the bucket is full again. */
  resetMs: number
  /** Whole seconds to wait before one more request fits (0 when allowed). */
  retryAfterS: number
}

/**
 * Per-key token buckets: each key gets `limit` reads and `limit` writes a minute, refilled
 * continuously, so a burst of the whole minute's quota is allowed and then one request
 * every 60/limit seconds. State is in memory: the service is one process.
 */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>()
  constructor(private clock: Clock, private limits: Record<LimitKind, number>) {}

  /** Takes one token for the key and kind, or says how long to wait. */
  take(keyId: string, kind: LimitKind): LimitDecision {
    const limit = this.limits[kind]
    const perMs = limit / 60_000
    const now = this.clock.now()
    const id = `${kind}:${keyId}`
    let b = this.buckets.get(id)
    if (!b) { b = { tokens: limit, at: now }; this.buckets.set(id, b) }
    b.tokens = Math.min(limit, b.tokens + Math.max(0, now - b.at) * perMs)
    b.at = now
    const allowed = b.tokens >= 1
    if (allowed) b.tokens -= 1
    return {
      allowed,
      limit,
      remaining: Math.floor(b.tokens),
      resetMs: Math.ceil((limit - b.tokens) / perMs),
      retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)),
    }
  }

  /** Rate-limit headers for a decision (the X-RateLimit-* trio GitHub and others send). */
  static headers(d: LimitDecision, nowMs: number): Record<string, string> {
    const h: Record<string, string> = {
      'X-RateLimit-Limit': String(d.limit),
      'X-RateLimit-Remaining': String(d.remaining),
      'X-RateLimit-Reset': String(Math.ceil((nowMs + d.resetMs) / 1000)),
    }
    if (!d.allowed) h['Retry-After'] = String(d.retryAfterS)
    return h
  }
}

import ipaddr from 'ipaddr.js'
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

/** What takes from (or looks at) a key's buckets: RateLimiter in one process, SharedRateLimiter across instances. */
export interface Limiter<K extends string = LimitKind> {
  take(id: string, kind: K): LimitDecision
  peek(id: string, kind: K): LimitDecision
}

/** The decision for a bucket left holding `tokens` (after the one taken, if it was). */
export function decisionOf(limit: number, perMs: number, tokens: number, allowed: boolean): LimitDecision {
  return {
    allowed,
    limit,
    remaining: Math.floor(tokens),
    resetMs: Math.ceil((limit - tokens) / perMs),
    retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)),
  }
}

/** Past this many tracked buckets, full ones are forgotten (at most once a second). */
const MAX_TRACKED = 10_000

/**
 * Token buckets per id and kind: each id gets `limit` of each kind a minute, refilled
 * continuously, so a burst of the whole minute's quota is allowed and then one request
 * every 60/limit seconds. State is in memory, for one process (several instances on PostgreSQL
 * share the API keys' buckets through SharedRateLimiter).
 */
export class RateLimiter<K extends string = LimitKind> implements Limiter<K> {
  /** Buckets by kind, then id: looking one up builds no key string. */
  private buckets = new Map<K, Map<string, { tokens: number; at: number; limit: number }>>()
  private size = 0
  private prunedAt = -Infinity
  constructor(private clock: Clock, private limits: Record<K, number>) {}

  /** Takes one token for the id and kind, or says how long to wait. */
  take(id: string, kind: K): LimitDecision {
    return this.decide(id, kind, true)
  }

  /** Says whether one more would fit now, without taking it. */
  peek(id: string, kind: K): LimitDecision {
    return this.decide(id, kind, false)
  }

  private decide(id: string, kind: K, take: boolean): LimitDecision {
    const limit = this.limits[kind]
    const perMs = limit / 60_000
    const now = this.clock.now()
    let ofKind = this.buckets.get(kind)
    if (!ofKind) this.buckets.set(kind, ofKind = new Map())
    let b = ofKind.get(id)
    if (!b) {
      if (this.size >= MAX_TRACKED) this.prune(now)
      b = { tokens: limit, at: now, limit }
      if (take) { ofKind.set(id, b); this.size++ }
    }
    b.tokens = Math.min(limit, b.tokens + Math.max(0, now - b.at) * perMs)
    b.at = now
    const allowed = b.tokens >= 1
    if (allowed && take) b.tokens -= 1
    return decisionOf(limit, perMs, b.tokens, allowed)
  }

  /** Forgets buckets that have refilled: they behave exactly like new ones. */
  private prune(now: number) {
    if (now - this.prunedAt < 1000) return
    this.prunedAt = now
    for (const ofKind of this.buckets.values()) {
      for (const [id, b] of ofKind) {
        if (b.tokens + Math.max(0, now - b.at) * (b.limit / 60_000) >= b.limit) { ofKind.delete(id); this.size-- }
      }
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

/**
 * The id a client address is limited by: an IPv4 address itself (IPv4-mapped IPv6 included),
 * an IPv6 address by its /64, since one host usually holds a whole /64.
 */
export function addressBucket(address: string | undefined): string {
  if (!address) return 'unknown'
  try {
    const ip = ipaddr.process(address)
    if (ip.kind() === 'ipv4') return ip.toString()
    return `${(ip as ipaddr.IPv6).toNormalizedString().split(':').slice(0, 4).join(':')}::/64`
  } catch {
    return address
  }
}

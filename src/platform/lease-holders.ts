import type { Db } from '../db/client'
import type { PgClient } from '../db/pg/pg-client'
import type { Clock } from './clock'
import { isGoneLocalOwner } from './lease-owner'

/** A holder whose heartbeat is older than this is gone (six missed beats at the default 5 s). */
export const HOLDER_STALE_MS = 30_000
/** Heartbeats not seen for this long are forgotten. */
const FORGET_MS = 7 * 86_400_000

/**
 * Who holds leases and is still alive, for taking back the leases of a process that died.
 * - Everywhere: a holder on this machine whose process is gone (isGoneLocalOwner).
 * - On PostgreSQL, where instances run on several machines: every holder writes a heartbeat
 *   (`beat`, every few seconds); one whose heartbeat is older than HOLDER_STALE_MS is gone,
 *   whatever machine it ran on. A holder that never wrote one (an older binary) is not judged
 *   by it: its leases are waited out. The machines' clocks must agree to within seconds (NTP),
 *   as webhook signatures' timestamps already need.
 */
export class LeaseHolders {
  private readonly upsert
  private readonly staleOf
  private readonly remove
  private readonly forget

  constructor(db: Db, private readonly clock: Clock, private readonly self: string) {
    if (db.engine !== 'postgres') return
    // Unannounced: other instances' caches and boards have nothing to learn from a heartbeat.
    const client = db.$client as unknown as PgClient
    // Returns the beat before this one, so a holder can tell it was itself silent too long.
    this.upsert = client.unannounced<{ before: number | null }, [string, number]>(
      `INSERT INTO lease_holders AS h (owner, seen_at) VALUES (?1, ?2)
       ON CONFLICT (owner) DO UPDATE SET seen_at = GREATEST(h.seen_at, ?2)
       RETURNING (SELECT seen_at FROM lease_holders WHERE owner = ?1) AS before`,
    )
    this.staleOf = client.query<{ owner: string }, [number]>('SELECT owner FROM lease_holders WHERE seen_at < ?')
    this.remove = client.unannounced<unknown, [string]>('DELETE FROM lease_holders WHERE owner = ?')
    this.forget = client.unannounced<unknown, [number]>('DELETE FROM lease_holders WHERE seen_at < ?')
  }

  /**
   * Says this process is alive. Returns whether it had been silent longer than HOLDER_STALE_MS
   * before (its event loop or its database connection held up): others may have taken back its
   * leases meanwhile, and what it claimed is no longer its own.
   */
  beat(): boolean {
    if (!this.upsert) return false
    const now = this.clock.now()
    const before = this.upsert.get(this.self, now)?.before
    this.forget!.run(now - FORGET_MS)
    return before !== null && before !== undefined && now - Number(before) > HOLDER_STALE_MS
  }

  /**
   * The holders among `owners` whose leases may be taken back now. At start (`atStart`) leases
   * under this process's own name are a dead predecessor's (its pid reused); later they are its own.
   */
  gone(owners: (string | null)[], atStart: boolean): (string | null)[] {
    const candidates = owners.filter((o) => atStart || o !== this.self)
    if (!candidates.length) return []
    const stale = this.staleOf ? new Set(this.staleOf.all(this.clock.now() - HOLDER_STALE_MS).map((r) => r.owner)) : new Set<string>()
    return candidates.filter((o) => isGoneLocalOwner(o, this.self) || (o !== null && o !== this.self && stale.has(o)))
  }

  /** This process stops: its heartbeat goes with it (what it held it has handed back). */
  leave(): void {
    this.remove?.run(this.self)
  }
}

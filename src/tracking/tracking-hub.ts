import type { Db } from '../db/client'
import type { BusEvent, JobEventBus } from '../jobs/job-event-bus'
import type { Logger } from '../platform/log'
import { HEARTBEAT } from '../pages/sse'

/** One open tracking page: its link's token, its job, and where its bytes go. */
export interface TrackingClient {
  token: string
  jobId: string
  send(bytes: Uint8Array): void
  /** Ends the stream. */
  close(): void
}

/** What a token's stream is sent now: its state message (`id` its job's event count), or the last message of a dead link. */
export type TrackingMessage = { state: Uint8Array } | { gone: Uint8Array }

/**
 * Fans committed job events out to the tracking pages open on that job: on each event of a
 * watched job, every distinct link watching it is looked up once and sent its new state (or, if
 * the link died with that event, a `gone` message, and its streams end). One bus subscription
 * for every page, whatever their number; events of jobs nobody watches cost a map lookup.
 */
export class TrackingHub {
  private readonly byJob = new Map<string, Set<TrackingClient>>()
  private stopListening: (() => void) | null = null
  private timer: ReturnType<typeof setInterval> | null = null
  private ticks = 0
  private readonly latest

  constructor(private readonly deps: {
    db: Db
    bus: JobEventBus
    /** The message for a token now (its state, or `gone`). */
    messageFor: (token: string) => TrackingMessage
    /** The message of a dead link, or null while it lives (asked at each heartbeat: links expire with time). */
    goneFor: (token: string) => Uint8Array | null
    /** Seconds between heartbeats (pages/sse.ts heartbeatTicks). */
    heartbeatTicks: number
    logger?: Logger
    isDraining?: () => boolean
  }) {
    this.latest = deps.db.$client.prepare<{ p: number | null }, [string]>('SELECT event_seq AS p FROM jobs WHERE id = ?')
  }

  /**
   * A job's position in its tracking stream: its own event count, which a page rendered now
   * resumes after (never the service-wide event position: a tracking link must not tell how
   * busy the company is).
   */
  positionOf(jobId: string): number {
    return this.latest.get(jobId)?.p ?? 0
  }

  /** Number of pages connected. */
  get size(): number {
    let n = 0
    for (const set of this.byJob.values()) n += set.size
    return n
  }

  /**
   * Connects a page. Given `after` (the job's event count its state was read at, or its
   * Last-Event-ID), a job that changed since is sent its state at once. Returns the function that
   * disconnects it.
   */
  connect(client: TrackingClient, after: number | null): () => void {
    this.listen()
    if (after !== null && this.positionOf(client.jobId) !== after && !this.deliver(client.token, [client])) return () => {}
    let set = this.byJob.get(client.jobId)
    if (!set) this.byJob.set(client.jobId, (set = new Set()))
    set.add(client)
    return () => this.drop(client)
  }

  private drop(client: TrackingClient): void {
    const set = this.byJob.get(client.jobId)
    if (!set) return
    set.delete(client)
    if (!set.size) this.byJob.delete(client.jobId)
  }

  private listen(): void {
    if (this.stopListening) return
    this.stopListening = this.deps.bus.subscribe(this.deps.bus.position, (e) => this.publish(e))
    // A heartbeat comment every few seconds (well inside the server's idle timeout, pages/sse.ts), each round also
    // ending the streams of links that expired meanwhile; at shutdown every stream ends at once.
    this.timer = setInterval(() => {
      try {
        if (this.deps.isDraining?.()) { for (const set of this.byJob.values()) for (const c of set) c.close(); this.byJob.clear(); return }
        if (++this.ticks % this.deps.heartbeatTicks !== 0) return
        for (const set of [...this.byJob.values()]) {
          for (const c of [...set]) {
            const gone = this.deps.goneFor(c.token)
            if (gone) { this.drop(c); c.send(gone); c.close() } else c.send(HEARTBEAT)
          }
        }
      } catch (err) {
        this.deps.logger?.error({ err }, 'the tracking heartbeat failed')
      }
    }, 1000)
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  private publish(e: BusEvent): void {
    const set = this.byJob.get(e.event.jobId)
    if (!set) return
    const byToken = new Map<string, TrackingClient[]>()
    for (const c of set) byToken.set(c.token, [...(byToken.get(c.token) ?? []), c])
    for (const [token, clients] of byToken) this.deliver(token, clients)
  }

  /** Sends a token's message to its clients; false (and the streams ended) when the link is dead. */
  private deliver(token: string, clients: TrackingClient[]): boolean {
    let m: TrackingMessage
    try {
      m = this.deps.messageFor(token)
    } catch (err) {
      this.deps.logger?.error({ err }, 'the tracking stream could not read its state')
      return true
    }
    if ('state' in m) {
      for (const c of clients) c.send(m.state)
      return true
    }
    for (const c of clients) { this.drop(c); c.send(m.gone); c.close() }
    return false
  }
}

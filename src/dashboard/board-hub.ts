import type { Db } from '../db/client'
import type { Logger } from '../platform/log'
import { HEARTBEAT } from '../pages/sse'
import type { JobLinks } from '../jobs/job-links'
import { findAccountById } from '../accounts/account.queries'
import { usableTimeZone } from '../platform/time-zone'
import type { BusEvent, JobEventBus } from '../jobs/job-event-bus'
import { jobEventView, toJobEventRow } from '../jobs/job-events'
import { readJobView } from '../jobs/present-job'
import type { JobView } from '../jobs/job.view'
import { BOARD_STATUSES } from '../jobs/list-board-jobs'
import { onSessionsEnded } from '../users/sessions'
import { boardCard } from './board.page'
import { latestCustomerMessages } from '../jobs/customer-messages'

/** One board stream's subscriber: which account it shows, and where its bytes go. */
export interface BoardClient {
  accountId: string
  /** Site ids the viewer is limited to, or null for every site. */
  siteIds: string[] | null
  send(bytes: Uint8Array): void
  /** Ends the stream (the service is shutting down, or the viewer's session ended). */
  close(): void
  /** Whether the viewer may still see the board (their session has not ended); asked after sessions end here and at every heartbeat. */
  isLive?(): boolean
}

interface Message { position: number; accountId: string; siteId: string; bytes: Uint8Array }

const RING = 4096
const CATCH_UP_LIMIT = 20_000
const encoder = new TextEncoder()
/** The last message of a stream whose session ended (signed out, password changed, login disabled): the page goes to the sign-in page. */
const SIGNED_OUT = encoder.encode('event: signed_out\ndata: {}\n\n')

/**
 * Fans committed job events out to every open board. Each event is turned into its
 * Server-Sent Events message once (the timeline event and the job as GET /jobs/{id} shows it
 * then), whatever the number of boards, and kept in a ring of recent messages; a board that
 * reconnects with Last-Event-ID gets what it missed from the ring, or from the database when it
 * was away longer, in order and once.
 */
export class BoardHub {
  private readonly clients = new Set<BoardClient>()
  private readonly ring: Message[] = []
  private stopListening: (() => void) | null = null
  private timer: ReturnType<typeof setInterval> | null = null
  private ticks = 0

  /** `heartbeatTicks`: seconds between heartbeats (pages/sse.ts heartbeatTicks). */
  constructor(private readonly deps: { db: Db; links: JobLinks; bus: JobEventBus; heartbeatTicks: number; logger?: Logger; isDraining?: () => boolean }) {}

  /** The position of the newest event committed (what a fresh board's `hello` names). */
  get position(): number {
    return this.deps.bus.position
  }

  /** Number of boards connected. */
  get size(): number {
    return this.clients.size
  }

  /**
   * Connects a board: first the messages after `lastEventId` (when given), then every new one
   * of its account. Returns the function that disconnects it. A gap too long to replay (more
   * than CATCH_UP_LIMIT events) gets a `resync` message: the board re-reads its whole state.
   */
  connect(client: BoardClient, lastEventId: number | null): () => void {
    this.listen()
    if (lastEventId !== null && lastEventId < this.position) this.replay(client, lastEventId)
    this.clients.add(client)
    return () => { this.clients.delete(client) }
  }

  private listen(): void {
    if (this.stopListening) return
    this.stopListening = this.deps.bus.subscribe(this.deps.bus.position, (e) => this.publish(e))
    // A session ended here (sign-out, new password, disabled login): its boards stop at once.
    // Heard for as long as the process runs, as the bus is.
    onSessionsEnded(() => this.dropEndedSessions())
    // One timer for every board: a heartbeat comment every few seconds (well inside the server's
    // idle timeout, pages/sse.ts), and at once when shutdown begins every stream is ended so draining is not held.
    // Each heartbeat round also drops the boards of sessions another process ended (the console).
    this.timer = setInterval(() => {
      try {
        if (this.deps.isDraining?.()) { for (const c of [...this.clients]) c.close(); this.clients.clear(); return }
        if (++this.ticks % this.deps.heartbeatTicks === 0) {
          this.dropEndedSessions()
          for (const c of this.clients) c.send(HEARTBEAT)
        }
      } catch (err) {
        this.deps.logger?.error({ err }, 'the board heartbeat failed')
      }
    }, 1000)
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  /** Ends the streams whose viewer's session has ended, telling each page so first. */
  private dropEndedSessions(): void {
    for (const c of [...this.clients]) {
      if (!c.isLive || c.isLive()) continue
      this.clients.delete(c)
      c.send(SIGNED_OUT)
      c.close()
    }
  }

  private publish(e: BusEvent): void {
    const m = this.messageOf(e.position, e.event, e.siteId)
    this.ring.push(m)
    if (this.ring.length > RING) this.ring.splice(0, this.ring.length - RING)
    for (const c of this.clients) if (visible(c, m)) c.send(m.bytes)
  }

  private replay(client: BoardClient, after: number): void {
    const oldest = this.ring[0]?.position
    if (oldest !== undefined && oldest <= after + 1) {
      for (const m of this.ring) if (m.position > after && visible(client, m)) client.send(m.bytes)
      return
    }
    // Away longer than the ring holds: read what this account missed from the database.
    const upTo = oldest !== undefined ? oldest - 1 : this.position
    const rows = this.deps.db.$client.query<Record<string, any>, [string, number, number, number]>(
      'SELECT e.*, j.site_id AS job_site_id FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE e.account_id = ? AND e.position > ? AND e.position <= ? ORDER BY e.position LIMIT ?',
    ).all(client.accountId, after, upTo, CATCH_UP_LIMIT + 1)
    if (rows.length > CATCH_UP_LIMIT) {
      client.send(encoder.encode(`id: ${this.position}\nevent: resync\ndata: {"position":${this.position}}\n\n`))
      return
    }
    for (const r of rows) {
      const m = this.messageOf(r.position, toJobEventRow(r), r.job_site_id)
      if (visible(client, m)) client.send(m.bytes)
    }
    for (const m of this.ring) if (m.position > after && visible(client, m)) client.send(m.bytes)
  }

  /** The account's time zone, where a card says its time (read per message: a zone changed in Settings shows on the next card). */
  private zoneOf(accountId: string): string {
    return usableTimeZone(findAccountById(this.deps.db, accountId)?.timeZone ?? 'UTC')
  }

  private messageOf(position: number, event: ReturnType<typeof toJobEventRow>, siteId: string): Message {
    let job: JobView | null = null
    try {
      job = readJobView(this.deps.db, this.deps.links, { accountId: event.accountId, siteIds: null }, event.jobId)
    } catch (err) {
      this.deps.logger?.error({ err, job_id: event.jobId }, 'the board could not read a job for its stream')
    }
    // The card as the board draws it (the same markup the page was rendered with), or null when
    // the job is not on the board (finished, archived): the board's script only swaps cards.
    const onBoard = job !== null && !job.archived && (BOARD_STATUSES as readonly string[]).includes(job.status)
    const data = JSON.stringify({ position, event: jobEventView(event), job, card: onBoard ? boardCard(job!, event.createdAt, this.zoneOf(event.accountId), latestCustomerMessages(this.deps.db, [job!.id]).get(job!.id)) : null })
    return { position, accountId: event.accountId, siteId, bytes: encoder.encode(`id: ${position}\nevent: job\ndata: ${data}\n\n`) }
  }
}

function visible(c: BoardClient, m: Message): boolean {
  return c.accountId === m.accountId && (c.siteIds === null || c.siteIds.includes(m.siteId))
}

import type { Db } from '../db/client'
import type { Logger } from '../platform/log'
import { toJobEventRow, type JobEventRow } from './job-events'

/** One committed timeline event as the bus hands it on: its global position, the event, and its job's site. */
export interface BusEvent {
  position: number
  event: JobEventRow
  siteId: string
}

/** Called with each committed event, in position order. */
export type BusListener = (e: BusEvent) => void

const PAGE = 500

/**
 * The post-commit bus: hands every committed job event, once and in commit order (their global
 * `position`), to whoever listens: the live board and tracking streams. It reads from the
 * database what was committed after the last event it handed on, so it never tells of a write
 * that rolled back, and it tells of other processes' writes (a CLI import, a second instance)
 * once it is notified of them. A listener may start from any earlier position (a stream's
 * Last-Event-ID after a dropped connection, a restart): it is first given what it missed.
 */
export class JobEventBus {
  private head: number
  private readonly listeners = new Set<BusListener>()
  private readonly after
  private readonly last
  private scheduled = false

  constructor(db: Db, private readonly logger?: Logger) {
    this.after = db.$client.prepare<Record<string, any>, [number, number]>(
      'SELECT e.*, j.site_id AS job_site_id FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE e.position > ? ORDER BY e.position LIMIT ?',
    )
    this.last = db.$client.prepare<{ p: number | null }, []>('SELECT MAX(position) AS p FROM job_events')
    this.head = this.last.get()?.p ?? 0
  }

  /** The position of the last event handed on. */
  get position(): number {
    return this.head
  }

  /** Says something may have been committed (here, after a job change; or by another process): the bus reads and hands on what is new, soon. */
  notify(): void {
    if (this.scheduled) return
    this.scheduled = true
    queueMicrotask(() => {
      this.scheduled = false
      this.pump()
    })
  }

  /** Reads and hands on everything committed after the head, now. */
  pump(): void {
    // No one listens: only the head moves (a listener that comes later catches up from the table).
    // A 500-row import then costs this thread one indexed read, not reading 500 events for nobody.
    if (this.listeners.size === 0) {
      try {
        this.head = Math.max(this.head, this.last.get()?.p ?? 0)
      } catch (err) {
        this.logger?.error({ err }, 'the event bus could not read new events; it tries again at the next commit')
      }
      return
    }
    for (;;) {
      let rows: Record<string, any>[]
      try {
        rows = this.after.all(this.head, PAGE)
      } catch (err) {
        this.logger?.error({ err }, 'the event bus could not read new events; it tries again at the next commit')
        return
      }
      for (const row of rows) {
        const e: BusEvent = { position: row.position, event: toJobEventRow(row), siteId: row.job_site_id }
        this.head = e.position
        for (const listener of this.listeners) this.deliver(listener, e)
      }
      if (rows.length < PAGE) return
    }
  }

  /**
   * Listens from `fromPosition` on: events after it that were committed before now are handed
   * over at once (in order), then every new one. A position beyond the head (a history since
   * restored from a backup) starts at the head. Returns the function that stops listening.
   */
  subscribe(fromPosition: number, listener: BusListener): () => void {
    this.pump()
    let at = Math.min(Math.max(0, fromPosition), this.head)
    // Up to the head only: what another process commits meanwhile comes with the next pump.
    catchUp: while (at < this.head) {
      const rows = this.after.all(at, PAGE)
      if (!rows.length) break
      for (const row of rows) {
        if (row.position > this.head) break catchUp
        at = row.position
        this.deliver(listener, { position: row.position, event: toJobEventRow(row), siteId: row.job_site_id })
      }
    }
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  private deliver(listener: BusListener, e: BusEvent): void {
    try {
      listener(e)
    } catch (err) {
      // One listener's fault (a closed stream) must not keep the event from the others.
      this.logger?.error({ err, position: e.position }, 'an event bus listener failed')
    }
  }
}

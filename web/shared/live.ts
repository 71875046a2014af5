/**
 * A page's live stream (Server-Sent Events) that misses nothing:
 *
 * - The server sends `hello` first on every connection (with `retry:`), then events whose `id`
 *   is one global position growing in commit order.
 * - After a dropped connection the browser reconnects by itself and sends the last id it saw
 *   as `Last-Event-ID`; the server replays what came after it.
 * - When the browser gives up (the server answered an error, or the page was put away) this
 *   wrapper opens a new stream itself, after a pause that grows to 30 s, passing the last id as
 *   the query parameter `last_event_id` (a new EventSource cannot set the header). Servers read
 *   either, the header first.
 * - `onHello` runs on every `hello`: re-read the page's state there, because whatever changed
 *   between rendering the page (or losing the stream) and this connection may not be replayed.
 * - One stream per tab: it is closed when the page is hidden for good (`pagehide`) and opened
 *   again if the page comes back from the browser's cache.
 * - `pauseWhenHidden`: a tab not shown holds no stream (it connects when first shown, closes
 *   10 s after it is put in the background, and resumes from its last id when shown again).
 *   A browser opens at most six connections to one server over HTTP/1.1: a dispatcher's seventh
 *   open page would otherwise wait for one, and so would every click.
 * - A stream the server refuses for good when the browser comes back to it (401, 404, 410: a
 *   session that ended or a link that died meanwhile) is not retried: the page learns it
 *   (`onRefused`, by default a reload showing the server's own answer for the page).
 */

/** The state of the stream, for an indicator: `connecting` (first time or again), `open`, `closed` (closed by the page). */
export type LiveState = 'connecting' | 'open' | 'closed'

/** What a page listens for. */
export interface LiveOptions {
  /** Handlers of named events (`event: job.updated`), with their parsed JSON data and id. */
  on?: Record<string, (data: unknown, id: string) => void>
  /** Handler of unnamed events (`message`). */
  onMessage?: (data: unknown, id: string) => void
  /** Runs on every `hello`: re-read the page's state here. */
  onHello?: (data: unknown) => void
  onState?: (state: LiveState) => void
  /**
   * The server refused the stream for good (401: the session ended; 404 or 410: the link is
   * dead), learnt when it came back after a drop: the stream stops. By default the page reloads,
   * so the server's answer for the page itself (the sign-in page, the 410 page) is shown.
   */
  onRefused?: (status: number) => void
  /** Holds no stream while the tab is not shown (see the top of this file). */
  pauseWhenHidden?: boolean
}

/** A running stream. */
export interface Live {
  /** The id of the last event received, or null. */
  lastEventId(): string | null
  /** Closes the stream for good. */
  close(): void
}

const FIRST_PAUSE_MS = 500
const LONGEST_PAUSE_MS = 30_000
/** How long a tab put in the background keeps its stream (a quick look at another tab does not drop it). */
const HIDDEN_GRACE_MS = 10_000

/**
 * Why the browser gave up on a stream: the status its URL answers now, when it is one that
 * will not change by trying again (401, 404, 410); null otherwise (the server still away, a
 * 429 or 503 to wait out). The answer's body is not read: a stream that opens is closed at once.
 */
async function refusedStatus(target: string): Promise<number | null> {
  const ctrl = new AbortController()
  try {
    const res = await fetch(target, { headers: { accept: 'text/event-stream' }, cache: 'no-store', signal: ctrl.signal })
    ctrl.abort()
    return res.status === 401 || res.status === 404 || res.status === 410 ? res.status : null
  } catch {
    return null
  }
}

/** Parses an event's data as JSON, or gives the text when it is not JSON. */
function parse(data: string): unknown {
  try {
    return JSON.parse(data)
  } catch {
    return data
  }
}

/** Opens the live stream at `url` (same origin) and keeps it open (see the top of this file). */
export function openLive(url: string, opts: LiveOptions): Live {
  let source: EventSource | null = null
  let lastId: string | null = null
  let pause = FIRST_PAUSE_MS
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let closed = false

  const state = (s: LiveState) => opts.onState?.(s)
  const remember = (event: MessageEvent) => {
    if (event.lastEventId) lastId = event.lastEventId
  }

  const connect = () => {
    clearTimeout(retryTimer)
    let target = url
    if (lastId !== null) {
      const u = new URL(url, location.href)
      u.searchParams.set('last_event_id', lastId)
      target = u.pathname + u.search
    }
    const es = new EventSource(target, { withCredentials: false })
    source = es
    state('connecting')
    es.addEventListener('hello', (event) => {
      pause = FIRST_PAUSE_MS
      state('open')
      opts.onHello?.(parse((event as MessageEvent).data))
    })
    for (const [type, handle] of Object.entries(opts.on ?? {})) {
      es.addEventListener(type, (event) => {
        const e = event as MessageEvent
        remember(e)
        handle(parse(e.data), e.lastEventId)
      })
    }
    es.addEventListener('message', (event) => {
      remember(event)
      opts.onMessage?.(parse(event.data), event.lastEventId)
    })
    es.addEventListener('error', () => {
      if (es.readyState === EventSource.CONNECTING) {
        state('connecting')
        return
      }
      // The browser gave up on this one (an error status, a wrong type): open another later,
      // unless the server says it never will (the session ended or the link died while away).
      es.close()
      if (closed || source !== es) return
      state('connecting')
      void refusedStatus(target).then((status) => {
        if (closed || source !== es) return
        if (status !== null) {
          closed = true
          stop()
          if (opts.onRefused) opts.onRefused(status)
          else location.reload()
          return
        }
        retryTimer = setTimeout(connect, pause)
        pause = Math.min(pause * 2, LONGEST_PAUSE_MS)
      })
    })
  }

  const stop = () => {
    clearTimeout(retryTimer)
    source?.close()
    source = null
  }
  const onPageHide = () => stop()
  const onPageShow = (event: PageTransitionEvent) => {
    if (event.persisted && !closed && !(opts.pauseWhenHidden && document.hidden)) connect()
  }
  let hiddenTimer: ReturnType<typeof setTimeout> | undefined
  const onVisibility = () => {
    if (closed) return
    clearTimeout(hiddenTimer)
    if (!document.hidden) { if (!source) connect(); return }
    hiddenTimer = setTimeout(() => { if (document.hidden && !closed) stop() }, HIDDEN_GRACE_MS)
  }
  window.addEventListener('pagehide', onPageHide)
  window.addEventListener('pageshow', onPageShow)
  if (opts.pauseWhenHidden) document.addEventListener('visibilitychange', onVisibility)
  // A tab opened in the background connects when it is first shown.
  if (!(opts.pauseWhenHidden && document.hidden)) connect()

  return {
    lastEventId: () => lastId,
    close() {
      closed = true
      clearTimeout(hiddenTimer)
      stop()
      window.removeEventListener('pagehide', onPageHide)
      window.removeEventListener('pageshow', onPageShow)
      document.removeEventListener('visibilitychange', onVisibility)
      state('closed')
    },
  }
}

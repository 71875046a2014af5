import { writeSync } from 'node:fs'

/**
 * Where log lines go: a file descriptor (stdout for `serve`), written in batches. Lines are
 * gathered and written with one write() call per batch: when 64 KiB are waiting, after 100 ms,
 * or at once for a warn, error or fatal line (written before the call returns). Pino's own
 * destination (sonic-boom) measures the byte length of everything still waiting on every line,
 * which under load cost a third of a request's CPU.
 *
 * Batches are written synchronously: one write() per batch costs little, and a line handed to
 * the kernel before the process exits is never lost (an asynchronous write still in flight
 * when process.exit() runs is). Only a pipe whose reader has stopped reading (EAGAIN) makes a
 * batch wait: it is retried shortly, or at exit for up to two seconds.
 */
export class LogDestination {
  private lines: string[] = []
  private waiting = 0
  /** Bytes of an earlier batch the pipe refused (EAGAIN): written before anything newer. */
  private held: Buffer | null = null
  private timer: ReturnType<typeof setTimeout> | null = null

  constructor(private readonly fd: number, private readonly opts: { batchBytes?: number; batchMs?: number } = {}) {
    // Whatever is still waiting is written when the process exits, however it exits cleanly.
    if (!live.size) process.on('exit', () => { for (const ref of live) ref.deref()?.flushSync(2_000) })
    live.add(new WeakRef(this))
  }

  /** Takes one line (pino calls this); a warn, error or fatal line is written at once. */
  write(line: string): boolean {
    this.lines.push(line)
    this.waiting += line.length
    // Pino lines begin {"level":40 (warn), 50 (error) or 60 (fatal): an operator must see those now.
    if (line.charCodeAt(9) >= 52 /* 4 */ && line.startsWith('{"level":')) this.flushSync()
    else if (this.waiting >= (this.opts.batchBytes ?? 64 * 1024)) this.flushSync(0)
    else this.timer ??= unref(setTimeout(() => { this.timer = null; this.flushSync(0) }, this.opts.batchMs ?? 100))
    return true
  }

  /** Pino's logger.flush(cb): writes what is waiting, then calls back. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync()
    cb?.()
  }

  /**
   * Writes what is waiting before returning. When the pipe is full, waits up to `patienceMs`
   * for its reader, then keeps the rest and tries again in a moment.
   */
  flushSync(patienceMs = 200): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    if (this.lines.length) {
      const fresh = Buffer.from(this.lines.join(''))
      this.held = this.held ? Buffer.concat([this.held, fresh]) : fresh
      this.lines = []
      this.waiting = 0
    }
    const data = this.held
    if (!data) return
    const giveUpAt = Date.now() + patienceMs
    let at = 0
    while (at < data.length) {
      try { at += writeSync(this.fd, data, at) } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') { at = data.length; break } // closed stdout: nothing can be written
        if (Date.now() >= giveUpAt) break
        Atomics.wait(pause, 0, 0, 1)
      }
    }
    this.held = at < data.length ? data.subarray(at) : null
    if (this.held) this.timer ??= unref(setTimeout(() => { this.timer = null; this.flushSync(0) }, 5))
  }
}

/** Every destination made in this process (weakly), flushed on exit by one listener. */
const live = new Set<WeakRef<LogDestination>>()
const pause = new Int32Array(new SharedArrayBuffer(4))

function unref<T>(timer: T): T {
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}

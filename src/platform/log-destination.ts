import { write as writeAsync, writeSync } from 'node:fs'

/**
 * Where log lines go: a file descriptor (stdout for `serve`), written in batches. Lines are
 * gathered and written with one write() call per batch: when 64 KiB are waiting, after 100 ms,
 * or at once for an error or fatal line (which is written before the call returns). Pino's own
 * destination (sonic-boom) measures the byte length of everything still waiting on every line,
 * which under load cost a third of a request's CPU.
 */
export class LogDestination {
  private lines: string[] = []
  private waiting = 0
  private writing = false
  private timer: ReturnType<typeof setTimeout> | null = null
  private readonly done: ((err?: Error) => void)[] = []

  constructor(private readonly fd: number, private readonly opts: { batchBytes?: number; batchMs?: number } = {}) {
    // Whatever is still waiting is written when the process exits, however it exits cleanly.
    if (!live.size) process.on('exit', () => { for (const ref of live) ref.deref()?.flushSync() })
    live.add(new WeakRef(this))
  }

  /** Takes one line (pino calls this); an error or fatal line is written at once. */
  write(line: string): boolean {
    this.lines.push(line)
    this.waiting += line.length
    // Pino lines begin {"level":50 (error) or 60 (fatal): those must not wait for a batch.
    if (line.charCodeAt(9) >= 53 /* 5 */ && line.startsWith('{"level":')) this.flushSync()
    else if (this.waiting >= (this.opts.batchBytes ?? 64 * 1024)) this.flush()
    else this.timer ??= unref(setTimeout(() => { this.timer = null; this.flush() }, this.opts.batchMs ?? 100))
    return true
  }

  /** Writes what is waiting in the background; `cb` runs once it is written. */
  flush(cb?: (err?: Error) => void): void {
    if (cb) this.done.push(cb)
    if (this.writing) return
    if (!this.lines.length) { this.settle(); return }
    const data = Buffer.from(this.lines.join(''))
    this.lines = []
    this.waiting = 0
    this.writing = true
    this.send(data, 0)
  }

  /** Writes what is waiting before returning (errors, shutdown, exit). */
  flushSync(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    if (!this.lines.length) return
    const data = Buffer.from(this.lines.join(''))
    this.lines = []
    this.waiting = 0
    let at = 0
    for (let tries = 0; at < data.length && tries < 1000; tries++) {
      try { at += writeSync(this.fd, data, at) } catch (err) {
        // A pipe that is full (EAGAIN) drains in a moment; anything else is lost, as it would be on a closed stdout.
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return
      }
    }
  }

  private send(data: Buffer, at: number): void {
    writeAsync(this.fd, data, at, data.length - at, null, (err, n) => {
      if (err && (err as NodeJS.ErrnoException).code === 'EAGAIN') { setTimeout(() => this.send(data, at), 5); return }
      if (!err && at + n < data.length) { this.send(data, at + n); return }
      this.writing = false
      if (this.lines.length && (this.waiting >= (this.opts.batchBytes ?? 64 * 1024) || this.done.length)) this.flush()
      else this.settle(err === null ? undefined : err)
    })
  }

  private settle(err?: Error): void {
    for (const cb of this.done.splice(0)) cb(err)
  }
}

/** Every destination made in this process (weakly), flushed on exit by one listener. */
const live = new Set<WeakRef<LogDestination>>()

function unref<T>(timer: T): T {
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}

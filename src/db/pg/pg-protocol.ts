/** What the server's thread and the PostgreSQL thread say to each other. */
export interface PgThreadData {
  url: string
  port: import('node:worker_threads').MessagePort
  /**
   * Int32 slot 0: the number of the last answer the thread posted (answers are numbered 1, 2, 3
   * ... in order, wrapping as int32; the connection's own answer is 1). Slot 1: how many times
   * another connection said it committed a write (NOTIFY on CHANGES), SQLite's `PRAGMA
   * data_version`'s equal.
   */
  signal: SharedArrayBuffer
  /** This client's name in CHANGES' payloads: its own commits do not count. */
  instance: string
  /**
   * Tests only: each answer's number is signalled this many ms before the answer itself is
   * posted (the order a busy machine can show the two in), to prove the client waits for it.
   */
  answerLagMs?: number
}

/** The channel every write's commit is announced on. */
export const CHANGES = 'towline_changes'

export type PgRequest =
  | { op: 'exec'; sql: string }
  | { op: 'all' | 'values' | 'run'; sql: string; params: unknown[]; /** A write outside a transaction: announce it once done. */ announce?: boolean }

export type PgReply =
  | { ok: true; rows: unknown[]; changes: number }
  | { ok: false; message: string; sqlstate?: string; detail?: string; constraint?: string }

/** An answer as posted: the reply and its number (signal slot 0 holds it once it is posted). */
export type PgAnswer = PgReply & { n: number }

/** What the server's thread and the PostgreSQL thread say to each other. */
export interface PgThreadData {
  url: string
  port: import('node:worker_threads').MessagePort
  /**
   * Int32 slot 0: set to 1 by the thread when an answer is posted. Slot 1: how many times another
   * connection said it committed a write (NOTIFY on CHANGES), SQLite's `PRAGMA data_version`'s equal.
   */
  signal: SharedArrayBuffer
  /** This client's name in CHANGES' payloads: its own commits do not count. */
  instance: string
}

/** The channel every write's commit is announced on. */
export const CHANGES = 'towline_changes'

export type PgRequest =
  | { op: 'exec'; sql: string }
  | { op: 'all' | 'values' | 'run'; sql: string; params: unknown[]; /** A write outside a transaction: announce it once done. */ announce?: boolean }

export type PgReply =
  | { ok: true; rows: unknown[]; changes: number }
  | { ok: false; message: string; sqlstate?: string; detail?: string; constraint?: string }

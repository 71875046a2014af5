/**
 * The CSV import's own thread (a Bun Worker; import-off-thread.ts starts it). WAL lets the
 * server's readers go on meanwhile, and the server's thread never waits for the parse, the checks
 * or the write. The thread runs at a lower CPU priority (this thread only, on Linux), so that on a
 * busy machine the server's requests come first; it is lowered before anything else happens here,
 * so that loading the import's modules (the first task) runs at that priority too. The work
 * itself is import-task.ts.
 */
import { setPriority } from 'node:os'
import type { ImportReply, ImportTask } from './import-off-thread'

declare const self: Worker

// On Linux, setpriority with pid 0 applies to the calling thread only: the server's thread keeps
// its own. Nice 19, not SCHED_IDLE: this thread holds the database's write lock while it writes,
// and an unprivileged thread never leaves SCHED_IDLE; starved under full load, it would hold up
// every writer (every instance, on PostgreSQL).
try { setPriority(0, 19) } catch { /* not allowed here: the import runs at normal priority */ }

// Loaded on the first task, at the priority set above (a static import would be loaded, and its
// modules evaluated, before the line above runs).
let runTask: ((task: ImportTask) => ImportReply) | undefined

self.onmessage = (event: MessageEvent<ImportTask>) => {
  runTask ??= (require('./import-task') as typeof import('./import-task')).runTask
  postMessage(runTask(event.data) satisfies ImportReply)
}

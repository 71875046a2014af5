import pino from 'pino'
import { LogDestination } from './log-destination'

/**
 * Creates the JSON logger: NDJSON on stdout (or `dest`, or a stream tests read), written in
 * batches (warn, error and fatal lines at once), never through a transport (transports hang the
 * compiled binary).
 */
export function createLogger(level: string, dest: number | pino.DestinationStream = 1) {
  return pino(
    {
      level,
      base: { svc: 'towline' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: ['req.headers.authorization', 'authorization', 'key', 'secret'],
    },
    typeof dest === 'number' ? new LogDestination(dest) : dest,
  )
}

export type Logger = ReturnType<typeof createLogger>

/** A JSON string literal; the common case (ids, methods, route patterns) needs no escaping. */
const PLAIN = /^[\w./:{}-]*$/
const str = (s: string) => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s))

/** What the access log says of one request. */
export interface AccessLine {
  request_id: string
  method: string
  route: string
  status: number
  duration_ms: number
  key_id?: string
  user_id?: string
  body_problem?: string
}

/**
 * Returns the access log: one line per request, in the same NDJSON shape and on the same stream
 * as the logger's own lines (`{"level":30,"time":...,"svc":"towline",...,"msg":"request"}`),
 * written without pino's generic serialiser: every request pays for this line, and pino's path
 * cost more than the rest of a key lookup and a JSON response together. Nothing is written
 * below level info.
 */
export function createAccessLog(logger: Logger): ((line: AccessLine) => void) & { enabled(): boolean } {
  const stream = (logger as unknown as Record<symbol, { write(s: string): unknown }>)[pino.symbols.streamSym]
  const enabled = () => logger.isLevelEnabled('info') && stream !== undefined
  let lastMs = -1
  let lastIso = ''
  // `enabled` is offered to callers too, so that a line that will not be written is not even put together.
  return Object.assign((l: AccessLine) => {
    if (!enabled()) return
    const ms = Date.now()
    if (ms !== lastMs) { lastMs = ms; lastIso = new Date(ms).toISOString() }
    let out = `{"level":30,"time":"${lastIso}","svc":"towline","request_id":${str(l.request_id)},"method":${str(l.method)},"route":${str(l.route)},"status":${l.status},"duration_ms":${l.duration_ms}`
    if (l.key_id !== undefined) out += `,"key_id":${str(l.key_id)}`
    if (l.user_id !== undefined) out += `,"user_id":${str(l.user_id)}`
    if (l.body_problem !== undefined) out += `,"body_problem":${str(l.body_problem)}`
    stream!.write(out + ',"msg":"request"}\n')
  }, { enabled })
}

import pino from 'pino'

/** Creates the JSON logger: NDJSON on stdout (or a stream tests read), never a transport (transports hang the compiled binary). */
export function createLogger(level: string, dest: number | pino.DestinationStream = 1) {
  return pino(
    {
      level,
      base: { svc: 'towline' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: ['req.headers.authorization', 'authorization', 'key', 'secret'],
    },
    typeof dest === 'number' ? pino.destination({ dest, sync: false }) : dest,
  )
}

export type Logger = ReturnType<typeof createLogger>

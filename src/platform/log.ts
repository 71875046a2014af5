import pino from 'pino'

/** Creates the JSON logger: NDJSON on stdout, never a transport (transports hang the compiled binary). */
export function createLogger(level: string, dest: number = 1) {
  return pino(
    {
      level,
      base: { svc: 'towline' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: ['req.headers.authorization', 'authorization', 'key', 'secret'],
    },
    pino.destination({ dest, sync: false }),
  )
}

export type Logger = ReturnType<typeof createLogger>

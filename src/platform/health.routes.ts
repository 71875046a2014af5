import { Elysia } from 'elysia'
import type { Db } from '../db/client'
import { VERSION } from '../version'

/** GET /healthz for supervisors: 200 when the database answers, 503 otherwise or while draining. */
export function healthRoutes(deps: { db: Db; isDraining: () => boolean }) {
  const started = Date.now()
  const ping = deps.db.$client.prepare('SELECT 1 AS ok')
  return new Elysia().get('/healthz', ({ set }) => {
    let database = 'ok'
    try { ping.get() } catch { database = 'unavailable' }
    const ok = database === 'ok' && !deps.isDraining()
    set.status = ok ? 200 : 503
    return { status: ok ? 'ok' : deps.isDraining() ? 'draining' : 'unavailable', version: VERSION, database, uptime_s: Math.round((Date.now() - started) / 1000) }
  }, { detail: { hide: true } })
}

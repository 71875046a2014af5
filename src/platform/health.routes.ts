import { Elysia } from 'elysia'
import { VERSION } from '../version'
import { routeProps } from './route-props'

/** GET /healthz for supervisors: 200 when the database answers, 503 otherwise or while draining. */
export function healthRoutes(deps: { databaseAnswers: () => boolean; isDraining: () => boolean }) {
  const started = Date.now()
  return new Elysia().use(routeProps).get('/healthz', ({ set }) => {
    const database = deps.databaseAnswers() ? 'ok' : 'unavailable'
    const draining = deps.isDraining()
    const ok = database === 'ok' && !draining
    set.status = ok ? 200 : 503
    return { status: ok ? 'ok' : draining ? 'draining' : 'unavailable', version: VERSION, database, uptime_s: Math.round((Date.now() - started) / 1000) }
  }, { answers: 'json', detail: { hide: true } })
}

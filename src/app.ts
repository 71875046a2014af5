import { Elysia } from 'elysia'
import type { Config } from './config'
import type { Db } from './db/client'
import type { Clock } from './platform/clock'
import type { Logger } from './platform/log'
import { RateLimiter } from './platform/rate-limit'
import { httpPlugin, createFetchHandler } from './platform/http'
import { buildOpenApiDocument } from './platform/openapi'
import { docsRoutes } from './platform/docs.routes'
import { healthRoutes } from './platform/health.routes'
import { authPlugin } from './accounts/auth.plugin'
import { accountRoutes } from './accounts/account.routes'
import { VERSION } from './version'

/** Everything a request handler may use; tests pass their own clock and database. */
export interface AppDeps {
  db: Db
  clock: Clock
  config: Config
  logger: Logger
  limiter: RateLimiter
  /** True once shutdown has begun. */
  isDraining: () => boolean
}

/** Builds the root Elysia app: error handling and body parsing first, then every feature. */
export function createApp(deps: AppDeps) {
  const auth = authPlugin(deps)
  let app: any
  app = new Elysia({ normalize: false })
    .use(httpPlugin({ logger: deps.logger, maxBodyBytes: deps.config.maxBodyBytes }))
    .use(healthRoutes(deps))
    .use(docsRoutes(() => buildOpenApiDocument(app, { version: VERSION, publicUrl: `${deps.config.publicUrl}/api/v1` })))
    .use(accountRoutes(auth, deps))
  return app as Elysia
}

/** Builds the app and wraps it as the fetch handler Bun.serve (and in-process tests) call. */
export function createHandler(deps: AppDeps) {
  const app = createApp(deps)
  return { app, fetch: createFetchHandler(app, { logger: deps.logger, maxBodyBytes: deps.config.maxBodyBytes, isDraining: deps.isDraining }) }
}

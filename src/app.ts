import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from './config'
import { databasePinger, type Db } from './db/client'
import type { Clock } from './platform/clock'
import type { Logger } from './platform/log'
import type { Limiter } from './platform/rate-limit'
import type { PreRouted } from './platform/pre-routed'
import { httpPlugin, createFetchHandler } from './platform/http'
import { buildApiDocument } from './api-document'
import { docsRoutes } from './platform/docs.routes'
import { compileRouteCheckers, type RouteCheckers } from './platform/validation'
import { healthRoutes } from './platform/health.routes'
import { declaredRouteProps, type RouteProps } from './platform/route-props'
import { authPlugin, createAuthorizer } from './accounts/auth.plugin'
import type { Scope } from './accounts/scopes'
import { accountRoutes } from './accounts/account.routes'
import { jobRoutes } from './jobs/job.routes'
import { unitRoutes } from './units/unit.routes'
import { serviceRoutes } from './services/service.routes'
import { webhookRoutes } from './webhooks/webhook.routes'
import { jobTextRoutes, textRoutes } from './texts/text.routes'
import type { SendSettings } from './webhooks/send-attempt'
import type { JobLinks } from './jobs/job-links'
import type { JobEventBus } from './jobs/job-event-bus'
import { createContextFactory, type ContextFactory } from './operations/context-factory'
import { createSessionGuard, sessionPlugin, type PageRole } from './users/session.plugin'
import { signInRoutes } from './users/sign-in.routes'
import { boardRoutes } from './dashboard/board.routes'
import { newJobRoutes } from './dashboard/new-job.routes'
import { invoiceRoutes } from './invoices/invoice.routes'
import { commercialAccountRoutes } from './commercial-accounts/commercial-account.routes'
import { jobPageRoutes } from './dashboard/job-page.routes'
import { developersRoutes } from './developers/developers.routes'
import { settingsRoutes } from './settings/settings.routes'
import { jobsListRoutes } from './dashboard/jobs-list.routes'
import { jobsCsvRoutes } from './jobs-csv/jobs-csv.routes'
import { trackingRoutes } from './tracking/tracking.routes'
import { driverRoutes } from './driver/driver.routes'
import { goaRoutes } from './goa/goa.routes'
import { assetRoutes, loadPageAssets } from './pages/assets'

/** Everything a request handler may use; tests pass their own clock and database. */
export interface AppDeps {
  db: Db
  clock: Clock
  config: Config
  /** The public URL and key job links are made with. */
  links: JobLinks
  logger: Logger
  limiter: Limiter
  /** True once shutdown has begun. */
  isDraining: () => boolean
  /** How webhook attempts are made (timeout, private targets, extra TLS trust for tests). */
  webhookSend: Omit<SendSettings, 'signal'>
  /** The post-commit bus: job changes notify it; live streams listen to it. */
  bus: JobEventBus
  /** Route plugins mounted after the API, declared with the same route options as pages (tests mount page fixtures here). */
  pages?: AnyElysia[]
}

/** What route builders get: the deps, and the one factory of operation contexts. */
export interface RouteDeps extends AppDeps {
  contexts: ContextFactory
}

/** Builds the root Elysia app: error handling and body parsing first, then every feature. */
export function createApp(appDeps: AppDeps) {
  const deps: RouteDeps = { ...appDeps, contexts: createContextFactory(appDeps) }
  const authorize = createAuthorizer(deps)
  const auth = authPlugin(authorize, deps.contexts)
  const requireSession = createSessionGuard(deps)
  const session = sessionPlugin(requireSession, deps.contexts)
  // Scope and input checks of each route (by path, then method), read from the routes themselves
  // once they are all registered: one lookup per request, no key strings built on the hot path.
  let byRoute: Map<string, Map<string, { scope?: Scope; session?: PageRole; checkers?: RouteCheckers; declared?: Partial<RouteProps> }>> | undefined
  const routeInfo = (method: string, route: string) => {
    if (!byRoute) {
      byRoute = new Map()
      const checkers = compileRouteCheckers(app.routes)
      for (const r of app.routes as any[]) {
        const methods = byRoute.get(r.path) ?? new Map()
        methods.set(r.method, { scope: r.hooks?.detail?.['x-required-scope'], session: r.hooks?.detail?.['x-session'], checkers: checkers.get(`${r.method} ${r.path}`), declared: declaredRouteProps(r.hooks?.detail) })
        byRoute.set(r.path, methods)
      }
    }
    return byRoute.get(route)?.get(method)
  }
  const account = accountRoutes(auth, deps, authorize)
  const jobs = jobRoutes(auth, deps, authorize)
  let app: any
  // normalize: false makes unknown fields a 422 instead of silently stripping them; no t.Transform
  // schemas are used, so the per-response encode pass is skipped.
  app = new Elysia({ normalize: false, encodeSchema: false })
    .use(httpPlugin({
      logger: deps.logger,
      maxBodyBytes: deps.config.maxBodyBytes,
      publicUrl: deps.config.publicUrl,
      beforeBody: (request, route) => {
        const info = routeInfo(request.method === 'HEAD' ? 'GET' : request.method, route)
        if (info?.scope) authorize(request, route, info.scope)
        if (info?.session) requireSession(request, info.session)
      },
      checkersOf: (method, route) => routeInfo(method, route)?.checkers,
      declaredOf: (method, route) => routeInfo(method, route)?.declared,
      routes: () => app.routes,
    }))
    .use(healthRoutes({ databaseAnswers: databasePinger(deps.db), isDraining: deps.isDraining }))
    .use(docsRoutes(() => buildApiDocument(app, deps.config.publicUrl)))
    .use(assetRoutes())
    .use(account.routes)
    .use(jobs.routes)
    .use(unitRoutes(auth, deps))
    .use(serviceRoutes(auth, deps))
    .use(webhookRoutes(auth, deps))
    .use(jobTextRoutes(auth, deps))
    .use(textRoutes(deps))
    .use(signInRoutes(session, requireSession, deps))
    .use(boardRoutes(session, deps))
    .use(newJobRoutes(session, deps))
    .use(invoiceRoutes(session, deps))
    .use(commercialAccountRoutes(auth, session, deps))
    .use(goaRoutes(session, deps))
    .use(trackingRoutes(deps))
    .use(jobPageRoutes(session, deps))
    .use(developersRoutes(session, deps))
    .use(settingsRoutes(session, deps))
    .use(jobsListRoutes(session))
    .use(jobsCsvRoutes(session, deps))
    .use(driverRoutes(session, deps))
  for (const plugin of deps.pages ?? []) app = app.use(plugin)
  skipElysiaValidation(app.routes)
  compileReadsSynchronously(app.routes)
  // GET routes the fetch handler answers itself when the URL (no query) is exactly their path, or their prefix and an id.
  const preRouted: PreRouted = { exact: new Map([['/api/v1/me', account.preRouted]]), under: new Map([['/api/v1/jobs/', jobs.preRoutedJob]]) }
  return { app: app as Elysia, preRouted }
}

/**
 * Tells Elysia not to check route inputs and responses itself. Inputs are checked once, by our
 * own checkers (platform/validation.ts, in the transform step, with plain-word messages), so
 * Elysia's second pass only cost time. Responses are not checked at run time: the test suite
 * checks every response against the OpenAPI document (test/openapi-check.ts), and a response
 * that drifted from its schema is a bug to catch there, not a 500 to give a client.
 */
function skipElysiaValidation(routes: { hooks?: Record<string, any> }[]): void {
  for (const r of routes) {
    const h = r.hooks ?? {}
    for (const part of ['body', 'query', 'params', 'headers'] as const) if (h[part] && typeof h[part] === 'object') h[part].noValidate = true
    const response = h.response
    if (response && typeof response === 'object') {
      if ('type' in response || 'anyOf' in response) response.noValidate = true
      else for (const schema of Object.values(response)) if (schema && typeof schema === 'object') (schema as Record<string, unknown>).noValidate = true
    }
  }
}

/**
 * Compiles GET (and so HEAD) routes without promises where Elysia would add them needlessly.
 * Elysia never reads a body for these, but a route carrying any parse hook (httpPlugin's) is
 * compiled as async; and Elysia reads a handler's source to guess whether it may return a
 * promise, counting any `=> call(` as "may", so `({ ctx, params }) => getJob(ctx, params.id)`
 * was compiled as async too. Every request to such a route made promises nobody needed, and
 * the fetch handler could not answer at once (GET /me: about a tenth of its CPU). So the parse
 * hook is taken off, and a handler that is not declared async (nor a generator) shows Elysia its
 * parameter list alone: all Elysia infers context fields from when they are destructured.
 * A handler that still returns a promise is awaited all the same (Elysia's mapResponse); if that
 * promise rejects, the fetch handler renders the error as the error hook would (http.ts).
 */
function compileReadsSynchronously(routes: { method: string; handler?: unknown; hooks?: Record<string, any> }[]): void {
  for (const r of routes) {
    if (r.method !== 'GET') continue
    if (r.hooks?.parse) r.hooks.parse = []
    const handler = r.handler
    if (typeof handler !== 'function' || handler.constructor.name !== 'Function') continue
    const parameters = destructuredParameters(Function.prototype.toString.call(handler))
    if (parameters !== null) Object.defineProperty(handler, 'toString', { value: () => `${parameters} => undefined`, configurable: true })
  }
}

/** The `({ a, b })` or `()` an arrow function's source begins with, or null when it begins otherwise (an alias Elysia must read the body for). */
function destructuredParameters(source: string): string | null {
  if (source.startsWith('()')) return /^\(\)\s*=>/.test(source) ? '()' : null
  if (!source.startsWith('({')) return null
  let depth = 0
  for (let i = 0; i < source.length; i++) {
    const c = source[i]
    if (c === '(' || c === '{' || c === '[') depth++
    else if (c === ')' || c === '}' || c === ']') {
      if (--depth === 0) return /^\s*=>/.test(source.slice(i + 1)) ? source.slice(0, i + 1) : null
    } else if (c === '"' || c === "'" || c === '`' || c === '/') return null // a default value or a comment: not a plain list
  }
  return null
}

/**
 * Builds the app and wraps it as the fetch handler Bun.serve (and in-process tests) call. `fetch`
 * holds requests until the pages' assets are loaded (pages/assets.ts: tens of milliseconds from
 * source, at once in the binary), so every page can name its scripts' hashed URLs; once `assets`
 * has resolved, `ready` answers the same without that check (serve switches to it).
 */
export function createHandler(deps: AppDeps) {
  const { app, preRouted } = createApp(deps)
  const ready = createFetchHandler(app, { logger: deps.logger, isDraining: deps.isDraining, publicUrl: deps.config.publicUrl, tileUrl: deps.config.tileUrl, trustedProxies: deps.config.trustedProxies, preRouted, idleTimeoutS: deps.config.idleTimeoutS })
  const assets = loadPageAssets()
  let loaded = false
  assets.then(() => { loaded = true }, () => {})
  const fetch: typeof ready = (request, server) => (loaded ? ready(request, server) : assets.then(() => ready(request, server)))
  return { app, fetch, ready, assets }
}

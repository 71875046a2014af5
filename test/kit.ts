/**
 * In-process test kit: a real SQLite file in a temp folder, the real app, a clock the test
 * moves. Route tests call `api.request(...)`, which goes through the same fetch handler
 * Bun.serve uses (Request-Id, body limit, access log included).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHandler, type AppDeps } from '../src/app'
import { readConfig } from '../src/config'
import { openDatabase, closeDatabase, type Db } from '../src/db/client'
import { pgCluster } from './pg'
import { TEST_ENGINE } from './engine'
import { isPostgresUrl } from '../src/db/location'
import { migrateDatabase } from '../src/db/migrate'
import { openLinkKey } from '../src/db/link-key'
import type { JobLinks } from '../src/jobs/job-links'
import { createAccount, ensureDefaultAccount } from '../src/accounts/create-account'
import { createKey } from '../src/accounts/create-key'
import { SCOPES, type Scope } from '../src/accounts/scopes'
import { createLogger, type Logger } from '../src/platform/log'
import { limiterFor } from '../src/platform/shared-rate-limit'
import { JobEventBus } from '../src/jobs/job-event-bus'
import { createContextFactory, type ContextFactory } from '../src/operations/context-factory'
import type { OperationContext } from '../src/operations/operation-context'
import { createAuthenticator } from '../src/accounts/authenticate'
import { responseCheckerFor, type ResponseCheck } from './openapi-check'

export { TEST_ENGINE }

let pgTemplate: string | undefined
/**
 * A fresh database for one test: a SQLite file in `dir`, or on PostgreSQL a new database copied
 * from one migrated once per test process (CREATE DATABASE ... TEMPLATE).
 */
export function testDatabase(dir: string): string {
  if (TEST_ENGINE === 'sqlite') return join(dir, 'towline.db')
  const cluster = pgCluster()
  if (!pgTemplate) {
    const name = `towline_template_${process.pid}`
    const db = openDatabase(cluster.createDatabase({ name }))
    migrateDatabase(db)
    closeDatabase(db)
    pgTemplate = name
  }
  return cluster.createDatabase({ template: pgTemplate })
}

/** A clock tests move by hand. */
export class TestClock {
  constructor(public ms = Date.parse('2026-11-21T09:00:00.000Z')) {}
  now = () => this.ms
  advance(ms: number) { this.ms += ms }
}

export interface TestApi {
  db: Db
  dir: string
  /** TOWLINE_DB and TOWLINE_LINK_KEY_FILE of this database: for a console command run on it. */
  dbEnv: { TOWLINE_DB: string; TOWLINE_LINK_KEY_FILE: string }
  clock: TestClock
  accountId: string
  /** The public URL and key job links are made with. */
  links: JobLinks
  /** The post-commit bus the app notifies. */
  bus: JobEventBus
  /** Makes operation contexts for the app's database and clock (a driver's, a dispatcher's...). */
  contexts: ContextFactory
  /** The operation context an API key's requests run in. */
  contextOfKey(key: string): OperationContext
  /** The Elysia app behind `request` (its routes, for tests that read them). */
  app: ReturnType<typeof createHandler>['app']
  /** Sends a request through the app; `key` is the bearer key, `body` is JSON-encoded unless a string. */
  request(method: string, path: string, opts?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<Response>
  /** Sends a request built by the test (streamed bodies, odd headers) through the same handler, from `address` if given. */
  raw(request: Request, from?: { address: string }): Promise<Response>
  /** Creates a key on the default account (or `accountId`) with the given scopes. */
  key(scopes?: Scope[] | 'all', opts?: { accountId?: string; sites?: string[] }): string
  /** Creates another account and returns its id. */
  account(name: string): string
  close(): void
}

/**
 * Starts the app on a fresh database file; `webhookSend` replaces parts of how webhook attempts
 * are made (resolver, address policy, TLS trust), `pages` mounts extra route plugins (page
 * fixtures), `logger` replaces the silent one (to read what was logged). Every /api/v1 response
 * is checked against the OpenAPI document (declared status, body schema) unless
 * `checkResponses` is false: a response the document does not describe fails the test that got it.
 */
export function startTestApi(env: Record<string, string> = {}, opts: { webhookSend?: Partial<AppDeps['webhookSend']>; checkResponses?: boolean; pages?: AppDeps['pages']; logger?: Logger } = {}): TestApi {
  const dir = mkdtempSync(join(tmpdir(), 'towline-test-'))
  const clock = new TestClock()
  const location = env.TOWLINE_DB ?? testDatabase(dir)
  // A PostgreSQL database's link key is kept in the test's folder (a file's is kept beside it).
  const keyFile = isPostgresUrl(location) ? { TOWLINE_LINK_KEY_FILE: join(dir, 'link.key') } : {}
  const config = readConfig({ TOWLINE_DB: location, ...keyFile, TOWLINE_PUBLIC_URL: 'http://towline.test', ...env })
  const db = openDatabase(config.dbPath)
  const { key } = openLinkKey(db, config.linkKeyFile)
  migrateDatabase(db, { linkKey: () => key })
  const links = { publicUrl: config.publicUrl, key }
  const { account } = ensureDefaultAccount(db, clock)
  // As serve does: on PostgreSQL the keys' buckets are shared through the database.
  const limits = { read: config.rateLimitReads, write: config.rateLimitWrites }
  const limiter = limiterFor(db, clock, limits)
  // TOWLINE_TEST_LOG=error shows what the app logs (a failing test's 500, say).
  const logger = opts.logger ?? createLogger((process.env.TOWLINE_TEST_LOG as 'error' | undefined) ?? 'silent')
  const bus = new JobEventBus(db, logger)
  const { app, fetch: handle } = createHandler({ db, clock, config, links, logger, limiter, bus, isDraining: () => false, webhookSend: { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, ...opts.webhookSend }, pages: opts.pages })
  let check: Promise<ResponseCheck> | undefined
  const fetch = async (request: Request, server?: Parameters<typeof handle>[1]): Promise<Response> => {
    // Read before handling: the handler may consume the request.
    const { method, url } = request
    const response = await handle(request, server)
    if (opts.checkResponses === false || !new URL(url).pathname.startsWith('/api/v1/')) return response
    check ??= Promise.resolve(handle(new Request('http://localhost/api/v1/openapi.json'))).then(async (r) => responseCheckerFor(await r.json()))
    await (await check)(method, url, response)
    return response
  }
  const contexts = createContextFactory({ db, clock, links, bus })
  const authenticate = createAuthenticator(db, clock.now)
  return {
    db, dir, dbEnv: { TOWLINE_DB: config.dbPath, TOWLINE_LINK_KEY_FILE: config.linkKeyFile }, clock, accountId: account.id, links, app, bus, contexts,
    contextOfKey: (key) => contexts.forKey(authenticate(`Bearer ${key}`)),
    request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) }
      if (opts.key) headers.authorization = `Bearer ${opts.key}`
      let body: string | undefined
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
        headers['content-type'] ??= 'application/json'
      }
      return fetch(new Request(`http://localhost${path}`, { method, headers, body }))
    },
    raw: (request, from) => fetch(request, from ? { requestIP: () => ({ address: from.address, family: from.address.includes(':') ? 'IPv6' : 'IPv4', port: 40000 }) } : undefined),
    key(scopes = 'all', opts = {}) {
      return createKey(contexts.forOperator(opts.accountId ?? account.id), { name: 'test', scopes: scopes === 'all' ? [...SCOPES] : scopes, sites: opts.sites }).key
    },
    account(name) {
      return createAccount(db, clock, { name }).account.id
    },
    close() {
      closeDatabase(db)
      // A test's own PostgreSQL database goes with it (one named by the test is the test's to keep).
      if (db.engine === 'postgres' && env.TOWLINE_DB === undefined) pgCluster().dropDatabase(db.location)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Asserts the error shape of the spec and returns the error object. */
export async function expectError(res: Response, status: number, code: string) {
  const { expect } = await import('bun:test')
  const text = await res.text()
  let body: any
  try { body = JSON.parse(text) } catch { throw new Error(`expected JSON error ${status} ${code}, got ${res.status}: ${text}`) }
  expect({ status: res.status, code: body?.error?.code }).toEqual({ status, code })
  expect(typeof body.error.message).toBe('string')
  expect(body.error.details.database_message).toBe(body.error.message)
  return body.error as { code: string; message: string; details: Record<string, any> }
}

/**
 * Runs `body` while another connection to the test's SQLite file holds the write lock (BEGIN
 * IMMEDIATE), as a long write elsewhere does (an import, a CLI command), then commits it.
 */
export async function whileWriteLockHeld<T>(db: Db, body: () => Promise<T>): Promise<T> {
  const other = openDatabase(db.location)
  try {
    other.$client.exec('BEGIN IMMEDIATE')
    const result = await body()
    other.$client.exec('COMMIT')
    return result
  } finally {
    closeDatabase(other)
  }
}

/** Waits until `cond` holds (polling every few ms), or throws after `ms`: tests wait for events, never sleep through time. */
export async function until(cond: () => boolean | Promise<boolean>, ms = 8000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what} not met in time`)
    await Bun.sleep(5)
  }
}

/**
 * Dashboard logins for the bench sections that load pages: a login made with `towline users
 * create`, as an operator makes one, and sessions opened by POST /login as a browser opens them.
 */
import type { BenchContext, RunningServer } from './lib'
import { runCommand } from './lib'
import { towlineEnv } from './frame'

/** A login the bench made. */
export interface BenchLogin { email: string; password: string }

/** Creates an owner login in `db` (of the default account unless `accountId`) with `towline users create` and returns it. */
export async function createBenchLogin(ctx: BenchContext, db: string, opts: { email?: string; accountId?: string } = {}): Promise<BenchLogin> {
  const email = opts.email ?? 'bench-owner@example.com'
  const password = 'bench password 1234'
  const account = opts.accountId ? ['--account', opts.accountId] : []
  await runCommand(ctx.children, [ctx.binary, 'users', 'create', '--email', email, '--role', 'owner', '--password', password, ...account, '--db', db], { cwd: ctx.root, env: towlineEnv() })
  return { email, password }
}

/**
 * The origin the server's own pages have: its public URL, which by default is
 * http://localhost:<the port it bound>. A dashboard POST must carry it as Origin.
 */
export const pageOrigin = (server: RunningServer) => `http://localhost:${server.port}`

/** Signs in by POST /login (with the pages' Origin) and returns the session's Cookie header value. */
export async function signInSession(server: RunningServer, login: BenchLogin): Promise<string> {
  const res = await fetch(`${server.baseUrl}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: pageOrigin(server), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: login.email, password: login.password }).toString(),
  })
  await res.arrayBuffer()
  const cookie = res.headers.get('set-cookie')?.split(';')[0]
  if (res.status !== 303 || !cookie) throw new Error(`POST /login answered ${res.status} without a session cookie`)
  return cookie
}

import { Elysia } from 'elysia'
import type { Db } from '../db/client'
import type { Clock } from '../platform/clock'
import { AppError } from '../platform/errors'
import { requestInfo } from '../platform/request-info'
import type { ContextFactory } from '../operations/context-factory'
import type { OperationContext } from '../operations/operation-context'
import { resolveSession, type SessionUser } from './sessions'

/** The session cookie's name. */
export const SESSION_COOKIE = 'towline_session'

/** Who may open a page: any signed-in user of the account, or owners only. */
export type PageRole = 'dispatcher' | 'owner'

/** One cookie's value from a Cookie header, or null. */
export function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return null
}

/** The Set-Cookie value that starts (token) or ends (null) the session cookie. */
export function sessionCookie(token: string | null, opts: { secure: boolean; maxAgeS?: number }): string {
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Lax', ...(opts.secure ? ['Secure'] : [])]
  return token === null ? `${SESSION_COOKIE}=; Max-Age=0; ${attrs.join('; ')}` : `${SESSION_COOKIE}=${token}; Max-Age=${opts.maxAgeS ?? 0}; ${attrs.join('; ')}`
}

/**
 * Returns `requireSession(request, role)`: the signed-in user of the request's session cookie,
 * or 401 not_signed_in (a page turns it into 303 /login), or 403 forbidden when an owner's page
 * is asked for by a dispatcher. Resolved once per request, before any body is read.
 */
export function createSessionGuard(deps: { db: Db; clock: Clock }) {
  return function requireSession(request: Request, role: PageRole): SessionUser {
    const info = requestInfo(request)
    let user = info.session as SessionUser | undefined
    if (!user) {
      const token = cookieValue(request.headers.get('cookie'), SESSION_COOKIE)
      const found = token ? resolveSession(deps.db, deps.clock, token) : null
      if (!found) throw new AppError('not_signed_in', 'Sign in to the dashboard to continue.')
      info.session = user = found
      info.userId = found.userId
      info.accountId = found.accountId
    }
    if (role === 'owner' && user.role !== 'owner') {
      throw new AppError('forbidden', 'Only an owner of this account may open this page.', { actor: 'dispatcher', required_permission: 'owner' })
    }
    return user
  }
}

export type SessionGuard = ReturnType<typeof createSessionGuard>

/**
 * The `signedIn` macro: `{ signedIn: 'dispatcher' }` (any user) or `{ signedIn: 'owner' }` on a
 * page route hands it the `user` and the operation context a dashboard user acts in (`ctx`,
 * actor `dispatcher` with their user id). The role is named in the route's detail
 * (`x-session`), where the request path's checks read it before the body.
 */
export function sessionPlugin(requireSession: SessionGuard, contexts: ContextFactory) {
  return new Elysia({ name: 'towline.session' }).macro({
    signedIn: (role: PageRole) => ({
      detail: { 'x-session': role } as Record<string, unknown>,
      resolve({ request }): { user: SessionUser; ctx: OperationContext } {
        const user = requireSession(request, role)
        return { user, ctx: contexts.forDispatcher({ userId: user.userId, role: user.role, accountId: user.accountId }, requestInfo(request).requestId) }
      },
    }),
  })
}

export type SessionPlugin = ReturnType<typeof sessionPlugin>

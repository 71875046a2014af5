import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { BODY_CAPS, routeProps } from '../platform/route-props'
import { addressBucket } from '../platform/rate-limit'
import { requestInfo } from '../platform/request-info'
import type { FormFields } from '../platform/forms'
import { signIn } from './sign-in'
import { endSession, SESSION_MAX_MS } from './sessions'
import { sessionCookie, type SessionGuard, type SessionPlugin } from './session.plugin'
import { signInPage, type SignInForm } from './sign-in.page'

const HTML = { 'content-type': 'text/html; charset=utf-8' }

/** Where to go after signing in: a path of this site only (never another origin), else the board. */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.includes('\\') || /[\u0000-\u001f]/.test(next) || next.length > 2000) return '/board'
  // A Location header holds ASCII only: other characters (`/日`, a space) go percent-encoded; a lone surrogate cannot.
  try { return next.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c)) } catch { return '/board' }
}

/** Sign-ins one client address may have waiting at once: a flood from one place queues behind this, not ahead of everyone's. */
export const SIGN_INS_AT_ONCE_PER_CLIENT = 8

const text = (fields: FormFields, name: string): string => (typeof fields[name] === 'string' ? (fields[name] as string) : '')

/** `/login`, `/logout` and `/`: signing in and out of the dashboard. */
export function signInRoutes(session: SessionPlugin, requireSession: SessionGuard, deps: RouteDeps) {
  const secure = deps.config.publicUrl.startsWith('https:')
  const page = (form: SignInForm, status = 200, headers: Record<string, string> = {}) => new Response(signInPage(form), { status, headers: { ...HTML, ...headers } })
  /** Sign-ins waiting for their password check, per client address. */
  const inFlight = new Map<string, number>()
  const signedInUser = (request: Request) => { try { return requireSession(request, 'dispatcher') } catch { return null } }

  return new Elysia({ name: 'towline.sign-in' }).use(routeProps).use(session)
    .get('/', ({ request }) => new Response(null, { status: 303, headers: { location: signedInUser(request) ? '/board' : '/login' } }))
    .get('/login', ({ request, query }) => {
      const next = safeNext((query as Record<string, unknown>).next)
      if (signedInUser(request)) return new Response(null, { status: 303, headers: { location: next } })
      return page({ next: next === '/board' ? undefined : next })
    })
    .post('/login', async ({ body, request }) => {
      const fields = body as FormFields
      const email = text(fields, 'email').trim()
      const password = text(fields, 'password')
      const next = safeNext(text(fields, 'next'))
      const form: SignInForm = { email, next: next === '/board' ? undefined : next }
      const errors: SignInForm['errors'] = {}
      if (!email) errors.email = 'Enter the email of your login.'
      if (!password) errors.password = 'Enter your password.'
      if (errors.email || errors.password) return page({ ...form, errors, alert: 'Fill in both fields to sign in.' }, 422)
      const client = addressBucket(requestInfo(request).peer?.() ?? 'in-process')
      const waiting = inFlight.get(client) ?? 0
      if (waiting >= SIGN_INS_AT_ONCE_PER_CLIENT) {
        return page({ ...form, alert: 'Too many sign-ins at once from your address. Wait a moment and try again.' }, 429, { 'retry-after': '1' })
      }
      inFlight.set(client, waiting + 1)
      let result: Awaited<ReturnType<typeof signIn>>
      try {
        result = await signIn(deps.db, deps.clock, email, password)
      } finally {
        const left = inFlight.get(client)! - 1
        if (left) inFlight.set(client, left)
        else inFlight.delete(client)
      }
      if (result.ok) {
        // Set only now that everything succeeded (a cookie set before an error would still be sent).
        return new Response(null, { status: 303, headers: { location: next, 'set-cookie': sessionCookie(result.token, { secure, maxAgeS: Math.floor(SESSION_MAX_MS / 1000) }) } })
      }
      if (result.reason === 'locked') {
        const minutes = Math.max(1, Math.ceil(result.retryAfterMs / 60_000))
        return page({ ...form, alert: `Too many failed sign-ins for this email. Sign-in is locked for ${minutes} more minute${minutes === 1 ? '' : 's'}; try again after that.` }, 429, { 'retry-after': String(Math.ceil(result.retryAfterMs / 1000)) })
      }
      return page({ ...form, alert: 'That email and password do not match a login. Check both and try again.' }, 401)
    }, { accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 8 } })
    .post('/logout', ({ request }) => {
      const user = signedInUser(request)
      if (user) endSession(deps.db, deps.clock, user.sessionId)
      return new Response(null, { status: 303, headers: { location: '/login', 'set-cookie': sessionCookie(null, { secure }) } })
    })
}


import { isIP } from 'node:net'
import { checkHost, describeRefused, type HostCheck, type Resolver } from '../platform/net'
import { API_VERSION, VERSION } from '../version'
import { signatureHeader } from './signature'
import { signingSecrets } from './manage-endpoints'
import type { EndpointRow } from './webhook.queries'

export type AttemptError = 'timeout' | 'connect' | 'dns' | 'tls' | 'http' | 'redirect' | 'blocked'

export interface AttemptResult {
  ok: boolean
  requestHeaders: Record<string, string>
  requestBody: string
  responseStatus: number | null
  responseHeaders: Record<string, string> | null
  /** The first 2 KiB of the response body. */
  responseBody: string | null
  durationMs: number
  error: AttemptError | null
  errorMessage: string | null
  /** Retry-After of a 429 or 503, in ms. */
  retryAfterMs: number | null
}

export interface SendSettings {
  timeoutMs: number
  allowPrivate: boolean
  /** Extra trust for outgoing TLS (tests); production trusts system roots plus NODE_EXTRA_CA_CERTS. */
  tls?: { ca?: string }
  signal?: AbortSignal
  /** Resolves target host names; the system resolver unless a test injects one. */
  resolve?: Resolver
  /** Which resolved addresses may be contacted; public unicast only unless a test injects a policy. */
  isAllowedAddress?: (ip: string) => boolean
}

const MAX_BODY = 2048

/** Builds the envelope exactly once per attempt; `data` is already JSON. */
export function envelope(d: { id: string; type: string; accountId: string; attempt: number; createdAt: number; data: string }): string {
  return `{"id":${JSON.stringify(d.id)},"object":"event","type":${JSON.stringify(d.type)},"api_version":"${API_VERSION}",` +
    `"account_id":${JSON.stringify(d.accountId)},"attempt":${d.attempt},"created_at":"${new Date(d.createdAt).toISOString()}","data":${d.data}}`
}

async function readHead(res: Response): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size < MAX_BODY) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.length
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, MAX_BODY))
}

function retryAfter(res: Response, nowMs: number): number | null {
  if (res.status !== 429 && res.status !== 503) return null
  const raw = res.headers.get('retry-after')
  if (!raw) return null
  const s = Number(raw)
  if (Number.isFinite(s) && s >= 0) return s * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs)
}

function classify(err: unknown): { error: AttemptError; message: string } {
  const e = err as { name?: string; code?: string; message?: string }
  const text = `${e?.name ?? ''} ${e?.code ?? ''} ${e?.message ?? ''}`
  if (/TimeoutError|AbortError|timed out|timeout/i.test(text)) return { error: 'timeout', message: 'no answer within the timeout' }
  if (/ENOTFOUND|EAI_AGAIN|DNS|getaddrinfo|hostname could not be found/i.test(text)) return { error: 'dns', message: e?.message ?? 'DNS lookup failed' }
  if (/CERT|SSL|TLS|self.signed|certificate|handshake/i.test(text)) return { error: 'tls', message: e?.message ?? 'TLS failed' }
  return { error: 'connect', message: e?.message ?? 'connection failed' }
}

/** Where one connection goes: the URL to fetch and, when it names a checked address instead of the host, the Host header and TLS name. */
interface Route { url: string; host?: string; serverName?: string }

/** The routes to a target whose host was checked: an IP literal as written, a name through each address it resolved to. */
function routesTo(url: URL, check: HostCheck): Route[] {
  if (check.literal) return [{ url: url.href }]
  return check.addresses.map((ip) => {
    const pinned = new URL(url.href)
    pinned.hostname = isIP(ip) === 6 ? `[${ip}]` : ip
    // The certificate is verified against serverName (SNI), so it must be the name, never the address.
    return { url: pinned.href, host: url.host, serverName: url.hostname.replace(/\.+$/, '') }
  })
}

/** Rejects when the signal aborts first (a resolver that never answers must not outlive the timeout). */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** Connection failures where nothing was sent, so the next checked address may be tried. */
const NOT_CONNECTED = /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|ConnectionRefused/

/**
 * Makes one delivery attempt: signs the body afresh (new t); unless private targets are
 * allowed, resolves the host once, refuses if any address is not public, and connects to an
 * address it checked (TLS verified against the host name, Host header as written); POSTs
 * without following redirects, and counts only a 2xx within the timeout as delivered.
 */
export async function sendAttempt(
  target: { url: string; secrets: string[] },
  body: string,
  meta: { deliveryId: string; eventType: string; attempt: number },
  settings: SendSettings,
): Promise<AttemptResult> {
  const started = performance.now()
  const t = Math.floor(Date.now() / 1000)
  const requestHeaders: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': `Towline-Webhooks/${VERSION}`,
    'x-svc-signature': signatureHeader(target.secrets, t, body),
    'x-svc-delivery-id': meta.deliveryId,
    'x-svc-event-type': meta.eventType,
    'x-svc-attempt': String(meta.attempt),
  }
  const base = { requestHeaders, requestBody: body, responseStatus: null, responseHeaders: null, responseBody: null, retryAfterMs: null }
  const done = (r: Partial<AttemptResult>): AttemptResult => ({ ...base, ok: false, error: null, errorMessage: null, ...r, durationMs: Math.round(performance.now() - started) })
  // One timeout covers the lookup and the request.
  const timeout = AbortSignal.timeout(settings.timeoutMs)
  const signal = settings.signal ? AbortSignal.any([timeout, settings.signal]) : timeout
  let routes: Route[] = [{ url: target.url }]
  if (!settings.allowPrivate) {
    let url: URL
    let check: HostCheck
    try {
      url = new URL(target.url)
      check = await unlessAborted(checkHost(url.hostname, settings), signal)
    } catch (err) {
      return signal.aborted ? done({ error: 'timeout', errorMessage: 'no DNS answer within the timeout' }) : done({ error: 'dns', errorMessage: (err as Error).message })
    }
    if (check.refused.length) return done({ error: 'blocked', errorMessage: `the host resolves to a loopback, private or other non-public address (${describeRefused(check.refused)})` })
    routes = routesTo(url, check)
  }
  for (let i = 0; ; i++) {
    const route = routes[i]!
    try {
      const res = await fetch(route.url, {
        method: 'POST', headers: route.host ? { ...requestHeaders, host: route.host } : requestHeaders, body, redirect: 'manual', signal,
        tls: route.serverName ? { ...settings.tls, serverName: route.serverName } : settings.tls, keepalive: true,
      } as RequestInit)
      const responseHeaders = Object.fromEntries(res.headers)
      const responseBody = await readHead(res).catch(() => '')
      const ok = res.status >= 200 && res.status < 300
      const error: AttemptError | null = ok ? null : res.status >= 300 && res.status < 400 ? 'redirect' : 'http'
      return done({
        ok, responseStatus: res.status, responseHeaders, responseBody, error,
        errorMessage: error === 'redirect' ? `redirect to ${res.headers.get('location') ?? '(no location)'} not followed` : error ? `HTTP ${res.status}` : null,
        retryAfterMs: retryAfter(res, Date.now()),
      })
    } catch (err) {
      const e = err as { code?: string; message?: string }
      if (i + 1 < routes.length && !signal.aborted && NOT_CONNECTED.test(`${e?.code ?? ''} ${e?.message ?? ''}`)) continue
      const c = classify(err)
      return done({ error: c.error, errorMessage: c.message })
    }
  }
}

/** A delivery as stored: what an attempt needs to rebuild its envelope. */
export interface StoredDelivery { id: string; type: string; accountId: string; attempts: number; createdAt: number; data: string }

/** Makes the next attempt of a stored delivery to its endpoint: envelope, current secrets, attempt number. */
export function attemptDelivery(endpoint: EndpointRow, d: StoredDelivery, nowMs: number, settings: SendSettings): Promise<AttemptResult> {
  const attempt = d.attempts + 1
  return sendAttempt({ url: endpoint.url, secrets: signingSecrets(endpoint, nowMs) },
    envelope({ id: d.id, type: d.type, accountId: d.accountId, attempt, createdAt: d.createdAt, data: d.data }),
    { deliveryId: d.id, eventType: d.type, attempt }, settings)
}

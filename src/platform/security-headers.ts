/**
 * Security headers on every response, by kind. Every response: `X-Content-Type-Options:
 * nosniff`, `X-Frame-Options: DENY`, a Content-Security-Policy with `frame-ancestors 'none'`,
 * `Cache-Control: no-store` unless the route chose its own caching, and Strict-Transport-Security
 * when the public URL is https. HTML pages (and scripts, whose policy a service worker runs
 * under) get the page policy below; everything else gets `default-src 'none'`.
 *
 * Referrer-Policy: pages carry secret links (/t/{token}, /d/{token}), so nothing they load or
 * link to on another origin may learn their URL. Pages send `same-origin` (no Referer to any
 * other origin): with `no-referrer` a browser sends `Origin: null` on the page's own form posts,
 * and over plain http on a LAN address no Sec-Fetch-Site either, which would leave the
 * same-origin guard nothing to check. Redirects send `same-origin` too (a redirect's policy is
 * the one the next request goes with). Every other response sends `no-referrer`.
 *
 * A route that needs a looser policy (the API reference page) sets its own
 * Content-Security-Policy header; it is kept as sent.
 */

/** Where map tiles come from unless TOWLINE_TILE_URL names another tile server (src/config.ts). */
export const DEFAULT_MAP_TILE_URL = 'https://tile.openstreetmap.org/{z}/{x}/{y}.png'

/** The CSP source for a tile URL template (checked by config.ts): its origin, a `{s}` subdomain as a wildcard. */
function tileSourceOf(tileUrl: string): string {
  const url = new URL(tileUrl.replace('{s}', 'tile-subdomain').replace(/\{[a-z]+\}/g, '0'))
  return url.origin.replace('tile-subdomain', '*')
}

/**
 * The Content-Security-Policy of HTML pages: only this origin's scripts, styles and connections;
 * images also from the tile server (none when `tileUrl` is null). `loosen` replaces or adds
 * directives for a page that needs more (the API reference page's inline styles).
 */
export function pagePolicy(opts: { tileUrl?: string | null; loosen?: Record<string, string> } = {}): string {
  const tiles = opts.tileUrl === null ? '' : ` ${tileSourceOf(opts.tileUrl ?? DEFAULT_MAP_TILE_URL)}`
  const directives: Record<string, string> = {
    'default-src': "'self'",
    'script-src': "'self'",
    'style-src': "'self'",
    'img-src': `'self' data: blob:${tiles}`,
    'connect-src': "'self'",
    'form-action': "'self'",
    'base-uri': "'none'",
    'object-src': "'none'",
    ...opts.loosen,
    'frame-ancestors': "'none'",
  }
  return Object.entries(directives).map(([k, v]) => `${k} ${v}`).join('; ')
}

/** The policy of everything that is not a page: nothing may load, nothing may frame it. */
const NOTHING_POLICY = "default-src 'none'; frame-ancestors 'none'"
/** Pages may use the phone's position (driver's page, tracking page) and camera (photos); nothing else. */
const PERMISSIONS = 'geolocation=(self), camera=(self), microphone=(), payment=(), usb=()'

/**
 * The security headers of a response that is not a page or a script (JSON, plain text), as one
 * record: the API's hot path hands them to Elysia before the handler runs, so its Response is
 * built with them at once instead of being patched header by header.
 */
export function dataResponseHeaders(opts: { publicUrl?: string } = {}): Record<string, string> {
  const https = opts.publicUrl !== undefined && new URL(opts.publicUrl).protocol === 'https:'
  return {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'content-security-policy': NOTHING_POLICY,
    'cache-control': 'no-store',
    ...(https ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  }
}

/**
 * Returns a function that adds the security headers to a response's headers, by its Content-Type.
 * `tileUrl` is the pages' map tile template (TOWLINE_TILE_URL; null: no tiles; absent: the default).
 */
export function securityHeaders(opts: { publicUrl?: string; tileUrl?: string | null } = {}) {
  const https = opts.publicUrl !== undefined && new URL(opts.publicUrl).protocol === 'https:'
  const page = pagePolicy({ tileUrl: opts.tileUrl })
  return function addSecurityHeaders(headers: Headers): void {
    const type = headers.get('content-type') ?? ''
    const html = type.startsWith('text/html')
    const script = type.startsWith('text/javascript') || type.startsWith('application/javascript')
    headers.set('X-Content-Type-Options', 'nosniff')
    headers.set('X-Frame-Options', 'DENY')
    // A redirect (a form's 303) hands its policy to the page it leads to: the same as the pages', so
    // that page knows, on this origin only, where it came from (after signing in: put back what was typed).
    headers.set('Referrer-Policy', html || headers.has('location') ? 'same-origin' : 'no-referrer')
    if (!headers.has('content-security-policy')) headers.set('Content-Security-Policy', html || script ? page : NOTHING_POLICY)
    if (html) {
      // A page that chose its own (the secret-link phone pages: layout.ts phonePageHeaders) keeps it.
      if (!headers.has('cross-origin-opener-policy')) headers.set('Cross-Origin-Opener-Policy', 'same-origin')
      headers.set('Permissions-Policy', PERMISSIONS)
    }
    if (!headers.has('cache-control')) headers.set('Cache-Control', 'no-store')
    // Only when the public URL is https: on plain http it would be ignored, behind a TLS proxy it is right.
    if (https) headers.set('Strict-Transport-Security', 'max-age=31536000')
  }
}

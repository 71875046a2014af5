/**
 * The same-origin guard of state-changing page requests: a POST, PUT, PATCH or DELETE to a page
 * route must come from one of this service's own pages, as the browser vouches for it.
 * - An `Origin` header (other than `null`) must be exactly the public URL's origin: browsers send
 *   it lowercased, without a default port or a trailing dot or slash, so an exact match is the
 *   only one needed and no look-alike (`http://towline.test.evil.com`, another port or scheme,
 *   `HTTP://TOWLINE.TEST`, `towline.test.`) passes.
 * - With no Origin, or `Origin: null` (what a page with `Referrer-Policy: no-referrer` sends),
 *   only `Sec-Fetch-Site: same-origin` passes; a sandboxed frame's opaque origin gets `cross-site`.
 * - A `Sec-Fetch-Site` other than `same-origin` refuses whatever the Origin says.
 */

/** The origin requests from this service's pages carry: the public URL's scheme, host and port. */
export function publicOriginOf(publicUrl: string): string {
  return new URL(publicUrl).origin
}

/** Tells whether a request came from this service's own pages (see above). */
export function comesFromOwnPages(headers: Headers, publicOrigin: string): boolean {
  const site = headers.get('sec-fetch-site')
  if (site !== null && site !== 'same-origin') return false
  const origin = headers.get('origin')
  if (origin !== null && origin !== 'null') return origin === publicOrigin
  return site === 'same-origin'
}

/**
 * A photo or signature as the dashboard and the driver's page serve it: private to a session of
 * the job's account or the job's current driver link, so the browser keeps a copy only to ask
 * again (`private, no-cache`): after Sign out, or once a driver's link is taken back, the next
 * look is refused rather than shown from the cache. The bytes never change under an id, so the
 * tag (`etag`) answers a repeat look with 304 and no bytes.
 */
export function privateImage(request: Request, data: Uint8Array, contentType: string, tag: string): Response {
  const headers = { 'cache-control': 'private, no-cache', etag: `"${tag}"` }
  if (alreadyHas(request, tag)) return new Response(null, { status: 304, headers })
  return new Response(data as Uint8Array<ArrayBuffer>, { headers: { ...headers, 'content-type': contentType, 'content-disposition': 'inline' } })
}

/** Whether the browser's copy is the one tagged `tag` (its If-None-Match names it): a 304 answers it. */
export function alreadyHas(request: Request, tag: string): boolean {
  const asked = request.headers.get('if-none-match')
  return !!asked && (asked.trim() === '*' || asked.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${tag}"`))
}

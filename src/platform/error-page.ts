/**
 * The HTML error page of routes that answer browsers: small, self-contained (no script, one
 * inline style allowed by its hash), the status in the title, one plain sentence and the request
 * id; everything written into it is escaped.
 */
import { createHash } from 'node:crypto'

const TITLES: Record<number, string> = {
  400: 'Bad request', 401: 'Sign-in needed', 403: 'Not allowed', 404: 'Not found', 405: 'Method not allowed',
  409: 'Conflict', 410: 'This link no longer works', 413: 'Too large', 422: 'Not accepted', 429: 'Too many requests',
  500: 'Something went wrong', 503: 'Unavailable',
}

const STYLE = 'body{margin:0;padding:2rem 1rem;font:1rem/1.5 system-ui,sans-serif;color:#1b1b1b;background:#f6f6f4}'
  + 'main{max-width:34rem;margin:0 auto}h1{font-size:1.4rem;margin:0 0 .75rem}p{margin:0 0 .75rem}.id{color:#555;font-size:.9rem}'
/** The page's own policy: nothing loads, only its one style block runs. */
const POLICY = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** The title of a status, as the page shows it ("404 Not found"). */
function statusTitle(status: number): string {
  return `${status} ${TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Not accepted')}`
}

/** Renders the error page for a status, a sentence and the request id, with extra headers (Retry-After, Allow...). */
export function errorPage(status: number, sentence: string, requestId: string | undefined, headers: Record<string, string> = {}): Response {
  const title = statusTitle(status)
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Towline</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(sentence)}</p>
${requestId ? `<p class="id">Request id: <code>${escapeHtml(requestId)}</code></p>\n` : ''}</main>
</body>
</html>
`
  return new Response(html, { status, headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': POLICY } })
}

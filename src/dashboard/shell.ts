import { escapeHtml as e } from '../platform/error-page'
import type { SessionUser } from '../users/sessions'

/** A dashboard page: the navigation (owners also see Developers and Settings), the page, a Sign out button. */
export function dashboardPage(p: { title: string; user: SessionUser; active?: string; body: string; scripts?: string[]; status?: number }): Response {
  const link = (href: string, label: string, key: string) => `<li><a href="${href}"${p.active === key ? ' aria-current="page"' : ''}>${label}</a></li>`
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(p.title)} · Towline</title>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="top">
<nav aria-label="Dashboard">
<ul>
${link('/board', 'Board', 'board')}
${link('/jobs', 'Jobs', 'jobs')}
${p.user.role === 'owner' ? link('/developers', 'Developers', 'developers') + link('/settings', 'Settings', 'settings') : ''}
</ul>
</nav>
<p class="who">${e(p.user.email)} · ${e(p.user.accountName)}</p>
<form method="post" action="/logout"><button type="submit">Sign out</button></form>
</header>
<main id="main">
${p.body}
</main>
</body>
</html>
`
  return new Response(html, { status: p.status ?? 200, headers: { 'content-type': 'text/html; charset=utf-8' } })
}

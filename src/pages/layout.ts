/**
 * The frame of every page: one complete, accessible document (language, viewport, title, the
 * stylesheet, a skip link, one `<main>`). Given a signed-in user it is a dashboard page, with
 * the sections' navigation and a **Sign out** button; without one it is the plain shell of the
 * sign-in page and the public phone pages (driver, tracking).
 *
 * ```ts
 * htmlResponse(layout({ title: 'Board', user, active: 'board', body: html`<h1>Board</h1>...`, scripts: ['dashboard.js'] }))
 * ```
 */
import { assetUrl, hasAsset, inlineStylesheet } from './assets'
import { html, raw, type Html, type HtmlValue } from './html'
import { pagePolicy } from '../platform/security-headers'

/** Who is signed in, as the layout shows it. */
export interface LayoutUser {
  email: string
  role: 'owner' | 'dispatcher'
}

/** A dashboard section, marked as the current one in the navigation. */
export type Section = 'board' | 'jobs' | 'accounts' | 'import' | 'developers' | 'settings'

/** What a page gives the layout. */
export interface LayoutOptions {
  /** The page's own title; the document's is "<title> · Towline". */
  title: string
  /** The signed-in user: the dashboard frame. Absent: the plain shell. */
  user?: LayoutUser
  /** The section this page belongs to (aria-current in the navigation). */
  active?: Section
  /** The content of `<main>`. */
  body: HtmlValue
  /** Built scripts by logical name (`dashboard.js`, `map.js`); a script's own stylesheet (`map.css`) is linked with it. */
  scripts?: string[]
  /**
   * The stylesheet inlined in a `<style>` instead of linked (the driver's and tracking pages: on
   * a phone's slow network its round trip delayed the first paint). The response must then carry
   * `inlineStylePolicy`'s CSP, which allows exactly that stylesheet.
   */
  inlineStyles?: boolean
}

const SECTIONS: { section: Section; label: string; href: string; ownersOnly: boolean }[] = [
  { section: 'board', label: 'Board', href: '/board', ownersOnly: false },
  { section: 'jobs', label: 'Jobs', href: '/jobs', ownersOnly: false },
  { section: 'accounts', label: 'Accounts', href: '/accounts', ownersOnly: false },
  { section: 'import', label: 'Import', href: '/import', ownersOnly: false },
  { section: 'developers', label: 'Developers', href: '/developers', ownersOnly: true },
  { section: 'settings', label: 'Settings', href: '/settings', ownersOnly: true },
]

/** The dashboard's header: sections (Developers and Settings for owners only), the user, Sign out. */
function dashboardHeader(user: LayoutUser, active: Section | undefined): Html {
  const links = SECTIONS.filter((s) => !s.ownersOnly || user.role === 'owner').map((s) =>
    html`<li><a href="${s.href}"${s.section === active ? html` aria-current="page"` : ''}>${s.label}</a></li>`)
  return html`<header class="site-header">
<a class="brand" href="/board">Towline</a>
<nav class="site-nav" aria-label="Dashboard"><ul>${links}</ul></nav>
<div class="site-user"><span>${user.email}</span><form method="post" action="/logout"><button type="submit">Sign out</button></form></div>
</header>`
}

/** Renders a whole page (see the top of this file). */
export function layout(opts: LayoutOptions): Html {
  const scripts = opts.scripts ?? []
  // A script that imports CSS (the map: Leaflet's) has it built beside it under the same name.
  const styles = [...(opts.inlineStyles ? [] : ['styles.css']), ...scripts.map((s) => s.replace(/\.js$/, '.css')).filter((s) => s.endsWith('.css') && hasAsset(s))]
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · Towline</title>
<link rel="icon" href="data:,">
${opts.inlineStyles ? html`<style>${raw(inlineStylesheet().css)}</style>\n` : ''}${styles.map((s) => html`<link rel="stylesheet" href="${assetUrl(s)}">\n`)}${scripts.map((s) => html`<script type="module" src="${assetUrl(s)}"></script>\n`)}</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
${opts.user ? dashboardHeader(opts.user, opts.active) : ''}
<main id="main" class="page" tabindex="-1">
${opts.body}
</main>
</body>
</html>
`
}

/** The Content-Security-Policy of a page laid out with `inlineStyles`: the pages' policy, with its inlined stylesheet allowed by hash. */
export function inlineStylePolicy(tileUrl: string | null | undefined): string {
  return pagePolicy({ tileUrl, loosen: { 'style-src': `'self' ${inlineStylesheet().source}` } })
}

/**
 * The headers of a secret-link phone page (/d/{token}, /t/{token}): `inlineStylePolicy`'s CSP,
 * and no Cross-Origin-Opener-Policy isolation (`unsafe-none`, said outright). COOP guards a page
 * against windows of other origins holding a reference to it; a window can only open these
 * pages by knowing the link, which already shows everything they show. Isolation would make the
 * browser move the tap from a text into a new browsing context group (a renderer process swap:
 * about 300 ms of the first paint on a throttled phone, measured by the bench's pages section).
 */
export function phonePageHeaders(tileUrl: string | null | undefined): Record<string, string> {
  return { 'content-security-policy': inlineStylePolicy(tileUrl), 'cross-origin-opener-policy': 'unsafe-none' }
}

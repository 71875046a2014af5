import { dashboardPage } from '../dashboard/shell'
import { html, timeTag, type Html } from '../pages/html'
import type { SessionUser } from '../users/sessions'

/** The Settings pages, in the order of their navigation. */
export type SettingsTab = 'company' | 'templates' | 'consent' | 'users'

const TABS: { tab: SettingsTab; label: string; href: string }[] = [
  { tab: 'company', label: 'Company', href: '/settings' },
  { tab: 'templates', label: 'Text templates', href: '/settings/templates' },
  { tab: 'consent', label: 'Consent', href: '/settings/consent' },
  { tab: 'users', label: 'Users', href: '/settings/users' },
]

/** The navigation between the Settings pages, the current one marked. */
function settingsNav(current: SettingsTab): Html {
  return html`<nav class="sub-nav" aria-label="Settings"><ul>${TABS.map((t) =>
    html`<li><a href="${t.href}"${t.tab === current ? html` aria-current="page"` : ''}>${t.label}</a></li>`)}</ul></nav>`
}

/** A Settings page: the dashboard frame (Settings current), the page's heading, the Settings navigation, then its body. */
export function settingsPage(p: { user: SessionUser; tab: SettingsTab; title: string; body: Html; status?: number }): Response {
  const body = html`<h1>${p.title}</h1>
${settingsNav(p.tab)}
${p.body}`
  return dashboardPage({ title: `${p.title} · Settings`, user: p.user, active: 'settings', body: body.text, status: p.status })
}

/** A sentence confirming what a post did, announced politely (the page after a 303). */
export function savedNotice(text: string | null): Html | '' {
  return text ? html`<p class="notice notice-ok" role="status">${text}</p>` : ''
}

/** A time as the Settings pages show it: to the minute in the company's time zone (`zone`), machine-readable in `datetime`. */
export function timeText(iso: string | null, zone: string, never = 'Never'): Html | string {
  if (!iso) return never
  return timeTag(iso, zone)
}

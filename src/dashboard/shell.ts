import { htmlResponse, raw } from '../pages/html'
import { layout, type Section } from '../pages/layout'
import type { SessionUser } from '../users/sessions'

/** A dashboard page in the kit's layout (navigation by role, Sign out), from markup the page escaped itself. */
export function dashboardPage(p: { title: string; user: SessionUser; active?: Section; body: string; scripts?: string[]; status?: number }): Response {
  return htmlResponse(layout({ title: p.title, user: { email: p.user.email, role: p.user.role }, active: p.active, body: raw(p.body), scripts: p.scripts ?? ['dashboard.js'] }), { status: p.status })
}

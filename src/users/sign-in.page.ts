import { escapeHtml as e } from '../platform/error-page'
import { raw } from '../pages/html'
import { layout } from '../pages/layout'

/** What the sign-in form shows: the email typed, messages beside fields, and an alert. */
export interface SignInForm {
  email?: string
  next?: string
  errors?: { email?: string; password?: string }
  alert?: string
}

/** The sign-in page: fields **Email** and **Password**, button **Sign in**; works without scripts. */
export function signInPage(form: SignInForm = {}): string {
  const err = form.errors ?? {}
  const field = (id: 'email' | 'password', label: string, attrs: string) => `
<div class="field">
<label for="${id}">${label}</label>
<input id="${id}" name="${id}" ${attrs}${err[id] ? ` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
${err[id] ? `<p class="field-error" id="${id}-error">${e(err[id]!)}</p>` : ''}
</div>`
  const body = `<h1>Sign in to Towline</h1>
<div role="alert" class="form-alert">${form.alert ? `<p>${e(form.alert)}</p>` : ''}</div>
<form method="post" action="/login" class="sign-in" novalidate>
${form.next ? `<input type="hidden" name="next" value="${e(form.next)}">` : ''}
${field('email', 'Email', `type="email" autocomplete="username" required value="${e(form.email ?? '')}"`)}
${field('password', 'Password', 'type="password" autocomplete="current-password" required')}
<button type="submit">Sign in</button>
</form>`
  return layout({ title: 'Sign in', body: raw(body), scripts: [] }).text
}

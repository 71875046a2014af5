import { formAlert, inputField, type FormState } from '../pages/form'
import { html } from '../pages/html'
import { layout } from '../pages/layout'

/** What the sign-in form shows: the email typed, messages beside fields, and an alert. */
export interface SignInForm {
  email?: string
  next?: string
  errors?: { email?: string; password?: string }
  alert?: string
}

/** The sign-in page: fields **Email** and **Password**, button **Sign in**; works without scripts. Built on the page kit's form helpers. */
export function signInPage(form: SignInForm = {}): string {
  const state: FormState = { values: { email: form.email ?? '' }, errors: { ...form.errors }, alert: form.alert }
  const body = html`<h1>Sign in to Towline</h1>
<form method="post" action="/login" class="sign-in" novalidate>
${formAlert(state)}
${form.next ? html`<input type="hidden" name="next" value="${form.next}">` : ''}
${inputField(state, { name: 'email', label: 'Email', type: 'email', autocomplete: 'username', required: true })}
${inputField(state, { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}
<button type="submit">Sign in</button>
</form>`
  return layout({ title: 'Sign in', body, scripts: ['sign-in.js'] }).text
}

import { formAlert, inputField, selectField, type FormState } from '../pages/form'
import { html, type Html } from '../pages/html'
import { iso } from '../platform/clock'
import type { UserRow } from '../users/user.queries'
import { timeText } from './shell'

/** A password to show once, in the response of the post that made it: whose it is, and the secret. */
export interface ShownPassword {
  email: string
  password: string
  /** What happened: a new login, or a reset. */
  made: 'added' | 'reset'
}

function shown(p: ShownPassword): Html {
  const what = p.made === 'added' ? html`Added <strong>${p.email}</strong>.` : html`New password set for <strong>${p.email}</strong>; their sessions have ended.`
  return html`<div class="notice notice-ok secret" role="status">
<p id="new-password-note">${what} The password is shown this once: copy it now and pass it on safely.</p>
<div class="field"><label for="new-password">New password</label>
<input id="new-password" type="text" readonly value="${p.password}" autocomplete="off" spellcheck="false" aria-describedby="new-password-note" data-shown-secret></div>
<button type="button" class="button-secondary" data-copy="new-password" hidden>Copy</button>
</div>`
}

function row(u: UserRow, me: string, formKey: string, zone: string): Html {
  const self = u.id === me
  const disabled = u.disabledAt !== null
  // Each form carries its own key: reloading the answer of Reset password resets nothing again.
  // The button's name says whose login it acts on (the email, for screen readers).
  const action = (path: string, label: string, cls = '') => html`<form method="post" action="/settings/users/${u.id}/${path}"><input type="hidden" name="idempotency_key" value="${`${formKey}.${path}-${u.id}`}"><button type="submit"${cls ? html` class="${cls}"` : ''}>${label}<span class="visually-hidden"> ${u.email}</span></button></form>`
  return html`<tr data-user-id="${u.id}">
<td>${u.email}</td>
<td>${u.role}</td>
<td>${disabled ? 'Disabled' : 'Active'}</td>
<td>${timeText(iso(u.lastLoginAt), zone)}</td>
<td><div class="actions">${self ? html`<span class="muted">You</span>` : disabled ? action('enable', 'Enable') : action('disable', 'Disable', 'button-danger')}${action('password', 'Reset password', 'button-secondary')}</div></td>
</tr>`
}

/** The users page (`/settings/users`): the account's logins with their actions, then Add user. */
export function usersBody(p: { users: UserRow[]; me: string; form: FormState; shown: ShownPassword | null; alert: string | null; done: string | null; formKey: string; zone: string }): Html {
  return html`${p.shown ? shown(p.shown) : ''}
${p.done ? html`<p class="notice notice-ok" role="status">${p.done}</p>` : ''}
<div class="form-alert" role="alert">${p.alert ?? ''}</div>
<h2 id="logins">Logins</h2>
<p>Owners do everything; dispatchers work jobs and the board, not Developers or Settings. Disable ends a login's sessions at once; Reset password makes a new one and ends its sessions.</p>
<div class="table-scroll" role="region" aria-labelledby="logins" tabindex="0">
<table class="users-table" aria-labelledby="logins">
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Last sign-in</th><th scope="col">Actions</th></tr></thead>
<tbody>
${p.users.map((u) => row(u, p.me, p.formKey, p.zone))}
</tbody>
</table>
</div>
<h2>Add user</h2>
<form method="post" action="/settings/users" class="settings-form" novalidate>
<input type="hidden" name="idempotency_key" value="${`${p.formKey}.add`}">
${formAlert(p.form)}
${inputField(p.form, { name: 'email', label: 'Email', type: 'email', required: true, autocomplete: 'off' })}
${selectField(p.form, { name: 'role', label: 'Role', options: [{ value: 'dispatcher', label: 'dispatcher' }, { value: 'owner', label: 'owner' }] })}
${inputField(p.form, { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: 'At least 10 characters. Leave empty to have one generated and shown once.' })}
<button type="submit">Add user</button>
</form>`
}

import { SCOPES, SCOPE_MEANINGS } from '../accounts/scopes'
import type { KeyView } from '../accounts/list-keys'
import { WEBHOOK_EVENT_TYPES } from '../jobs/job-events'
import { html, timeTag, type Html } from '../pages/html'
import { checkboxGroup, formAlert, inputField, type FormState } from '../pages/form'

/** An endpoint as the API shows it (GET /webhooks), the fields these pages use. */
export interface EndpointSummary {
  id: string
  url: string
  events: string[]
  status: 'active' | 'paused'
  paused_reason: 'manual' | 'failures' | null
  description: string | null
  consecutive_failures: number
  created_at: string
}

/** A secret shown once, in the response of the POST that made it: its heading, the read-only field's label, what it is for. */
export interface ShownSecret { heading: string; label: string; value: string; note: string }

/** A time as people read it, in the company's time zone (`zone`), with the exact one for machines. */
export function when(isoTime: string | null, zone: string, never = 'never'): Html {
  return isoTime ? timeTag(isoTime, zone) : html`${never}`
}

/** A secret in a read-only field to copy, with the warning that it is not shown again. */
export function secretNotice(s: ShownSecret): Html {
  return html`<section class="notice notice-ok secret-notice" aria-labelledby="secret-heading">
<h2 id="secret-heading">${s.heading}</h2>
<div class="field"><label for="shown-secret">${s.label}</label>
<input id="shown-secret" class="secret" type="text" readonly value="${s.value}" autocomplete="off" spellcheck="false" aria-describedby="shown-secret-note" data-shown-secret></div>
<button type="button" class="button-secondary" data-copy="shown-secret" hidden>Copy</button>
<p id="shown-secret-note">${s.note} Copy it now: it will not be shown again.</p>
</section>`
}

/** "Active", or why it is paused. */
export function endpointStatus(e: Pick<EndpointSummary, 'status' | 'paused_reason'>): string {
  if (e.status === 'active') return 'Active'
  return e.paused_reason === 'failures' ? 'Paused (after 25 failed attempts in a row)' : 'Paused (by hand)'
}

/** The event types an endpoint receives, in words. */
export const eventsText = (events: string[]) => (events.includes('*') ? 'All events (*)' : events.join(', '))

function keyItem(k: KeyView, zone: string): Html {
  return html`<li class="item" data-key-id="${k.id}">
<h3>${k.name}</h3>
<dl class="facts">
<dt>Prefix</dt><dd><code>${k.prefix}…</code></dd>
<dt>Scopes</dt><dd>${k.scopes.join(', ')}</dd>
<dt>Sites</dt><dd>${k.sites ? k.sites.map((s) => s.name).join(', ') : 'Every site'}</dd>
<dt>Created</dt><dd>${when(k.created_at, zone)}</dd>
<dt>Last used</dt><dd>${when(k.last_used_at, zone)}</dd>
<dt>Status</dt><dd>${k.revoked_at ? html`Revoked ${when(k.revoked_at, zone)}` : 'Active'}</dd>
</dl>
${k.revoked_at ? '' : html`<form method="post" action="/developers/keys/${k.id}/revoke"><button type="submit" class="button-danger">Revoke<span class="visually-hidden"> key ${k.name}</span></button></form>`}
</li>`
}

function endpointItem(e: EndpointSummary): Html {
  return html`<li class="item" data-endpoint-id="${e.id}">
<h3><a href="/developers/webhooks/${e.id}">${e.url}</a></h3>
<dl class="facts">
${e.description ? html`<dt>Description</dt><dd>${e.description}</dd>` : ''}
<dt>Events</dt><dd>${eventsText(e.events)}</dd>
<dt>Status</dt><dd>${endpointStatus(e)}</dd>
</dl>
</li>`
}

/** What /developers shows: the account's keys and endpoints, the two forms, and a secret just made. */
export interface DevelopersView {
  keys: KeyView[]
  sites: { id: string; name: string }[]
  endpoints: EndpointSummary[]
  keyForm: FormState
  endpointForm: FormState
  secret?: ShownSecret
  /** A key the create form had already made (the form posted again: a reload, a double click); its secret is not shown twice. */
  alreadyMade?: { id: string; name: string }
  /** This rendering's forms' key: the same form posted twice makes one key or endpoint. */
  formKey: string
  /** The company's time zone: the times shown are there. */
  zone: string
}

/** The body of `/developers`. */
export function developersBody(v: DevelopersView): Html {
  const siteHint = 'None ticked: every site, those added later included.'
  return html`<h1>Developers</h1>
${v.secret ? secretNotice(v.secret) : ''}
${v.alreadyMade ? html`<section class="notice" role="status" aria-labelledby="made-heading"><h2 id="made-heading">Key "${v.alreadyMade.name}" was already created</h2>
<p>This form had already created the key ${v.alreadyMade.id}; nothing new was made. Its secret was shown once, when it was created: if you did not copy it, revoke that key and create another.</p></section>` : ''}
<section class="page-section" aria-labelledby="keys-heading" id="keys">
<h2 id="keys-heading">API keys</h2>
<p>Give each system its own key with only the scopes it needs, so one can be revoked without touching the others. See <a href="/api/v1/docs">the API reference</a>.</p>
${v.keys.length ? html`<ul class="items">${v.keys.map((k) => keyItem(k, v.zone))}</ul>` : html`<p class="muted">No keys yet.</p>`}
<h3>Create a key</h3>
<form method="post" action="/developers/keys" novalidate>
${formAlert(v.keyForm)}<input type="hidden" name="idempotency_key" value="${`${v.formKey}.key`}">
${inputField(v.keyForm, { name: 'name', label: 'Name', required: true, hint: 'What the key is for, such as "motor club intake".', maxlength: 100, autocomplete: 'off' })}
${checkboxGroup(v.keyForm, { name: 'scopes[]', legend: 'Scopes', options: SCOPES.map((s) => ({ value: s, label: s, hint: SCOPE_MEANINGS[s] })) })}
${v.sites.length ? checkboxGroup(v.keyForm, { name: 'sites[]', legend: 'Sites', hint: siteHint, options: v.sites.map((s) => ({ value: s.id, label: s.name })) }) : ''}
<button type="submit">Create key</button>
</form>
</section>
<section class="page-section" aria-labelledby="webhooks-heading" id="webhooks">
<h2 id="webhooks-heading">Webhook endpoints</h2>
<p>Every job event the endpoint subscribes to is POSTed to it, signed with its secret (<code>X-SVC-Signature</code>), and retried for 33 hours.</p>
${v.endpoints.length ? html`<ul class="items">${v.endpoints.map(endpointItem)}</ul>` : html`<p class="muted">No endpoints yet.</p>`}
<h3>Add an endpoint</h3>
<form method="post" action="/developers/webhooks" novalidate>
${formAlert(v.endpointForm)}<input type="hidden" name="idempotency_key" value="${`${v.formKey}.endpoint`}">
${inputField(v.endpointForm, { name: 'url', label: 'URL', type: 'url', required: true, hint: 'https only, such as https://example.com/towline/events.', maxlength: 2048, autocomplete: 'off', inputmode: 'url' })}
${inputField(v.endpointForm, { name: 'description', label: 'Description', maxlength: 500, autocomplete: 'off' })}
${checkboxGroup(v.endpointForm, { name: 'events[]', legend: 'Events', hint: 'Tick All events, or the types it needs.', options: [{ value: '*', label: 'All events (*)' }, ...WEBHOOK_EVENT_TYPES.map((t) => ({ value: t, label: t }))] })}
<button type="submit">Add endpoint</button>
</form>
</section>`
}

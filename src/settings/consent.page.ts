import { formAlert, inputField, type FormState } from '../pages/form'
import { html, type Html } from '../pages/html'
import type { ConsentView } from '../texts/consent'
import { timeText } from './shell'

/** What was looked up: the number in E.164 and its record (none when the number never gave or refused consent). */
export interface ConsentLookup {
  phone: string
  record: ConsentView | null
}

function result(found: ConsentLookup, zone: string): Html {
  const r = found.record
  const state = !r ? 'No record: texts go to this number only for jobs marked Texts allowed.'
    : r.texts === 'opted_out' ? 'Opted out: no text goes to this number until it sends START (or you press START).'
    : 'Texts allowed.'
  const action = (path: 'stop' | 'start', label: string, what: string) => html`<form method="post" action="/settings/consent/${path}">
<input type="hidden" name="phone" value="${found.phone}">
<button type="submit"${path === 'stop' ? html` class="button-danger"` : ''}>${label}</button> <span class="muted">${what}</span>
</form>`
  return html`<section class="consent-result" aria-labelledby="consent-number">
<h2 id="consent-number">${found.phone}</h2>
<p><strong>${state}</strong></p>
<dl class="facts">
<dt>Consent</dt><dd>${r?.consented_at ? html`${timeText(r.consented_at, zone)}, from ${r.consent_source}` : 'None recorded'}</dd>
<dt>Opt-out</dt><dd>${r?.opted_out_at ? html`${timeText(r.opted_out_at, zone)}, from ${r.opt_out_source}` : 'None'}</dd>
</dl>
<div class="actions actions-stack">
${action('stop', 'STOP', 'Record an opt-out, as if the customer had texted STOP.')}
${action('start', 'START', 'Record an opt-in, as if the customer had texted START.')}
</div>
</section>`
}

/** The consent page (`/settings/consent`): look a number up; its state, with STOP and START. */
export function consentBody(form: FormState, found: ConsentLookup | null, done: 'stop' | 'start' | null, zone: string): Html {
  return html`<p>A number that texts STOP gets no more texts from you until it texts START. Look a number up to see where its consent and opt-out came from (<code>api:</code> a key, <code>sms:</code> the customer's own text, <code>dispatcher:</code> a user here, <code>cli</code> the console), or record what a customer asked for by phone.</p>
${done ? html`<p class="notice notice-ok" role="status">${done === 'stop' ? 'Opt-out recorded: this number gets no more texts.' : 'Opt-in recorded: this number can be texted again.'}</p>` : ''}
<form method="get" action="/settings/consent" role="search" class="settings-form" novalidate>
${formAlert(form)}
${inputField(form, { name: 'phone', label: 'Phone', type: 'tel', autocomplete: 'off', hint: 'Numbers without + are read in your account\'s country.' })}
<button type="submit">Look up</button>
</form>
${found ? result(found, zone) : ''}`
}

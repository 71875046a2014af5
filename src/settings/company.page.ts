import { formAlert, inputField, selectField, type FormState } from '../pages/form'
import { TIME_ZONES } from '../platform/time-zone'
import { html, type Html } from '../pages/html'

/** The zones the form offers: every zone the runtime knows, and the account's own if it is another name for one (US/Pacific). */
const zoneOptions = (current: string) => (TIME_ZONES.includes(current) ? TIME_ZONES : [current, ...TIME_ZONES]).map((z) => ({ value: z, label: z.replaceAll('_', ' ') }))

/** The company form (`/settings`): name, phone, payment link (each saying where customers meet it) and time zone. */
export function companyBody(form: FormState, opts: { country: string; timeZone: string; saved: boolean; version: string; savedNow: { name: string; phone: string | null; paymentUrl: string | null; timeZone: string } | null }): Html {
  const now = opts.savedNow
  return html`${opts.saved ? html`<p class="notice notice-ok" role="status">Saved. Texts written from now on use these settings.</p>` : ''}
<form method="post" action="/settings" class="settings-form" novalidate>
<input type="hidden" name="version" value="${opts.version}">
${formAlert(form)}
${now ? html`<section class="notice saved-now" aria-labelledby="saved-now"><h2 id="saved-now">Saved now</h2><dl>
<dt>Company name</dt><dd>${now.name}</dd><dt>Company phone</dt><dd>${now.phone ?? 'None'}</dd><dt>Payment link</dt><dd>${now.paymentUrl ?? 'None'}</dd><dt>Time zone</dt><dd>${now.timeZone}</dd>
</dl></section>` : ''}
${inputField(form, { name: 'name', label: 'Company name', required: true, autocomplete: 'organization', maxlength: 100,
    hint: 'Customers see it: it starts every text as {company}, and the reply to HELP and the pages of expired links name you with it.' })}
${inputField(form, { name: 'phone', label: 'Company phone', type: 'tel', autocomplete: 'tel',
    hint: `Given to customers who text HELP. Numbers without + are read as ${opts.country} numbers and kept in the +country form. Leave empty for none.` })}
${inputField(form, { name: 'payment_url', label: 'Payment link', type: 'url', inputmode: 'url', placeholder: 'https://',
    hint: 'The https address where the tracking page\'s Pay link sends a customer with an unpaid invoice (with its number and amount). Leave empty for none: the Pay link then shows the printable invoice.' })}
${selectField(form, { name: 'time_zone', label: 'Time zone', required: true, options: zoneOptions(opts.timeZone),
    hint: 'Where the company works: the dates and times of the dashboard, invoices and exports, and the days the jobs list\'s From and To mean.' })}
<button type="submit">Save settings</button>
</form>`
}

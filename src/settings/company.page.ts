import { formAlert, inputField, type FormState } from '../pages/form'
import { html, type Html } from '../pages/html'

/** The company form (`/settings`): name, phone and payment link, each saying where customers meet it. */
export function companyBody(form: FormState, opts: { country: string; saved: boolean }): Html {
  return html`${opts.saved ? html`<p class="notice notice-ok" role="status">Saved. Texts written from now on use these settings.</p>` : ''}
<form method="post" action="/settings" class="settings-form" novalidate>
${formAlert(form)}
${inputField(form, { name: 'name', label: 'Company name', required: true, autocomplete: 'organization', maxlength: 100,
    hint: 'Customers see it: it starts every text as {company}, and the reply to HELP and the pages of expired links name you with it.' })}
${inputField(form, { name: 'phone', label: 'Company phone', type: 'tel', autocomplete: 'tel',
    hint: `Given to customers who text HELP. Numbers without + are read as ${opts.country} numbers and kept in the +country form. Leave empty for none.` })}
${inputField(form, { name: 'payment_url', label: 'Payment link', type: 'url', inputmode: 'url', placeholder: 'https://',
    hint: 'The https address where the tracking page\'s Pay link will send a customer with an unpaid invoice (the tracking page is to come). Leave empty for none.' })}
<button type="submit">Save settings</button>
</form>`
}

/**
 * A demonstration page built only from the page kit (src/pages/: layout, form, map, assets; the
 * dashboard and map scripts), for the kit's tests: in process (src/pages/page-kit.test.ts) and
 * in Chromium against a binary compiled like dist/towline (test/e2e/page-kit.e2e.test.ts).
 * Mounted with `startTestApi(env, { pages: [pageKitFixture()] })`, or by test/pages/kit-server.ts.
 *
 * - GET /kit/page: the dashboard frame (an owner), hostile text in every kind of place (text,
 *   attributes, field values, options, a marker's name; `?name=` replaces it), the form, a map,
 *   the board's column scroller, and the live stream.
 * - POST /kit/form: refuses an empty **Customer name** or a bad **Phone** by re-rendering the
 *   form (422) with what was typed; else 303 back to the page. POST /kit/form.json: the same
 *   checks on a JSON body, refused in the API's error shape (for the page's scripts).
 * - GET /kit/stream: the live stream. A fresh connection (no last id) sends `hello` and event 1,
 *   then ends; one that resumes replays what came after `Last-Event-ID` (or `?last_event_id=`)
 *   and stays open. GET /kit/stream-log says what each connection asked for. /kit/flaky-stream
 *   is the same, except that it refuses (503) the browser's own reconnections.
 * - GET /kit/plain: the plain shell (no user), as the phone pages use it.
 */
import { Elysia, sse } from 'elysia'
import { validationFailed } from '../../src/platform/errors'
import type { FormFields } from '../../src/platform/forms'
import { BODY_CAPS, routeProps } from '../../src/platform/route-props'
import { html, htmlResponse } from '../../src/pages/html'
import { layout } from '../../src/pages/layout'
import { blankForm, checkboxField, formAlert, inputField, refusedForm, selectField, textareaField, type FormState } from '../../src/pages/form'
import { mapView } from '../../src/pages/map'

/** Text that would become markup (an element, a script, a broken-out attribute) if anything were not escaped. */
export const HOSTILE = `"'><b data-injected="1">bold</b><script>window.__pwned=1</script><img src=x data-injected="2">&amp; Ann`

/** The live stream's events, in order. */
export const KIT_EVENTS = [
  { id: '1', type: 'job.updated', data: { job_id: 'job_kit', n: 1 } },
  { id: '2', type: 'job.updated', data: { job_id: 'job_kit', n: 2 } },
] as const

/** What one connection to the stream asked for. */
export interface StreamConnection { lastEventIdHeader: string | null; lastEventIdQuery: string | null }

/** The places on the fixture's map (one named with hostile text). */
export const KIT_PLACES = [
  { id: 'unit_kit_1', lat: 45.5231, lng: -122.6765, name: 'Truck 1' },
  { id: 'unit_kit_2', lat: 45.5312, lng: -122.6601, name: HOSTILE },
]

/**
 * The live stream of KIT_EVENTS: a fresh connection (no last id) gets `hello` and event 1, then
 * the stream ends; one resuming from an id gets what came after it and stays open.
 */
async function* stream(request: Request, query: Record<string, unknown>, log: StreamConnection[]) {
  const header = request.headers.get('last-event-id')
  const fromQuery = typeof query.last_event_id === 'string' ? query.last_event_id : null
  log.push({ lastEventIdHeader: header, lastEventIdQuery: fromQuery })
  const after = Number(header ?? fromQuery ?? 0)
  yield sse({ event: 'hello', data: { connection: log.length }, retry: 100 })
  const events = KIT_EVENTS.filter((e) => Number(e.id) > after)
  for (const e of after === 0 ? events.slice(0, 1) : events) yield sse({ event: e.type, id: e.id, data: e.data })
  if (after === 0) return
  await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }))
}

/** The fixture routes (see above); `tileUrl` is what the maps load tiles from (the setting's value). */
export function pageKitFixture(opts: { tileUrl: string | null }) {
  const connections: StreamConnection[] = []
  const flaky: StreamConnection[] = []
  const owner = { email: 'owner@kit.test', role: 'owner' as const }

  /** What the form's fields get wrong, by field name. */
  const problemsOf = (fields: FormFields) => {
    const name = typeof fields['customer.name'] === 'string' ? fields['customer.name'].trim() : ''
    const phone = typeof fields['customer.phone'] === 'string' ? fields['customer.phone'].trim() : ''
    return [
      ...(name ? [] : [{ path: 'customer.name', message: 'Enter the customer\'s name.' }]),
      ...(phone === '' || /^\+?[0-9 ()-]{7,20}$/.test(phone) ? [] : [{ path: 'customer.phone', message: 'Enter a phone number like +1 503 555 0100.' }]),
    ]
  }

  const kitForm = (form: FormState, name: string) => html`<form method="post" action="/kit/form" novalidate>
${formAlert(form)}
${inputField(form, { name: 'customer.name', label: 'Customer name', required: true, autocomplete: 'name' })}
${inputField(form, { name: 'customer.phone', label: 'Phone', type: 'tel', autocomplete: 'tel', hint: 'With the country code, e.g. +1 503 555 0100.' })}
${checkboxField(form, { name: 'sms_consent', label: 'Texts allowed' })}
${selectField(form, { name: 'unit_id', label: 'Unit', placeholder: 'No unit yet', options: [{ value: 'unit_kit_1', label: 'Truck 1' }, { value: 'unit_kit_2', label: name }] })}
${textareaField(form, { name: 'note', label: 'Note' })}
<button type="submit">Create job</button>
</form>`

  const page = (form: FormState, name: string, notice?: string) => layout({
    title: `Kit for ${name}`,
    user: owner,
    active: 'board',
    scripts: ['dashboard.js', 'map.js'],
    body: html`<h1>Page kit for <span data-echo="${name}" title="${name}">${name}</span></h1>
${notice ? html`<p class="notice notice-ok">${notice}</p>` : ''}
<p data-live="/kit/stream" data-live-events="job.updated">Stream: <span class="live-status" data-live-status>Not live yet</span></p>
<section aria-labelledby="new-job"><h2 id="new-job">New job</h2>${kitForm(form, name)}</section>
<section aria-labelledby="units"><h2 id="units">Units</h2>${mapView({ label: 'Units on the map', tileUrl: opts.tileUrl, places: KIT_PLACES })}</section>
<section aria-labelledby="board"><h2 id="board">Board</h2>
<div class="board-columns">${['Pending', 'Confirmed', 'Dispatched', 'En route', 'On scene'].map((label, i) => html`<section class="board-column" data-status="${label.toLowerCase().replace(' ', '_')}" aria-label="${label}"><h3>${label}</h3>
<a class="card" href="/kit/page" data-job-id="job_kit_${i}">${i === 0 ? name : 'Bo Diaz'}: 1200 NW Lovejoy St, Portland, a long address that wraps on a phone</a></section>`)}</div>
</section>`,
  })

  return new Elysia().use(routeProps)
    .get('/kit/page', ({ query }) => {
      const name = typeof query.name === 'string' ? query.name : HOSTILE
      return htmlResponse(page(blankForm({ 'customer.name': name, note: name }), name, query.saved ? 'Job created.' : undefined))
    })
    .post('/kit/form', ({ body }) => {
      const fields = body as FormFields
      const problems = problemsOf(fields)
      if (problems.length) return htmlResponse(page(refusedForm(validationFailed(problems), fields), HOSTILE), { status: 422 })
      return new Response(null, { status: 303, headers: { location: '/kit/page?saved=1' } })
    }, { accepts: { kind: 'form', maxBytes: BODY_CAPS.form } })
    .post('/kit/form.json', ({ body }) => {
      const problems = problemsOf(body as FormFields)
      if (problems.length) throw validationFailed(problems)
      return { saved: true }
    }, { answers: 'json', accepts: { kind: 'json', maxBytes: BODY_CAPS.json } })
    .get('/kit/plain', () => htmlResponse(layout({
      title: 'Your tow truck',
      body: html`<h1>Your tow truck is on its way</h1><p>Truck 1 should be there by 10:40.</p>
<form method="post" action="/kit/form" class="actions">${inputField(blankForm(), { name: 'customer.name', label: 'Message', required: true })}<button class="button-big" type="submit">Send</button></form>`,
    })))
    .get('/kit/stream', ({ request, query }) => stream(request, query, connections), { answers: 'json' })
    .get('/kit/stream-log', () => Response.json(connections), { answers: 'json' })
    .get('/kit/flaky-stream', ({ request, query }) => {
      // The browser's own reconnection (it sends the header) is refused: the wrapper must open a new stream itself.
      if (request.headers.get('last-event-id') !== null) {
        flaky.push({ lastEventIdHeader: request.headers.get('last-event-id'), lastEventIdQuery: null })
        return Response.json({ error: { code: 'service_unavailable', message: 'Try again.', details: {} } }, { status: 503 })
      }
      return stream(request, query, flaky)
    }, { answers: 'json' })
    .get('/kit/flaky-stream-log', () => Response.json(flaky), { answers: 'json' })
}

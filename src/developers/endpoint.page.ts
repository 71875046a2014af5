import type { listAttempts } from '../webhooks/send-now'
import { html, type Html } from '../pages/html'
import { endpointStatus, eventsText, secretNotice, when, type EndpointSummary, type ShownSecret } from './developers.page'

/** One attempt as GET /webhooks/{id}/deliveries lists it. */
export type AttemptView = ReturnType<typeof listAttempts>['data'][number]

/** Why an attempt failed beyond its status code (a timeout, a refused connection, a redirect...), or nothing. */
function failure(a: Pick<AttemptView, 'error' | 'error_message'>): string {
  if (!a.error || a.error === 'http') return ''
  return a.error_message ? `${a.error}: ${a.error_message}` : a.error
}

/** "delivered, HTTP 200 in 12 ms", "not delivered: HTTP 500 after 40 ms", "not delivered: timeout (…) after 10000 ms". */
function outcome(a: Pick<AttemptView, 'status' | 'response_status' | 'duration_ms' | 'error' | 'error_message'>): string {
  const answer = a.response_status === null ? '' : `HTTP ${a.response_status}`
  if (a.status === 'succeeded') return `delivered, ${answer} in ${a.duration_ms} ms`
  return `not delivered: ${[answer, failure(a) && `(${failure(a)})`].filter(Boolean).join(' ') || 'failed'} after ${a.duration_ms} ms`
}

function attemptItem(endpointId: string, a: AttemptView, newestOfDelivery: boolean, zone: string): Html {
  const headers = Object.entries(a.request_headers).map(([k, v]) => `${k}: ${v}`).join('\n')
  return html`<li class="item" data-attempt-id="${a.id}" data-delivery-id="${a.delivery_id}">
<h3>${a.event_type} · attempt ${a.attempt}</h3>
<dl class="facts">
<dt>Time</dt><dd>${when(a.created_at, zone)}</dd>
<dt>Result</dt><dd>${a.status === 'succeeded' ? 'Succeeded' : 'Failed'}${failure(a) ? ` (${failure(a)})` : ''}</dd>
<dt>Response status</dt><dd>${a.response_status ?? 'none'}</dd>
<dt>Duration</dt><dd>${a.duration_ms} ms</dd>
<dt>Delivery</dt><dd><code>${a.delivery_id}</code></dd>
${a.next_attempt_at ? html`<dt>Next attempt</dt><dd>${when(a.next_attempt_at, zone)}</dd>` : ''}
</dl>
<details><summary>Response body</summary><pre class="payload">${a.response_body || '(empty)'}</pre></details>
<details><summary>Request</summary><pre class="payload">${headers}\n\n${a.request_body}</pre></details>
${newestOfDelivery ? html`<form method="post" action="/developers/webhooks/${endpointId}/deliveries/${a.delivery_id}/resend"><button type="submit" class="button-secondary">Resend<span class="visually-hidden"> delivery ${a.delivery_id}</span></button></form>` : ''}
</li>`
}

/** What an endpoint's page shows: the endpoint, its last attempts, and what the last action did. */
export interface EndpointPageView {
  endpoint: EndpointSummary
  attempts: AttemptView[]
  /** A delivery just sent (Send test, Resend): its newest attempt is summed up at the top. */
  sent?: string
  secret?: ShownSecret
  alert?: string
  /** This rendering's forms' key: Rotate secret posted twice (a reload of its answer) rotates once. */
  formKey: string
  /** The company's time zone: the times shown are there. */
  zone: string
}

/** The body of `/developers/webhooks/{id}`. */
export function endpointBody(v: EndpointPageView): Html {
  const e = v.endpoint
  const base = `/developers/webhooks/${e.id}`
  const sent = v.sent ? v.attempts.find((a) => a.delivery_id === v.sent) : undefined
  const seen = new Set<string>()
  const items = v.attempts.map((a) => {
    const newest = !seen.has(a.delivery_id)
    seen.add(a.delivery_id)
    return attemptItem(e.id, a, newest, v.zone)
  })
  return html`<p><a href="/developers#webhooks">Developers</a></p>
<h1>Webhook endpoint</h1>
${v.secret ? secretNotice(v.secret) : ''}
<div class="form-alert" role="alert">${v.alert ?? ''}</div>
<div role="status">${sent ? html`<p class="${sent.status === 'succeeded' ? 'notice notice-ok' : 'notice'}">${sent.event_type === 'ping' ? 'Test ping' : `Resent ${sent.event_type}`} (attempt ${sent.attempt}): ${outcome(sent)}.</p>` : ''}</div>
<dl class="facts">
<dt>URL</dt><dd>${e.url}</dd>
${e.description ? html`<dt>Description</dt><dd>${e.description}</dd>` : ''}
<dt>Events</dt><dd>${eventsText(e.events)}</dd>
<dt>Status</dt><dd>${endpointStatus(e)}</dd>
<dt>Failures in a row</dt><dd>${e.consecutive_failures}</dd>
<dt>Created</dt><dd>${when(e.created_at, v.zone)}</dd>
<dt>Id</dt><dd><code>${e.id}</code></dd>
</dl>
<div class="actions">
<form method="post" action="${base}/test"><button type="submit">Send test</button></form>
${e.status === 'active'
    ? html`<form method="post" action="${base}/pause"><button type="submit" class="button-secondary">Pause</button></form>`
    : html`<form method="post" action="${base}/resume"><button type="submit">Resume</button></form>`}
<form method="post" action="${base}/rotate"><input type="hidden" name="idempotency_key" value="${`${v.formKey}.rotate`}"><button type="submit" class="button-secondary">Rotate secret</button></form>
<form method="get" action="${base}/delete"><button type="submit" class="button-danger">Delete</button></form>
</div>
<h2>Deliveries</h2>
<p>The last 100 attempts, newest first. <strong>Resend</strong> sends a delivery again now, with the same id and the next attempt number.</p>
${items.length ? html`<ol class="items">${items}</ol>` : html`<p class="muted">No attempts yet. <strong>Send test</strong> sends a ping.</p>`}`
}

/** The body of `/developers/webhooks/{id}/delete`: the confirm step. */
export function deleteBody(e: EndpointSummary): Html {
  return html`<p><a href="/developers/webhooks/${e.id}">Back to the endpoint</a></p>
<h1>Delete this endpoint?</h1>
<p><code>${e.url}</code> stops receiving events at once, and its undelivered deliveries are cancelled. This cannot be undone.</p>
<div class="actions">
<form method="post" action="/developers/webhooks/${e.id}/delete"><button type="submit" class="button-danger">Delete endpoint</button></form>
<a class="button button-secondary" href="/developers/webhooks/${e.id}">Keep it</a>
</div>`
}

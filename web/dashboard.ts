/**
 * Entry of the dashboard pages (board, jobs, developers, settings). For now it holds what every
 * page shares; a page's own behaviour comes as its own entry or module.
 *
 * - Every form is enhanced (one submission at a time, shared/forms.ts).
 * - `<button data-print hidden>` is shown, and prints the page.
 * - An element `[data-live="/path/stream"]` opens the page's live stream (shared/live.ts): each
 *   event is dispatched on `document` as a `towline:live` CustomEvent (`detail: { type, data, id }`),
 *   each `hello` as `towline:hello` (re-read the page's state then); `data-live-events` lists the
 *   named event types to listen for (space-separated; unnamed events always arrive as type
 *   `message`). `[data-live-status]` elements show whether the page is live.
 */
import { enhanceForm, focusDone, focusRefusal, restoreTyped, toSignIn } from './shared/forms'
import { openLive, type LiveState } from './shared/live'

restoreTyped()
for (const form of document.querySelectorAll<HTMLFormElement>('form')) enhanceForm(form, { keepTyped: true })
if (!focusRefusal()) focusDone()


// A secret shown once (a new key, a signing secret, a password) takes focus, selected, so it is read
// out with what it is and copied at once; its Copy button (drawn hidden: it needs this script) copies it.
const secret = document.querySelector<HTMLInputElement>('input[data-shown-secret]')
if (secret && (!document.activeElement || document.activeElement === document.body)) {
  secret.focus()
  secret.select()
}
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy ?? '') as HTMLInputElement | null
  if (!field) continue
  button.hidden = false
  button.addEventListener('click', async () => {
    field.focus()
    field.select()
    try {
      // Only on https or localhost; elsewhere the selection is copied the old way.
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(field.value)
      else if (!document.execCommand('copy')) throw new Error('not copied')
      button.textContent = 'Copied'
    } catch {
      button.textContent = 'Selected: copy it now'
    }
  })
}

// A Print button is drawn hidden (it needs this script); the browser's own print works without it.
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-print]')) {
  button.hidden = false
  button.addEventListener('click', () => window.print())
}

const STATUS_TEXT: Record<LiveState, string> = { connecting: 'Connecting…', open: 'Live', closed: 'Not live' }

const liveEl = document.querySelector<HTMLElement>('[data-live]')
if (liveEl?.dataset.live) {
  const relay = (type: string) => (data: unknown, id: string) => document.dispatchEvent(new CustomEvent('towline:live', { detail: { type, data, id } }))
  const types = (liveEl.dataset.liveEvents ?? '').split(/\s+/).filter(Boolean)
  openLive(liveEl.dataset.live, {
    on: Object.fromEntries(types.map((t) => [t, relay(t)])),
    onMessage: relay('message'),
    onHello: (data) => document.dispatchEvent(new CustomEvent('towline:hello', { detail: data })),
    // Refused for good: a session that ended (401) goes to sign in, back here after; anything else shows the server's answer.
    onRefused: (status) => (status === 401 ? toSignIn() : location.reload()),
    // A job page in a background tab holds no connection (the board keeps its own stream: board.ts).
    pauseWhenHidden: true,
    onState: (state) => {
      for (const el of document.querySelectorAll<HTMLElement>('[data-live-status]')) {
        el.textContent = STATUS_TEXT[state]
        el.dataset.state = state
      }
    },
  })
}

// The shared helpers, as this module's exports: a browser test imports the built bundle to call them.
export { ApiError, fetchJson } from './shared/fetch-json'
export { clearRefusal, enhanceForm, keepTyped, restoreTyped, showRefusal } from './shared/forms'
export { openLive } from './shared/live'

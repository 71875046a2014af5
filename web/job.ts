/**
 * The job page's script. The page works without it; this adds:
 * - a notice (`role="status"`) when someone else changes the job while the page is open, with a
 *   link to show the latest, so nobody acts on an old page without knowing (the server refuses a
 *   stale action anyway: every form carries the status the page showed);
 * - the job's "new" mark on the board taken off, since it has now been opened.
 * The live stream is the board's (dashboard.ts opens it from the page's `data-live`).
 */
import { toSignIn } from './shared/forms'

interface JobMessage { event: { job_id: string; type: string; sequence: number; actor: string; detail?: Record<string, unknown> }; job: { status: string } | null }

const head = document.querySelector<HTMLElement>('.job-head[data-job-id]')
const notice = document.getElementById('job-changed')
const jobId = head?.dataset.jobId ?? ''
const version = Number(head?.dataset.version ?? '0')
const labels = JSON.parse(head?.dataset.labels ?? '{}') as Record<string, string>
/** The users, keys and units of the account by id, as the timeline names them. */
const names = JSON.parse(head?.dataset.names ?? '{}') as Record<string, string>
/** Changes seen since the page was loaded. */
let changes = 0

try {
  const key = 'towline.board.new'
  const ids = new Set(JSON.parse(localStorage.getItem(key) ?? '[]') as string[])
  if (ids.delete(jobId)) localStorage.setItem(key, JSON.stringify([...ids]))
} catch {}

/** Shows the notice once, then keeps its words current. */
function changed(words: string) {
  if (!notice) return
  notice.replaceChildren(`${words} `)
  const link = document.createElement('a')
  link.href = location.pathname
  link.textContent = 'Show the latest'
  notice.append(link)
  notice.hidden = false
}

document.addEventListener('towline:live', (e) => {
  const { type, data } = (e as CustomEvent<{ type: string; data: unknown }>).detail
  if (type === 'resync') return changed('This job may have changed since the page was loaded.')
  // The session ended elsewhere (signed out, a new password, the login disabled): to the sign-in page, back here after.
  if (type === 'signed_out') return toSignIn()
  const m = data as JobMessage
  if (type !== 'job' || m?.event?.job_id !== jobId || m.event.sequence <= version) return
  const status = m.job?.status
  const now = status && status !== head?.dataset.status ? ` It is now ${labels[status] ?? status}.` : ''
  const by = [m.event.detail?.user_id, m.event.detail?.key_id, m.event.detail?.unit_id].map((id) => (typeof id === 'string' ? names[id] : undefined)).find(Boolean)
  const what = m.event.type.replace(/^job\./, '').replace(/_/g, ' ')
  changes++
  // Each change says something new (a second note is not the first said again).
  changed(`This job was changed ${changes === 1 ? '' : `${changes} times `}since the page was loaded, last by ${m.event.actor}${by ? ` (${by})` : ''}: ${what}.${now}`)
})

/**
 * The driver's page's script (/d/{token}). The page works without it; this adds:
 * - live updates: the job's events on /d/{token}/events make the page re-read /d/{token}/state
 *   and redraw its status and buttons; a link that died reloads the page (its 410 says why);
 * - **Add photo** uploads as soon as a file is chosen, downscaled first to at most 1600 px on
 *   the long side (JPEG), with no second button;
 * - the signature pad (Pointer Events: finger, pen or mouse) posted as a PNG with **Save signature**;
 * - the phone's position, at most every 10 s while the job is active, as the unit's position;
 * - the offline queue: a button pressed without a connection is kept on the phone and sent in
 *   order when the connection returns, each with its own idempotency key and the status it was
 *   pressed in (a replay never doubles, a stale one is refused).
 */
import { politeAnnouncer } from './shared/announcer.ts'
import { openLive } from './shared/live.ts'
import { DRIVER_CACHE } from './shared/driver-cache.ts'
import { focusDone, focusRefusal } from './shared/forms.ts'

const root = document.getElementById('driver')
const base = root?.dataset.base ?? ''
const LONG_SIDE = 1600
const SHARE_EVERY_MS = 10_000
const QUEUE_KEY = `towline.driver.queue.${base}`
const liveStatus = document.getElementById('live-status')

// Said only when the words change: the same words written again would be announced again.
const say = (words: string) => { if (liveStatus && liveStatus.textContent !== words) liveStatus.textContent = words }

/** Tells a screen reader what changed on the job (a move, a note, a new destination): a polite status of its own. */
const announcer = politeAnnouncer('driver-announce', (el) => root?.append(el))
const tell = (words: string) => { announcer.textContent = words }

/** Puts the keyboard on the first button of `box` when a redraw took it away from there. */
function keepKeyboardIn(box: Element, hadIt: boolean): void {
  if (!hadIt || (document.activeElement && document.activeElement !== document.body && document.activeElement.isConnected)) return
  box.querySelector<HTMLElement>('button, input:not([type="hidden"]), a')?.focus()
}

/** The text of each part of the job's facts, by its heading: to say which parts a redraw changed. */
function factParts(facts: Element): Map<string, { text: string; items: string[] }> {
  const parts = new Map<string, { text: string; items: string[] }>()
  for (const section of facts.querySelectorAll('section')) {
    const heading = section.querySelector('h2')?.textContent?.trim() ?? ''
    parts.set(heading, { text: section.textContent ?? '', items: [...section.querySelectorAll('li')].map((li) => li.textContent?.trim() ?? '') })
  }
  return parts
}

/** What a redraw of the facts changed, in words: a new note read out, other parts named. */
function factsNews(before: Map<string, { text: string; items: string[] }>, after: Map<string, { text: string; items: string[] }>): string {
  const news: string[] = []
  for (const [heading, part] of after) {
    const was = before.get(heading)
    if (was && was.text === part.text) continue
    const added = part.items.filter((item) => !was?.items.includes(item))
    news.push(heading === 'Notes' && added.length ? `New note: ${added.join(' ')}` : `${heading} changed.`)
  }
  return news.join(' ')
}
const alertBox = () => document.getElementById('driver-alert')

for (const el of document.querySelectorAll<HTMLElement>('[data-no-script]')) el.hidden = true

// Photo and signature times in the phone's zone (the server writes them in UTC).
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' })
const local = (iso: string | undefined) => { const at = Date.parse(iso ?? ''); return Number.isFinite(at) ? CLOCK.format(at) : null }
/** Says the times within `root` in the phone's zone. */
function localTimes(root: ParentNode): void {
  for (const el of root.querySelectorAll<HTMLTimeElement>('time[data-local][datetime]')) el.textContent = local(el.dateTime) ?? el.textContent
  for (const img of root.querySelectorAll<HTMLImageElement>('img[data-added]')) { const at = local(img.dataset.added); if (at) img.alt = `Photo added ${at}` }
}
localTimes(document)
if (!focusRefusal()) focusDone()

/** A status press kept on the phone until it can be sent: the form's action and fields (its key and expected status). */
interface Queued { action: string; fields: [string, string][] }
const readQueue = (): Queued[] => { try { return JSON.parse(localStorage.getItem(QUEUE_KEY) ?? '[]') as Queued[] } catch { return [] } }
const writeQueue = (q: Queued[]) => { try { localStorage.setItem(QUEUE_KEY, JSON.stringify(q)) } catch {} }
const waiting = () => { const n = readQueue().length; say(`Offline: ${n} action${n === 1 ? '' : 's'} waiting to be sent.`) }

// ---- live updates ----------------------------------------------------------------------------

let sharing = root?.dataset.sharing === 'yes'

/** Re-reads the job's state and redraws the status and buttons. */
async function refresh(): Promise<void> {
  // Presses still queued: the page shows where they lead until they are sent.
  if (readQueue().length) return
  const res = await fetch(`${base}/state`, { headers: { accept: 'application/json' }, cache: 'no-store' })
  if (res.status === 410 || res.status === 404) return location.reload()
  if (!res.ok) return
  const state = await res.json() as { actions_key: string; actions_html: string; facts_html: string; sharing: boolean; status: string; status_label: string }
  sharing = state.sharing
  const news: string[] = []
  // A note, a new destination, a corrected phone: the job's facts as they are now, said in words.
  const facts = document.getElementById('driver-facts')
  if (facts && facts.innerHTML !== state.facts_html) {
    const had = facts.contains(document.activeElement)
    const before = factParts(facts)
    facts.innerHTML = state.facts_html
    localTimes(facts)
    news.push(factsNews(before, factParts(facts)))
    keepKeyboardIn(facts, had)
  }
  // The status and buttons are redrawn only when they change (not for a note): a driver about to
  // press the next step keeps their place, and nothing already said is said again.
  const live = document.getElementById('driver-live')
  if (live && live.dataset.actions !== state.actions_key) {
    const had = live.contains(document.activeElement)
    const alert = alertBox()?.textContent ?? ''
    const done = document.getElementById('driver-done')?.textContent ?? ''
    const before = live.querySelector<HTMLElement>('#driver-status')?.dataset.status
    live.innerHTML = state.actions_html
    live.dataset.actions = state.actions_key
    // Keep what the page was saying unless the job moved meanwhile; a move is said.
    if (before === state.status) {
      const a = alertBox()
      if (a && alert) a.textContent = alert
      const d = document.getElementById('driver-done')
      if (d && done) d.textContent = done
    } else news.unshift(`Status: ${state.status_label}.`)
    enhanceForms()
    keepKeyboardIn(live, had)
  }
  const words = news.filter(Boolean).join(' ')
  if (words) tell(words)
}

if (root && base) {
  openLive(`${base}/events?after=${encodeURIComponent(root.dataset.position ?? '')}`, {
    // The stream is back: so is the server, and anything queued can go.
    onHello: () => { if (readQueue().length) void flush(); else void refresh() },
    on: {
      job: () => { void refresh() },
      gone: () => location.reload(),
    },
    // Presses waiting to be sent matter more to the driver than the stream's state.
    onState: (s) => (readQueue().length ? waiting() : say(s === 'open' ? 'Live: this page updates by itself.' : s === 'connecting' ? 'Connecting for live updates…' : '')),
  })
}

// ---- offline queue ---------------------------------------------------------------------------


const road = JSON.parse(root?.dataset.road ?? '{}') as Record<string, string[]>
const labels = JSON.parse(root?.dataset.labels ?? '{}') as Record<string, string>
let flushing = false

/** Shows the server's refusal (its alert's words) on this page. */
async function showRefusal(res: Response, prefix = ''): Promise<void> {
  const doc = new DOMParser().parseFromString(await res.text(), 'text/html')
  const words = doc.getElementById('driver-alert')?.textContent || doc.querySelector('[role="alert"]')?.textContent || 'The action was refused.'
  if (res.status === 410) return location.reload()
  await refresh()
  const a = alertBox()
  if (a) a.textContent = prefix + words
}

/**
 * An answer that is not the service's word on the press: a proxy or load balancer with no
 * server behind it (502, 504), a server starting or stopping (503), too many requests (429),
 * a timeout (408), or the server failing (500). The press stays queued and is sent again; its
 * idempotency key makes a press the server did take count once.
 */
const notAnswered = (res: Response) => res.status >= 500 || res.status === 429 || res.status === 408

let retryTimer: ReturnType<typeof setTimeout> | undefined
let retryMs = 2_000
/** Tries the queue again later (2 s, doubling to a minute): the phone may be online while the server is not reachable. */
function retryLater(): void {
  waiting()
  if (retryTimer) return
  retryTimer = setTimeout(() => { retryTimer = undefined; void flush() }, retryMs)
  retryMs = Math.min(60_000, retryMs * 2)
}

/** Sends the queued actions in order; stops at the first that cannot be sent yet (no connection, no server). */
async function flush(): Promise<void> {
  if (flushing) return
  flushing = true
  try {
    for (;;) {
      const next = readQueue()[0]
      if (!next) break
      let res: Response
      try {
        res = await fetch(next.action, { method: 'POST', body: new URLSearchParams(next.fields) })
      } catch {
        return retryLater()
      }
      if (notAnswered(res)) return retryLater()
      writeQueue(readQueue().slice(1))
      // Refused (stale, already done, handed over): the server wrote nothing; say so and drop the rest's hopes with it.
      if (!res.ok) await showRefusal(res, 'Sent when the connection came back, and refused: ')
    }
    retryMs = 2_000
    say('Live: this page updates by itself.')
    await refresh()
  } finally {
    flushing = false
  }
}

/** Draws the buttons a queued press leads to (the table's driver moves), each with a fresh key and the status it expects. */
function showQueued(status: string): void {
  const statusEl = document.getElementById('driver-status')
  if (statusEl) { statusEl.textContent = labels[status] ?? status; statusEl.dataset.status = status }
  const box = document.querySelector('.driver-buttons')
  if (!box) return
  const had = box.contains(document.activeElement)
  box.replaceChildren(...(road[status] ?? []).map((to) => {
    const form = document.createElement('form')
    form.method = 'post'
    form.action = `${base}/status`
    form.dataset.queue = ''
    for (const [name, value] of [['idempotency_key', crypto.randomUUID()], ['expected_status', status], ['to', to]]) {
      const input = document.createElement('input')
      input.type = 'hidden'
      input.name = name!
      input.value = value!
      form.append(input)
    }
    if (to === 'goa') {
      // As the page draws it online: GOA with its optional Reason (the motor club asks for one).
      const field = document.createElement('div')
      field.className = 'field'
      const label = document.createElement('label')
      label.htmlFor = 'f-goa-reason'
      label.textContent = 'Reason'
      const input = document.createElement('input')
      input.id = 'f-goa-reason'
      input.name = 'reason'
      input.maxLength = 500
      input.autocomplete = 'off'
      field.append(label, input)
      form.append(field)
    }
    const button = document.createElement('button')
    button.type = 'submit'
    button.className = to === 'goa' ? 'button-big button-danger' : 'button-big'
    button.textContent = to === 'goa' ? 'GOA' : `Move to ${labels[to] ?? to}`
    form.append(button)
    return form
  }))
  // The buttons now lead on from the queued press; the keyboard stays among them, and the queued
  // buttons no longer match what the server would draw (redrawn from /state once sent).
  delete document.getElementById('driver-live')?.dataset.actions
  enhanceForms()
  keepKeyboardIn(box, had)
}

/** Status buttons post through fetch; without a connection the press is queued (with its key and status) instead of lost. */
function enhanceForms(): void {
  for (const form of document.querySelectorAll<HTMLFormElement>('form[data-queue]')) {
    if (form.dataset.enhanced) continue
    form.dataset.enhanced = 'yes'
    form.addEventListener('submit', async (e) => {
      e.preventDefault()
      const fields = [...new FormData(form).entries()].map(([k, v]) => [k, String(v)] as [string, string])
      const queue = () => {
        writeQueue([...readQueue(), { action: form.action, fields }])
        waiting()
        const to = fields.find(([k]) => k === 'to')?.[1]
        showQueued(to ?? fields.find(([k]) => k === 'expected_status')?.[1] ?? '')
      }
      if (readQueue().length) { queue(); return }
      form.setAttribute('aria-busy', 'true')
      let res: Response
      try {
        res = await fetch(form.action, { method: 'POST', body: new URLSearchParams(fields) })
      } catch {
        form.removeAttribute('aria-busy')
        queue()
        retryLater()
        return
      }
      if (notAnswered(res)) {
        form.removeAttribute('aria-busy')
        queue()
        retryLater()
        return
      }
      if (res.ok) return location.assign(res.url)
      form.removeAttribute('aria-busy')
      await showRefusal(res)
    })
  }
}
enhanceForms()
window.addEventListener('online', () => { void flush() })
{
  const q = readQueue()
  const last = q.at(-1)?.fields
  if (last) showQueued(last.find(([k]) => k === 'to')?.[1] ?? last.find(([k]) => k === 'expected_status')?.[1] ?? '')
  if (q.length) { waiting(); void flush() }
}
// Keeps the page and the last known job for a reload without a connection.
if (base && 'serviceWorker' in navigator) {
  navigator.serviceWorker.register('/d/sw.js', { scope: '/d/' }).then(() => navigator.serviceWorker.ready).then(keepForOffline).catch(() => {})
}

/**
 * The worker keeps what it serves, but the visit that installed it was not its own (a driver who
 * opens the texted link once and then loses signal): the page, its state and the assets it loaded
 * are kept now, in the worker's cache and under its keys, unless already there.
 */
async function keepForOffline(): Promise<void> {
  const cache = await caches.open(DRIVER_CACHE)
  const assets = [...document.querySelectorAll<HTMLScriptElement | HTMLLinkElement>('script[src], link[rel="stylesheet"][href]')]
    .map((el) => new URL(el instanceof HTMLScriptElement ? el.src : el.href, location.href))
    .filter((u) => u.origin === location.origin && u.pathname.startsWith('/assets/'))
    .map((u) => u.pathname)
  for (const path of [...assets, base, `${base}/state`]) {
    if (!(await cache.match(path))) await cache.add(path)
  }
}

// ---- photo -----------------------------------------------------------------------------------

/** Draws the image at most LONG_SIDE px on its long side and encodes it as JPEG. */
async function downscale(file: File): Promise<Blob> {
  const bitmap = await createImageBitmap(file)
  const scale = Math.min(1, LONG_SIDE / Math.max(bitmap.width, bitmap.height))
  const canvas = document.createElement('canvas')
  canvas.width = Math.max(1, Math.round(bitmap.width * scale))
  canvas.height = Math.max(1, Math.round(bitmap.height * scale))
  canvas.getContext('2d')!.drawImage(bitmap, 0, 0, canvas.width, canvas.height)
  bitmap.close()
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('could not encode'))), 'image/jpeg', 0.85))
}

/**
 * Whether the service answers now: asked before a photo or signature is sent (they are not
 * queued, and a form sent into a dead zone would leave the driver on the browser's error page,
 * the signature lost). HEAD, which the service worker leaves to the network.
 */
async function serviceAnswers(): Promise<boolean> {
  if (!navigator.onLine) return false
  try {
    return !notAnswered(await fetch(`${base}/state`, { method: 'HEAD', cache: 'no-store' }))
  } catch {
    return false
  }
}

const photoForm = document.getElementById('photo-form') as HTMLFormElement | null
const photoInput = document.getElementById('f-photo') as HTMLInputElement | null
photoInput?.addEventListener('change', async () => {
  const file = photoInput.files?.[0]
  if (!file || !photoForm) return
  say('Uploading the photo…')
  let blob: Blob = file
  try { blob = await downscale(file) } catch { /* not an image the browser reads: the server says why */ }
  // Still over the upload's limit (a file the browser could not shrink): said beside the field, nothing sent.
  const max = Number(photoInput.dataset.maxBytes)
  if (max && blob.size > max) {
    const error = document.getElementById('f-photo-error')
    if (error) error.textContent = photoInput.dataset.tooLarge ?? 'is too large'
    photoInput.setAttribute('aria-invalid', 'true')
    photoInput.setAttribute('aria-describedby', 'f-photo-error')
    photoInput.value = ''
    say('')
    photoInput.focus()
    return
  }
  if (!(await serviceAnswers())) {
    const error = document.getElementById('f-photo-error')
    if (error) error.textContent = 'No connection: the photo was not sent. Choose it again when you have signal.'
    photoInput.setAttribute('aria-invalid', 'true')
    photoInput.setAttribute('aria-describedby', 'f-photo-error')
    photoInput.value = ''
    say(readQueue().length ? '' : 'Offline: photos need a connection.')
    if (readQueue().length) waiting()
    return
  }
  const dt = new DataTransfer()
  dt.items.add(new File([blob], blob === file ? file.name : 'photo.jpg', { type: blob.type || file.type }))
  photoInput.files = dt.files
  photoForm.submit()
})

// ---- signature -------------------------------------------------------------------------------

const pad = document.getElementById('signature-pad') as HTMLCanvasElement | null
const sigForm = document.getElementById('signature-form') as HTMLFormElement | null
const sigInput = document.getElementById('f-signature') as HTMLInputElement | null
let drawn = false
if (pad && sigForm && sigInput) {
  const ctx = pad.getContext('2d')!
  ctx.fillStyle = '#fff'
  ctx.fillRect(0, 0, pad.width, pad.height)
  ctx.lineWidth = 4
  ctx.lineCap = 'round'
  ctx.lineJoin = 'round'
  ctx.strokeStyle = '#111'
  let drawing = false
  const at = (e: PointerEvent) => {
    const r = pad.getBoundingClientRect()
    return [(e.clientX - r.left) * (pad.width / r.width), (e.clientY - r.top) * (pad.height / r.height)] as const
  }
  pad.addEventListener('pointerdown', (e) => {
    drawing = true
    pad.setPointerCapture(e.pointerId)
    const [x, y] = at(e)
    ctx.beginPath()
    ctx.moveTo(x, y)
    e.preventDefault()
  })
  pad.addEventListener('pointermove', (e) => {
    if (!drawing) return
    const [x, y] = at(e)
    ctx.lineTo(x, y)
    ctx.stroke()
    drawn = true
  })
  const stop = () => { drawing = false }
  pad.addEventListener('pointerup', stop)
  pad.addEventListener('pointercancel', stop)
  document.getElementById('signature-clear')?.addEventListener('click', () => {
    ctx.fillRect(0, 0, pad.width, pad.height)
    drawn = false
  })
  let sending = false
  sigForm.addEventListener('submit', (e) => {
    if (sending) return
    e.preventDefault()
    if (!drawn) {
      const a = alertBox()
      if (a) a.textContent = 'Nothing was saved: draw the signature first.'
      return
    }
    pad.toBlob(async (blob) => {
      if (!blob) return
      if (!(await serviceAnswers())) {
        const a = alertBox()
        if (a) a.textContent = 'No connection: the signature was not saved. It is still drawn: press Save signature again when you have signal.'
        return
      }
      const dt = new DataTransfer()
      dt.items.add(new File([blob], 'signature.png', { type: 'image/png' }))
      sigInput.files = dt.files
      sending = true
      sigForm.submit()
    }, 'image/png')
  })
}

// ---- position --------------------------------------------------------------------------------

if (root && base && 'geolocation' in navigator) {
  // Kept across the page's reloads (each press posts a form and comes back): at most one fix every
  // SHARE_EVERY_MS from this tab, not one more per reload.
  const sentKey = `towline-position-sent:${base}`
  const sentAt = () => { try { return Number(sessionStorage.getItem(sentKey)) || 0 } catch { return 0 } }
  navigator.geolocation.watchPosition((p) => {
    if (!sharing || Math.abs(Date.now() - sentAt()) < SHARE_EVERY_MS) return
    try { sessionStorage.setItem(sentKey, String(Date.now())) } catch { /* private mode: this page's own pace */ }
    const c = p.coords
    void fetch(`${base}/position`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lat: c.latitude, lng: c.longitude, accuracy: c.accuracy, heading: c.heading ?? -1, speed: c.speed ?? -1, timestamp: Math.round(p.timestamp) }),
    }).catch(() => {})
  }, () => {}, { enableHighAccuracy: true, maximumAge: SHARE_EVERY_MS })
}

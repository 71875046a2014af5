/**
 * The dispatch board's script: keeps the server-rendered board live over Server-Sent Events.
 * Each message carries the job's card as the server draws it; this only swaps cards between
 * columns, counts them, rings on a new job and marks it until it is opened. Without this script
 * the board still shows every job as of its loading.
 */
import { politeAnnouncer } from './shared/announcer'
import { openLive } from './shared/live'
import type { MapView } from './shared/map-view'

const UNITS_EVERY_MS = 15_000

interface JobMessage { position: number; event: { type: string; job_id: string }; job: { id: string; status: string; created_at: string; customer: { name: string } } | null; card: string | null }

const board = document.getElementById('board')
const statusLine = document.getElementById('live-status')
const soundBox = document.getElementById('sound') as HTMLInputElement | null
const SOUND_KEY = 'towline.board.sound'
const NEW_KEY = 'towline.board.new'

const say = (text: string) => { if (statusLine) statusLine.textContent = text }

/** Job ids created while a board was open and not opened since (shared by this browser's tabs). */
function unopened(): Set<string> {
  try { return new Set(JSON.parse(localStorage.getItem(NEW_KEY) ?? '[]') as string[]) } catch { return new Set() }
}
function saveUnopened(ids: Set<string>) {
  try { localStorage.setItem(NEW_KEY, JSON.stringify([...ids].slice(-200))) } catch {}
}

// Ages are counted on the server's clock (the board's data-now, when the page was drawn), not this
// computer's: a PC clock hours off would otherwise show every job as just in, or days old.
const serverNow = Number(document.getElementById('board')?.dataset.now)
const clockSkew = Number.isFinite(serverNow) && serverNow > 0 ? serverNow - Date.now() : 0

function ageText(fromIso: string): string {
  const min = Math.max(0, Math.floor((Date.now() + clockSkew - Date.parse(fromIso)) / 60_000))
  if (min < 60) return `${min} min`
  const h = Math.floor(min / 60)
  if (h < 24) return `${h} h ${String(min % 60).padStart(2, '0')} min`
  return `${Math.floor(h / 24)} d ${h % 24} h`
}

function refreshAges() {
  for (const card of document.querySelectorAll<HTMLElement>('[data-job-id][data-created-at]')) {
    const age = card.querySelector('.card-age')
    if (age) age.textContent = ageText(card.dataset.createdAt!)
  }
}

function recount() {
  for (const col of document.querySelectorAll<HTMLElement>('[data-status]')) {
    const n = col.querySelectorAll('[data-job-id]').length
    const count = col.querySelector('.column-count')
    if (count) count.textContent = `${n} ${n === 1 ? 'job' : 'jobs'}`
  }
}

/** Marks each card of a job not opened yet: a highlighted border and a "New" badge (words, so screen readers say it too). */
function markUnopened() {
  const ids = unopened()
  for (const card of document.querySelectorAll<HTMLElement>('[data-job-id]')) {
    const isNew = ids.has(card.dataset.jobId!)
    card.classList.toggle('card-new', isNew)
    const badge = card.querySelector('.card-new-badge')
    if (isNew && !badge) {
      const mark = document.createElement('span')
      mark.className = 'card-new-badge'
      mark.textContent = 'New'
      card.prepend(mark)
    } else if (!isNew) badge?.remove()
  }
}

/** Tells a screen reader what changed on the board: jobs arriving, moving, leaving. */
const announcer = politeAnnouncer('board-announce', (el) => board?.after(el))

function ring() {
  if (!soundBox?.checked) return
  try {
    const audio = new AudioContext()
    const tone = audio.createOscillator()
    const gain = audio.createGain()
    tone.frequency.value = 880
    gain.gain.setValueAtTime(0.2, audio.currentTime)
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.6)
    tone.connect(gain).connect(audio.destination)
    tone.start()
    tone.stop(audio.currentTime + 0.6)
  } catch {}
}

/** Where the keyboard is on the board: the job whose card holds the focus, and which of its controls (a class-named selector). */
function keyboardOnCard(): { id: string; selector: string | null } | null {
  const el = document.activeElement
  const card = el instanceof HTMLElement ? el.closest<HTMLElement>('[data-job-id]') : null
  if (!el || !card) return null
  const cls = el.classList[0]
  return { id: card.dataset.jobId!, selector: el === card ? null : `${el.tagName.toLowerCase()}${cls ? `.${CSS.escape(cls)}` : ''}` }
}

/**
 * Puts the keyboard back where it was after cards were redrawn: on the same control of the same
 * job's card (in whatever column it now is); on the board itself when the job left it.
 */
function restoreKeyboard(was: { id: string; selector: string | null } | null): void {
  if (!was || (document.activeElement && document.activeElement !== document.body)) return
  const card = document.querySelector<HTMLElement>(`[data-job-id="${CSS.escape(was.id)}"]`)
  const target = card ? (was.selector ? card.querySelector<HTMLElement>(was.selector) : null) ?? card.querySelector<HTMLElement>('a, button') ?? card : board
  if (!target) return
  if (target === board && !board.hasAttribute('tabindex')) board.tabIndex = -1
  target.focus()
}

/** Says what changed on the board: several at once are said together, not one over another. */
let lastSaid = { at: 0, parts: [] as string[] }
function announce(part: string): void {
  const now = Date.now()
  lastSaid = now - lastSaid.at < 2_000 ? { at: now, parts: [...lastSaid.parts, part].slice(-4) } : { at: now, parts: [part] }
  announcer.textContent = lastSaid.parts.join(' ')
}

/** The words of a column (its heading), for saying where a job went. */
const columnName = (status: string) => document.querySelector(`[data-status="${CSS.escape(status)}"] h2`)?.textContent?.trim() ?? status.replace(/_/g, ' ')

/** Puts a job's card where its status says (or takes it off the board), oldest first in each column; the keyboard stays on it. */
function apply(m: JobMessage) {
  const id = m.event.job_id
  const keyboard = keyboardOnCard()
  const old = document.querySelector<HTMLElement>(`[data-job-id="${CSS.escape(id)}"]`)
  const oldStatus = old?.closest<HTMLElement>('[data-status]')?.dataset.status
  const name = m.job?.customer.name ?? old?.querySelector('.card-title')?.textContent?.trim() ?? 'A job'
  old?.remove()
  let nowStatus: string | undefined
  if (m.card && m.job) {
    const list = document.querySelector(`[data-status="${CSS.escape(m.job.status)}"] .cards`)
    if (list) {
      const holder = document.createElement('ol')
      holder.innerHTML = m.card
      const card = holder.firstElementChild as HTMLElement
      const later = [...list.querySelectorAll<HTMLElement>('[data-job-id]')].find((c) => (c.dataset.createdAt ?? '') > m.job!.created_at)
      list.insertBefore(card, later ?? null)
      const age = card.querySelector('.card-age')
      if (age) age.textContent = ageText(m.job.created_at)
      nowStatus = m.job.status
    }
  }
  if (m.event.type === 'job.created') {
    const ids = unopened()
    ids.add(id)
    saveUnopened(ids)
    ring()
    if (m.job) announce(`New job: ${m.job.customer.name}.`)
  } else if (old && !nowStatus) announce(`${name} left the board.`)
  else if (old && nowStatus && nowStatus !== oldStatus) announce(`${name}: ${columnName(nowStatus)}.`)
  markUnopened()
  recount()
  if (keyboard?.id === id) restoreKeyboard(keyboard)
}

async function resync() {
  const res = await fetch('/board/state', { headers: { accept: 'application/json' } })
  if (res.status === 401) { location.assign('/login?next=/board'); return }
  const state = (await res.json()) as { columns_html: string }
  const keyboard = keyboardOnCard()
  if (board) board.innerHTML = state.columns_html
  markUnopened()
  refreshAges()
  restoreKeyboard(keyboard)
}

/** True from the moment the page starts navigating away (a form posted, a link followed) until it is shown again. */
let leaving = false
window.addEventListener('beforeunload', () => { leaving = true })
window.addEventListener('pageshow', () => { leaving = false })

/** Whether the stream has been open since the page loaded. */
let wasLive = false

/** The stream, through the pages' shared wrapper (reconnects from the last event, one per tab). */
function connect() {
  if (!board) return
  openLive(`/board/events?after=${encodeURIComponent(board.dataset.position ?? '')}`, {
    on: {
      job: (data) => apply(data as JobMessage),
      resync: () => { void resync() },
      // The session ended (signed out elsewhere, a new password, the login disabled): the stream
      // stops here. Not when this page is already leaving (its own Sign out goes to /login itself).
      signed_out: () => { if (!leaving) location.assign('/login?next=/board') },
    },
    onState: (state) => {
      // The first connection is not a lost one.
      say(state === 'open' ? 'Live: changes appear as they happen.' : state === 'connecting' ? (wasLive ? 'Connection lost: reconnecting…' : 'Connecting…') : 'Not live.')
      if (state === 'open') wasLive = true
    },
  })
}

if (soundBox) {
  soundBox.checked = localStorage.getItem(SOUND_KEY) === 'on'
  soundBox.addEventListener('change', () => localStorage.setItem(SOUND_KEY, soundBox.checked ? 'on' : 'off'))
}
// Opening a job (its card's link) takes its mark off.
document.addEventListener('click', (e) => {
  const card = (e.target as HTMLElement).closest<HTMLElement>('[data-job-id]')
  if (!card) return
  const ids = unopened()
  if (ids.delete(card.dataset.jobId!)) saveUnopened(ids)
})
// ---- units on the map ------------------------------------------------------------------------
// A unit's position is not a job event: the board asks for the units every 15 seconds (not while
// the page is hidden) and moves their markers and list, a unit added since the page loaded included.

interface BoardUnit { id: string; name: string; status: string; position: { lat: number; lng: number } | null }
let mapView: MapView | null = null
const mapEl = document.querySelector<HTMLElement>('.board-map [data-map]')
mapEl?.addEventListener('map-mounted', (e) => { mapView = (e as CustomEvent<MapView>).detail })

async function refreshUnits(): Promise<void> {
  if (document.hidden) return
  let units: BoardUnit[]
  try {
    const res = await fetch('/board/units', { headers: { accept: 'application/json' }, cache: 'no-store' })
    if (!res.ok) return
    units = ((await res.json()) as { data: BoardUnit[] }).data
  } catch {
    return
  }
  const list = document.getElementById('unit-list')
  if (list) {
    list.replaceChildren(...units.map((u) => {
      const li = document.createElement('li')
      li.dataset.unitId = u.id
      li.textContent = `${u.name}: ${u.status.replace('_', ' ')}${u.position ? '' : ' (no position yet)'}`
      return li
    }))
  }
  if (!mapView) return
  for (const u of units) {
    if (u.position) mapView.setPlace({ id: u.id, lat: u.position.lat, lng: u.position.lng, name: u.name })
    else mapView.removePlace(u.id)
  }
}
setInterval(() => { void refreshUnits() }, UNITS_EVERY_MS)

markUnopened()
refreshAges()
setInterval(refreshAges, 30_000)
connect()

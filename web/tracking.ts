/**
 * The tracking page's script. The page works without it (every form posts, a reload shows the
 * latest); this adds:
 * - live updates: the page's stream (`/t/{token}/events`) sends the new state on each change; the
 *   status part is swapped for the server's own markup of it, the truck moved on the map;
 * - the map, loaded only once there is a truck to show (Leaflet is most of the page's weight);
 * - **Share my location**: the phone's position is asked for, then the form is posted with it;
 * - times in the phone's zone, one submission per form at a time;
 * - a link that dies while the page is open (a new link was sent) says so and stops.
 */
import { enhanceForm, focusDone, focusRefusal } from './shared/forms'
import { openLive, type LiveState } from './shared/live'
import type { MapView } from './shared/map-view'

interface TrackingState {
  status: string
  status_label: string
  unit: { name: string } | null
  truck: { lat: number; lng: number; recorded_at: string } | null
  can_share_location: boolean
  rating: { open: boolean; value: number | null }
}
interface StateMessage { state: TrackingState; live_html: string; rating_html: string }

const root = document.getElementById('track')
const TRUCK_EVERY_MS = 15_000

/** The location form: asks the phone for its position, then posts it. */
function enhanceLocate(form: HTMLFormElement): void {
  const alert = form.querySelector<HTMLElement>('[data-form-alert]')
  const say = (words: string) => { if (alert) alert.textContent = words }
  form.addEventListener('submit', (event) => {
    const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement | null
    if (field('lat')?.value) return
    event.preventDefault()
    if (form.getAttribute('aria-busy') === 'true') return
    if (!('geolocation' in navigator)) return say('This phone cannot share its location here. Send a message saying where you are instead.')
    form.setAttribute('aria-busy', 'true')
    say('')
    navigator.geolocation.getCurrentPosition((pos) => {
      field('lat')!.value = String(pos.coords.latitude)
      field('lng')!.value = String(pos.coords.longitude)
      field('accuracy_m')!.value = Number.isFinite(pos.coords.accuracy) ? String(pos.coords.accuracy) : ''
      form.submit()
    }, () => {
      form.removeAttribute('aria-busy')
      say('Your phone did not share its location. Allow location for this page and try again, or send a message saying where you are.')
    }, { enableHighAccuracy: true, timeout: 20_000, maximumAge: 60_000 })
  })
}

/** The truck's map: mounted on first need (its script and style loaded then), hidden when there is no truck to show. */
function truckMap() {
  const section = document.getElementById('truck-map')
  const el = section?.querySelector<HTMLElement>('[data-map]')
  let view: MapView | null = null
  let loading = false
  let wanted: TrackingState | null = null
  const place = () => {
    if (!view || !wanted?.truck) return
    view.setPlace({ id: 'truck', lat: wanted.truck.lat, lng: wanted.truck.lng, name: wanted.unit?.name ?? 'Your truck', at: wanted.truck.recorded_at })
    // Where the truck is drawn, on the map's element (what a test, or a stylesheet, can read).
    if (el) el.dataset.truckAt = `${wanted.truck.lat},${wanted.truck.lng}`
    view.map.invalidateSize()
    view.fit()
  }
  el?.addEventListener('map-mounted', (e) => {
    view = (e as CustomEvent<MapView>).detail
    place()
  })
  const load = () => {
    if (loading || !root?.dataset.mapScript) return
    loading = true
    if (root.dataset.mapStyle) {
      const link = document.createElement('link')
      link.rel = 'stylesheet'
      link.href = root.dataset.mapStyle
      document.head.append(link)
    }
    const script = document.createElement('script')
    script.type = 'module'
    script.src = root.dataset.mapScript
    document.head.append(script)
  }
  // The page was rendered with the truck on it: the map's script mounts it from the server's list.
  if (section && !section.hidden) load()
  return (state: TrackingState) => {
    if (!section) return
    wanted = state
    section.hidden = !state.truck
    if (!state.truck) { view?.removePlace('truck'); return }
    if (view) place()
    else load()
  }
}

/** What the live part says that a customer should hear of when it changes: the notes and the expected time. */
/** The live part's notes, and its expected time: the instant (compared) and its words (said). */
function liveFacts(live: Element): { notes: string[]; expected: string; expectedAt: string } {
  const notes = [...live.querySelectorAll('.notes li > p:first-child')].map((p) => p.textContent?.trim() ?? '')
  const dd = [...live.querySelectorAll('dt')].find((dt) => dt.textContent?.trim() === 'Expected')?.nextElementSibling
  // The same instant shown in another zone (the company changed its own) is no news.
  return { notes: [...new Set(notes)], expected: dd?.textContent?.trim() ?? '', expectedAt: dd?.querySelector('time')?.dateTime ?? '' }
}
function liveNews(before: ReturnType<typeof liveFacts>, after: ReturnType<typeof liveFacts>): string {
  const added = after.notes.filter((n) => !before.notes.includes(n))
  const expected = after.expectedAt === before.expectedAt ? '' : after.expected ? `Expected: ${after.expected}.` : 'No expected time for now.'
  return [added.length ? `New note: ${added.join(' ')}` : '', expected].filter(Boolean).join(' ')
}

if (!focusRefusal()) focusDone()

if (root) {
  const path = root.dataset.path ?? location.pathname
  const live = document.getElementById('track-live')
  const rating = document.getElementById('track-rating')
  const status = document.getElementById('live-status')
  const alert = document.getElementById('track-alert')
  const locate = root.querySelector<HTMLFormElement>('form[data-locate]')
  // Drawn hidden: without this script (or a phone that gives no position) it could only fail.
  if (locate && 'geolocation' in navigator) locate.hidden = false
  for (const form of root.querySelectorAll<HTMLFormElement>('form')) {
    if (form === locate) enhanceLocate(form)
    else enhanceForm(form)
  }
  const showMap = truckMap()
  let shownStatus = root.querySelector('#h-status')?.textContent ?? ''

  // The truck's moves are not job events, so the stream does not carry them: while it is on its
  // way, the page asks for the state every 15 seconds (not while the page is hidden) and moves it.
  const truckComing = (s: string | undefined) => s === 'dispatched' || s === 'en_route'
  let coming = truckComing(root.dataset.status)
  setInterval(() => {
    if (!coming || document.hidden) return
    fetch(`${path}/state`, { headers: { accept: 'application/json' }, cache: 'no-store' })
      .then(async (res) => {
        if (!res.ok) return
        const state = await res.json() as TrackingState
        coming = truckComing(state.status)
        showMap(state)
      })
      .catch(() => {})
  }, TRUCK_EVERY_MS)

  const STATES: Record<LiveState, string> = { connecting: 'Connecting for live updates…', open: 'This page updates itself while it is open.', closed: 'Live updates stopped.' }
  const stream = openLive(`${path}/events?after=${encodeURIComponent(root.dataset.position ?? '0')}`, {
    on: {
      state: (data) => {
        const m = data as StateMessage
        if (!m?.state) return
        let news = ''
        if (live && live.innerHTML !== m.live_html) {
          const before = liveFacts(live)
          live.innerHTML = m.live_html
          news = liveNews(before, liveFacts(live))
        }
        const key = `${m.state.rating.open}:${m.state.rating.value ?? ''}`
        if (rating && rating.dataset.ratingKey !== key) {
          rating.dataset.ratingKey = key
          rating.innerHTML = m.rating_html
          for (const form of rating.querySelectorAll('form')) enhanceForm(form)
        }
        if (locate) locate.hidden = !m.state.can_share_location
        coming = truckComing(m.state.status)
        showMap(m.state)
        const heading = `Status: ${m.state.status_label}`
        // Said once: a new status, a note from the company, a new expected time.
        const words = [heading !== shownStatus ? `${heading}.` : '', news].filter(Boolean).join(' ')
        if (status && words) status.textContent = `Updated. ${words}`
        shownStatus = heading
      },
      gone: (data) => {
        stream.close()
        if (alert) alert.textContent = (data as { message?: string })?.message ?? 'This tracking link no longer works.'
        for (const form of root.querySelectorAll<HTMLFormElement>('form')) form.hidden = true
        if (status) status.textContent = 'Live updates stopped.'
      },
    },
    onState: (s) => {
      if (!status || status.dataset.state === s) return
      status.dataset.state = s
      status.textContent = STATES[s]
    },
  })
}

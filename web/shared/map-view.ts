/**
 * A Leaflet map over the server's list of places (src/pages/map.ts renders it):
 *
 * ```html
 * <div class="map-view" data-map data-tile-url="https://tile.openstreetmap.org/{z}/{x}/{y}.png" data-tile-attribution="...">
 *   <div class="map-canvas"></div>
 *   <ul class="map-places"><li data-place-id="unit_1" data-lat="45.52" data-lng="-122.68">Truck 1</li></ul>
 * </div>
 * ```
 *
 * Each place is a marker whose name is always shown beside it (a permanent tooltip), so the map
 * still says who is where when no tile loads (no network, a tile server down, no tile URL at
 * all: a grey map). The list stays in the page for screen readers and for no-script browsers.
 */
import L from 'leaflet'
import iconUrl from 'leaflet/dist/images/marker-icon.png'
import iconRetinaUrl from 'leaflet/dist/images/marker-icon-2x.png'
import shadowUrl from 'leaflet/dist/images/marker-shadow.png'
import 'leaflet/dist/leaflet.css'

// Leaflet guesses its image folder from its CSS and puts it before every icon URL; the bundled
// images have their own URLs, so no folder at all.
L.Icon.Default.imagePath = ''
L.Icon.Default.mergeOptions({ iconUrl, iconRetinaUrl, shadowUrl })

/** A place on the map; `at`, when known, is the time of the position (ISO 8601). */
export interface Place {
  id: string
  lat: number
  lng: number
  name: string
  at?: string
}

/** A mounted map. */
export interface MapView {
  map: L.Map
  /** Adds a place or moves it (and renames it). */
  setPlace(place: Place): void
  removePlace(id: string): void
  /** Fits the view to every place (a default view when there is none). */
  fit(): void
}

/** Where the map looks when it has no place to show (the whole world, zoomed out). */
const WORLD: L.LatLngExpression = [20, 0]

/** Reads the places the server listed inside the map element. */
export function placesIn(el: HTMLElement): Place[] {
  const places: Place[] = []
  for (const li of el.querySelectorAll<HTMLElement>('[data-place-id]')) {
    const lat = Number(li.dataset.lat)
    const lng = Number(li.dataset.lng)
    if (!li.dataset.placeId || !Number.isFinite(lat) || !Number.isFinite(lng)) continue
    places.push({ id: li.dataset.placeId, lat, lng, name: li.dataset.name ?? li.textContent?.trim() ?? '' })
  }
  return places
}

/** A marker's name as an element: Leaflet would read a string as HTML, and names are typed by people. */
function label(name: string): HTMLElement {
  const span = document.createElement('span')
  span.textContent = name
  return span
}

/** Mounts a Leaflet map on a `[data-map]` element (see the top of this file). */
export function mountMap(el: HTMLElement): MapView {
  const canvas = el.querySelector<HTMLElement>('.map-canvas') ?? el
  const map = L.map(canvas, { zoomControl: true, attributionControl: true })
  const tileUrl = el.dataset.tileUrl
  if (tileUrl) {
    // The attribution is the server's own text (src/pages/map.ts), never anything typed by a user.
    L.tileLayer(tileUrl, { maxZoom: 19, attribution: el.dataset.tileAttribution ?? '' }).addTo(map)
  } else {
    el.classList.add('map-no-tiles')
  }
  const markers = new Map<string, L.Marker>()
  const list = el.querySelector<HTMLElement>('.map-places')
  /** The place's line in the list beside the map (what screen readers and no-script browsers read), kept as the marker is. */
  const listLine = (place: Place) => {
    if (!list) return
    let li = [...list.querySelectorAll<HTMLElement>('[data-place-id]')].find((x) => x.dataset.placeId === place.id)
    if (!li) {
      li = document.createElement('li')
      li.dataset.placeId = place.id
      list.append(li)
    }
    if (li.dataset.lat === String(place.lat) && li.dataset.lng === String(place.lng) && li.dataset.name === place.name) return
    Object.assign(li.dataset, { lat: String(place.lat), lng: String(place.lng), name: place.name })
    const where = document.createElement('span')
    where.className = 'muted'
    const at = place.at ? new Date(place.at) : null
    const time = at && Number.isFinite(at.getTime()) ? `, at ${at.toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit' })}` : ''
    where.textContent = `(${place.lat.toFixed(5)}, ${place.lng.toFixed(5)}${time})`
    li.replaceChildren(`${place.name} `, where)
  }
  const view: MapView = {
    map,
    setPlace(place) {
      listLine(place)
      const at = L.latLng(place.lat, place.lng)
      let marker = markers.get(place.id)
      if (!marker) {
        // Not focusable: the list of places beside the map says the same to keyboards and screen readers.
        marker = L.marker(at, { title: place.name, alt: place.name, keyboard: false }).addTo(map)
        marker.bindTooltip(label(place.name), { permanent: true, direction: 'right', offset: [12, -20], className: 'map-label' })
        markers.set(place.id, marker)
      } else {
        marker.setLatLng(at)
        marker.setTooltipContent(label(place.name))
      }
    },
    removePlace(id) {
      for (const li of list?.querySelectorAll<HTMLElement>('[data-place-id]') ?? []) if (li.dataset.placeId === id) li.remove()
      markers.get(id)?.remove()
      markers.delete(id)
    },
    fit() {
      const all = [...markers.values()].map((m) => m.getLatLng())
      if (all.length === 0) map.setView(WORLD, 2)
      else if (all.length === 1) map.setView(all[0]!, 14)
      else map.fitBounds(L.latLngBounds(all), { padding: [40, 40], maxZoom: 15 })
    },
  }
  for (const place of placesIn(el)) view.setPlace(place)
  view.fit()
  return view
}

/**
 * A map of places (units, a truck, a pickup) as the server renders it: a list of names with
 * their positions, which web/map.ts (or a page script through web/shared/map-view.ts) turns
 * into a Leaflet map whose markers keep their names beside them. With no script the list is
 * the map; with no tiles (TOWLINE_TILE_URL empty, or the tile server out of reach) the map is
 * grey and still shows every marker and name.
 */
import { attrs, html, type Html } from './html'

/** A place to show: its id (to move it later), position and name. */
export interface MapPlace {
  id: string
  lat: number
  lng: number
  name: string
}

/** What OpenStreetMap's tile usage policy asks every map using its tiles to show. */
const OSM_ATTRIBUTION = '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors'

/** The attribution a tile server needs (HTML, written by us): OpenStreetMap's for its servers, none known for others. */
function attributionOf(tileUrl: string | null): string | undefined {
  if (!tileUrl) return undefined
  return /^https?:\/\/([a-z{}]+\.)*openstreetmap\.org\//.test(tileUrl) ? OSM_ATTRIBUTION : undefined
}

/**
 * Renders a map: `label` names it for screen readers (the map region and the list), `tileUrl`
 * is the setting (`deps.config.tileUrl`), `places` the markers. Include the `map.js` script.
 */
export function mapView(opts: { label: string; tileUrl: string | null; places: MapPlace[] }): Html {
  const places = opts.places.map((p) => html`<li${attrs({ 'data-place-id': p.id, 'data-lat': p.lat, 'data-lng': p.lng, 'data-name': p.name })}>${p.name} <span class="muted">(${p.lat.toFixed(5)}, ${p.lng.toFixed(5)})</span></li>`)
  return html`<div${attrs({ class: 'map-view', 'data-map': true, 'data-tile-url': opts.tileUrl ?? '', 'data-tile-attribution': attributionOf(opts.tileUrl) })}>
<div class="map-canvas" role="region" aria-label="${opts.label}"></div>
<ul class="map-places" aria-label="${opts.label}: places">${places}</ul>
</div>`
}

/**
 * Entry of pages with a map: mounts a Leaflet map on every `[data-map]` element the server
 * rendered (src/pages/map.ts). A page script that moves markers live imports mountMap from
 * ./shared/map-view instead of loading this entry.
 */
import { mountMap } from './shared/map-view'

// A page that moves markers itself (the tracking page, which loads this script only when it has a
// truck to show) takes the mounted map from this event.
for (const el of document.querySelectorAll<HTMLElement>('[data-map]')) el.dispatchEvent(new CustomEvent('map-mounted', { detail: mountMap(el), bubbles: true }))

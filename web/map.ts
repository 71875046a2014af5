/**
 * Entry of pages with a map: mounts a Leaflet map on every `[data-map]` element the server
 * rendered (src/pages/map.ts). A page script that moves markers live imports mountMap from
 * ./shared/map-view instead of loading this entry.
 */
import { mountMap } from './shared/map-view'

for (const el of document.querySelectorAll<HTMLElement>('[data-map]')) mountMap(el)

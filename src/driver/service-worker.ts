import { DRIVER_CACHE } from '../../web/shared/driver-cache'

/**
 * The driver's page's service worker, served at `/d/sw.js` (scope `/d/`), so a reload in a
 * dead zone still shows the job: each driver page and its state are fetched from the network
 * first and kept (by path, the last known job), and answered from the cache when the network
 * fails; the page's hashed assets are kept once fetched. A link the server says is gone (410)
 * is dropped from the cache. Writes (POST) are never touched: the page's own queue keeps them.
 * The visit that installs it is not its own: the page keeps what that visit loaded (web/driver.ts).
 * Plain JavaScript: the browser runs it as it is.
 */
export const DRIVER_SERVICE_WORKER = `'use strict'
const CACHE = ${JSON.stringify(DRIVER_CACHE)}
const PAGE = /^\\/d\\/[0-9A-Za-z]{24}(\\/state)?$/
self.addEventListener('install', () => self.skipWaiting())
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()))
self.addEventListener('fetch', (e) => {
  const req = e.request
  if (req.method !== 'GET') return
  const url = new URL(req.url)
  if (url.origin !== self.location.origin) return
  if (url.pathname.startsWith('/assets/')) {
    e.respondWith(caches.open(CACHE).then(async (cache) => {
      const hit = await cache.match(url.pathname)
      if (hit) return hit
      const res = await fetch(req)
      if (res.ok) await cache.put(url.pathname, res.clone())
      return res
    }))
    return
  }
  if (!PAGE.test(url.pathname)) return
  e.respondWith(caches.open(CACHE).then(async (cache) => {
    try {
      const res = await fetch(req)
      if (res.ok) await cache.put(url.pathname, res.clone())
      else if (res.status === 410 || res.status === 404) {
        const page = url.pathname.replace(/\\/state$/, '')
        await cache.delete(page)
        await cache.delete(page + '/state')
      }
      return res
    } catch (err) {
      const hit = await cache.match(url.pathname)
      if (hit) return hit
      throw err
    }
  }))
})
`

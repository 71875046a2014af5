/** The cache the driver's page and its service worker (src/driver/service-worker.ts) keep the page, its state and assets in. */
export const DRIVER_CACHE = 'towline-driver-v1'

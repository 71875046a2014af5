import pkg from '../package.json'

/** The towline version (from package.json, embedded at build time). */
export const VERSION: string = pkg.version
/** The API version named in every webhook payload. */
export const API_VERSION = '2026-09-01'

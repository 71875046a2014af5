import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'

/** A content coding this server can send. */
export type Coding = 'br' | 'gzip'

/**
 * Picks the coding to send for an Accept-Encoding header: the one with the highest q (br on a
 * tie, it is smaller), or null for identity (no header, or neither coding acceptable).
 */
export function pickCoding(acceptEncoding: string | null): Coding | null {
  if (!acceptEncoding) return null
  const q: Record<string, number> = {}
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.toLowerCase().split(';')
    const name = rawName?.trim()
    if (!name) continue
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const value = qParam ? Number(qParam.slice(2)) : 1
    q[name] = Number.isFinite(value) ? value : 0
  }
  const of = (c: Coding) => q[c] ?? q['*'] ?? 0
  const best = of('br') >= of('gzip') ? 'br' : 'gzip'
  return of(best) > 0 ? best : null
}

const brotli = promisify(brotliCompress)
const gz = promisify(gzip)
const ENCODE: Record<Coding, (bytes: Uint8Array<ArrayBuffer>) => Promise<Uint8Array<ArrayBuffer>>> = {
  // Quality 6: ~160 ms for the 4.3 MB docs script, 4x smaller; 11 would take seconds of a core.
  br: (bytes) => brotli(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
  gzip: (bytes) => gz(bytes, { level: 9 }),
}

/**
 * Compresses a file once per coding, on the first request that wants it (off the event loop,
 * so neither start-up nor other requests wait), and keeps the result in memory.
 */
export function compressedOnce(read: () => Promise<Uint8Array<ArrayBuffer>>): (coding: Coding) => Promise<Uint8Array<ArrayBuffer>> {
  const done = new Map<Coding, Promise<Uint8Array<ArrayBuffer>>>()
  return (coding) => {
    let p = done.get(coding)
    if (!p) {
      p = read().then(ENCODE[coding])
      // A failure is not cached: the next request tries again (and is served identity meanwhile).
      p.catch(() => done.delete(coding))
      done.set(coding, p)
    }
    return p
  }
}

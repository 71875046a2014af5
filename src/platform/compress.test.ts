import { describe, expect, test } from 'bun:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { compressedOnce, pickCoding } from './compress'
import { startTestApi } from '../../test/kit'

describe('pickCoding', () => {
  test('prefers brotli, honours q-values and *, and falls back to identity', () => {
    expect(pickCoding(null)).toBeNull()
    expect(pickCoding('')).toBeNull()
    expect(pickCoding('identity')).toBeNull()
    expect(pickCoding('gzip, deflate, br, zstd')).toBe('br')
    expect(pickCoding('gzip')).toBe('gzip')
    expect(pickCoding('br;q=0.5, gzip;q=0.8')).toBe('gzip')
    expect(pickCoding('br ; q=0, gzip')).toBe('gzip')
    expect(pickCoding('gzip;q=0, br;q=0')).toBeNull()
    expect(pickCoding('*')).toBe('br')
    expect(pickCoding('*;q=0, gzip')).toBe('gzip')
    expect(pickCoding('deflate')).toBeNull()
    expect(pickCoding('gzip;q=nonsense')).toBeNull()
  })
})

describe('compressedOnce', () => {
  test('reads and compresses once per coding; the bytes decompress to the original', async () => {
    const original = new TextEncoder().encode('towline '.repeat(10_000))
    let reads = 0
    const get = compressedOnce(async () => { reads++; return original })
    const [a, b] = await Promise.all([get('gzip'), get('gzip')])
    expect(a).toBe(b)
    expect(Buffer.from(gunzipSync(a)).equals(Buffer.from(original))).toBe(true)
    expect(Buffer.from(brotliDecompressSync(await get('br'))).equals(Buffer.from(original))).toBe(true)
    await get('br')
    expect(reads).toBe(2)
  })
})

describe('GET /api/v1/docs/scalar.js', () => {
  test('is brotli, gzip or identity as the client accepts, always the same script and varying on Accept-Encoding', async () => {
    const api = startTestApi()
    try {
      const identity = await api.request('GET', '/api/v1/docs/scalar.js')
      expect(identity.headers.get('content-encoding')).toBeNull()
      expect(identity.headers.get('vary')).toBe('accept-encoding')
      const original = Buffer.from(await identity.arrayBuffer())
      expect(original.length).toBeGreaterThan(1_000_000)
      const br = await api.request('GET', '/api/v1/docs/scalar.js', { headers: { 'accept-encoding': 'gzip, deflate, br' } })
      expect(br.headers.get('content-encoding')).toBe('br')
      expect(Buffer.from(brotliDecompressSync(Buffer.from(await br.arrayBuffer()))).equals(original)).toBe(true)
      const gz = await api.request('GET', '/api/v1/docs/scalar.js', { headers: { 'accept-encoding': 'gzip' } })
      expect(gz.headers.get('content-encoding')).toBe('gzip')
      expect(gz.headers.get('vary')).toBe('accept-encoding')
      expect(Buffer.from(gunzipSync(Buffer.from(await gz.arrayBuffer()))).equals(original)).toBe(true)
    } finally {
      api.close()
    }
  })
})

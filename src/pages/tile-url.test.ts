/**
 * TOWLINE_TILE_URL: where the pages' maps load tiles from, and so the one other origin a page's
 * Content-Security-Policy lets images come from. No request leaves the test: only headers are read.
 */
import { describe, expect, test } from 'bun:test'
import { startTestApi } from '../../test/kit'
import { pageFixtures } from '../../test/page-fixtures'
import { ConfigError, readConfig } from '../config'

/** The img-src directive of a page's policy, under the given settings. */
async function imgSrcOf(env: Record<string, string>): Promise<string | undefined> {
  const api = startTestApi(env, { pages: [pageFixtures()] })
  try {
    const res = await api.request('GET', '/fixture/page')
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    return res.headers.get('content-security-policy')!.split('; ').find((d) => d.startsWith('img-src '))
  } finally {
    api.close()
  }
}

describe('the page policy follows TOWLINE_TILE_URL', () => {
  test('by default, images may come from OpenStreetMap\'s tile server', async () => {
    expect(await imgSrcOf({})).toBe("img-src 'self' data: blob: https://tile.openstreetmap.org")
  })

  test('another tile server: its origin (port included) replaces OpenStreetMap\'s', async () => {
    expect(await imgSrcOf({ TOWLINE_TILE_URL: 'https://maps.example.net:8443/styles/{z}/{x}/{y}.png?key=abc' })).toBe("img-src 'self' data: blob: https://maps.example.net:8443")
  })

  test('a {s} subdomain becomes a wildcard for that label only', async () => {
    expect(await imgSrcOf({ TOWLINE_TILE_URL: 'https://{s}.tiles.example.net/{z}/{x}/{y}{r}.png' })).toBe("img-src 'self' data: blob: https://*.tiles.example.net")
  })

  test('empty: no tiles, so no other origin at all', async () => {
    expect(await imgSrcOf({ TOWLINE_TILE_URL: '' })).toBe("img-src 'self' data: blob:")
  })
})

describe('TOWLINE_TILE_URL is checked at start-up', () => {
  test('is read into the settings: default, given, empty', () => {
    expect(readConfig({}).tileUrl).toBe('https://tile.openstreetmap.org/{z}/{x}/{y}.png')
    expect(readConfig({ TOWLINE_TILE_URL: 'http://tiles.lan:8080/{z}/{x}/{y}.png' }).tileUrl).toBe('http://tiles.lan:8080/{z}/{x}/{y}.png')
    expect(readConfig({ TOWLINE_TILE_URL: '' }).tileUrl).toBeNull()
  })

  test.each([
    ['not a URL', 'tiles/{z}/{x}/{y}.png', /not an absolute http or https URL/],
    ['another scheme', 'ftp://tiles.example.net/{z}/{x}/{y}.png', /not an absolute http or https URL/],
    ['no {z}/{x}/{y}', 'https://tiles.example.net/tile.png', /\{z\}, \{x\} and \{y\}/],
    ['{s} inside a label', 'https://tiles{s}.example.net/{z}/{x}/{y}.png', /\{s\}/],
    ['{s} in the path', 'https://tiles.example.net/{s}/{z}/{x}/{y}.png', /\{s\}/],
  ])('refuses %s', (_what, value, message) => {
    expect(() => readConfig({ TOWLINE_TILE_URL: value })).toThrow(ConfigError)
    expect(() => readConfig({ TOWLINE_TILE_URL: value })).toThrow(message)
  })
})

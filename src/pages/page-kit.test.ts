/**
 * The page kit through HTTP (in process, the fixture page of test/pages/kit-fixture.ts): what is
 * typed never becomes markup, the frame and forms are what pages.md asks of every page, and the
 * built browser files are served under content-hashed names, cached for good and compressed
 * to exactly their own bytes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { startTestApi, type TestApi } from '../../test/kit'
import { HOSTILE, pageKitFixture } from '../../test/pages/kit-fixture'
import { assetUrl, listPageAssets, loadPageAssets } from './assets'
import { attrs, html, raw } from './html'
import { layout } from './layout'

const ORIGIN = 'http://towline.test'
let api: TestApi

beforeAll(async () => {
  api = startTestApi({}, { pages: [pageKitFixture({ tileUrl: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png' })] })
  await loadPageAssets()
})
afterAll(() => api?.close())

/** Undoes the five escapes of escapeHtml, to read an attribute value back as a browser would. */
const unescape = (s: string) => s.replace(/&(lt|gt|quot|#39|amp);/g, (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e]!)

/** What a browser's parser would find in a page: elements by selector, attribute values decoded. */
async function parse(page: string, selectors: Record<string, string>) {
  const found: Record<string, { attrs: Record<string, string>; text: string }[]> = {}
  let rewriter = new HTMLRewriter()
  for (const [key, selector] of Object.entries(selectors)) {
    found[key] = []
    rewriter = rewriter.on(selector, {
      element(el) {
        const item = { attrs: Object.fromEntries([...el.attributes].map(([k, v]) => [k, unescape(v)])), text: '' }
        found[key]!.push(item)
      },
      text(t) { const list = found[key]!; if (list.length) list[list.length - 1]!.text += t.text },
    })
  }
  await rewriter.transform(new Response(page)).text()
  for (const list of Object.values(found)) for (const item of list) item.text = unescape(item.text)
  return found
}

const getPage = async (path: string) => {
  const res = await api.request('GET', path)
  expect(res.status).toBe(200)
  return res.text()
}

describe('html escapes every value', () => {
  test('in text and in quoted attributes; Html from html, raw and attrs goes in as it is; arrays item by item; null, undefined and false add nothing', () => {
    const value = `<script>alert("x")</script> & 'quotes'`
    expect(html`<p title="${value}">${value}</p>`.text).toBe(`<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</p>`)
    expect(html`<ul>${['<a>', html`<li>${'<b>'}</li>`, raw('<hr>'), null, undefined, false, 0]}</ul>`.text).toBe('<ul>&lt;a&gt;<li>&lt;b&gt;</li><hr>0</ul>')
    expect(html`<input${attrs({ value: '" onfocus="x', required: true, checked: false, 'aria-invalid': undefined, maxlength: 5 })}>`.text).toBe('<input value="&quot; onfocus=&quot;x" required maxlength="5">')
  })

  test('an unquoted attribute value or a bad attribute name throws instead of rendering something unsafe', () => {
    expect(() => html`<a href=${'x onclick=alert(1)'}>`).toThrow(/quote the attribute value/)
    expect(() => attrs({ 'onclick="x" a': 'y' })).toThrow(/not an attribute name/)
    // Text that happens to hold "=" is not an attribute.
    expect(html`<p>Total = ${'5'}</p>`.text).toBe('<p>Total = 5</p>')
  })

  test('a hostile value in the query reaches the page as text only: in the title, text, attributes, field values, options, a textarea and a map marker', async () => {
    const page = await getPage(`/kit/page?name=${encodeURIComponent(HOSTILE)}`)
    const found = await parse(page, {
      injected: '[data-injected]', inlineScripts: 'script:not([src])', title: 'title', echo: '[data-echo]',
      nameInput: '#f-customer-name', option: 'option[value="unit_kit_2"]', note: 'textarea', place: '[data-place-id="unit_kit_2"]',
    })
    expect(found.injected).toEqual([])
    expect(found.inlineScripts).toEqual([])
    expect(page).not.toContain('<b data-injected')
    expect(found.title![0]!.text).toBe(`Kit for ${HOSTILE} · Towline`)
    expect(found.echo![0]!.attrs).toMatchObject({ 'data-echo': HOSTILE, title: HOSTILE })
    expect(found.echo![0]!.text).toBe(HOSTILE)
    expect(found.nameInput![0]!.attrs.value).toBe(HOSTILE)
    expect(found.option![0]!.text).toBe(HOSTILE)
    expect(found.note![0]!.text).toBe(HOSTILE)
    expect(found.place![0]!.attrs['data-name']).toBe(HOSTILE)
  })
})

describe('layout', () => {
  beforeAll(() => loadPageAssets())
  const render = (opts: Partial<Parameters<typeof layout>[0]>) => layout({ title: 'Board', body: html`<h1>Board</h1>`, ...opts }).text

  test('a complete document: language, viewport, title, the stylesheet, a skip link to the one <main>', async () => {
    const page = render({})
    expect(page).toStartWith('<!doctype html>\n<html lang="en">')
    const found = await parse(page, { viewport: 'meta[name="viewport"]', title: 'title', css: 'link[rel="stylesheet"]', skip: 'a.skip-link', main: 'main' })
    expect(found.viewport![0]!.attrs.content).toBe('width=device-width, initial-scale=1')
    expect(found.title![0]!.text).toBe('Board · Towline')
    expect(found.css!.map((l) => l.attrs.href)).toEqual([assetUrl('styles.css')])
    expect(found.skip![0]!.attrs.href).toBe('#main')
    expect(found.main!.map((m) => m.attrs.id)).toEqual(['main'])
  })

  test('an owner\'s dashboard: Board, Jobs, Accounts, Import, Developers, Settings, the current one marked, and Sign out posting to /logout', async () => {
    const found = await parse(render({ user: { email: 'ann@example.com', role: 'owner' }, active: 'jobs' }), { links: 'nav a', current: 'nav [aria-current="page"]', signOut: 'form[method="post"][action="/logout"] button[type="submit"]' })
    expect(found.links!.map((a) => [a.text, a.attrs.href])).toEqual([['Board', '/board'], ['Jobs', '/jobs'], ['Accounts', '/accounts'], ['Import', '/import'], ['Developers', '/developers'], ['Settings', '/settings']])
    expect(found.current!.map((a) => a.text)).toEqual(['Jobs'])
    expect(found.signOut!.map((b) => b.text)).toEqual(['Sign out'])
  })

  test('a dispatcher sees no Developers or Settings; the plain shell (no user) has no navigation and no Sign out', async () => {
    const dispatcher = await parse(render({ user: { email: 'bo@example.com', role: 'dispatcher' } }), { links: 'nav a' })
    expect(dispatcher.links!.map((a) => a.text)).toEqual(['Board', 'Jobs', 'Accounts', 'Import'])
    const plain = await parse(render({}), { nav: 'nav', forms: 'form' })
    expect({ nav: plain.nav!.length, forms: plain.forms!.length }).toEqual({ nav: 0, forms: 0 })
  })

  test('scripts are modules by hashed URL, and a script that imports CSS (the map) brings its stylesheet', async () => {
    const found = await parse(render({ scripts: ['dashboard.js', 'map.js'] }), { scripts: 'script', css: 'link[rel="stylesheet"]' })
    expect(found.scripts!.map((s) => [s.attrs.type, s.attrs.src])).toEqual([['module', assetUrl('dashboard.js')], ['module', assetUrl('map.js')]])
    expect(found.css!.map((l) => l.attrs.href)).toEqual([assetUrl('styles.css'), assetUrl('map.css')])
    expect(() => render({ scripts: ['nope.js'] })).toThrow(/no page asset named nope\.js/)
  })
})

describe('forms after a refusal', () => {
  const post = (fields: Record<string, string>) => api.raw(new Request(`${ORIGIN}/kit/form`, {
    method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
  }))

  test('each message beside its field (aria-invalid, aria-describedby), the summary in role="alert", and everything typed kept', async () => {
    const res = await post({ 'customer.name': '  ', 'customer.phone': 'call me <maybe>', sms_consent: 'on', unit_id: 'unit_kit_2', note: 'Blue <Civic>' })
    expect(res.status).toBe(422)
    const found = await parse(await res.text(), {
      alert: 'form [role="alert"]', name: '#f-customer-name', phone: '#f-customer-phone', nameError: '#f-customer-name-error',
      phoneError: '#f-customer-phone-error', consent: '#f-sms_consent', chosen: 'option[selected]', note: 'textarea', labels: 'form label', marks: 'form .required',
    })
    expect(found.alert!.map((a) => a.text)).toEqual(['Some fields need attention; each says why beside it.'])
    expect(found.name![0]!.attrs).toMatchObject({ 'aria-invalid': 'true', 'aria-describedby': 'f-customer-name-error', value: '  ', required: '' })
    expect(found.phone![0]!.attrs).toMatchObject({ 'aria-invalid': 'true', 'aria-describedby': 'f-customer-phone-hint f-customer-phone-error', value: 'call me <maybe>', type: 'tel' })
    expect(found.nameError![0]!.text).toBe('Enter the customer\'s name.')
    expect(found.phoneError![0]!.text).toBe('Enter a phone number like +1 503 555 0100.')
    expect(found.consent![0]!.attrs.checked).toBe('')
    expect(found.chosen!.map((o) => o.attrs.value)).toEqual(['unit_kit_2'])
    expect(found.note![0]!.text).toBe('Blue <Civic>')
    // Labels are exactly the caller's words; the required mark follows, hidden from screen readers.
    expect(found.labels!.map((l) => [l.attrs.for, l.text])).toEqual([
      ['f-customer-name', 'Customer name'], ['f-customer-phone', 'Phone'], ['f-sms_consent', 'Texts allowed'], ['f-unit_id', 'Unit'], ['f-note', 'Note'],
    ])
    expect(found.marks!.map((m) => [m.attrs['aria-hidden'], m.text])).toEqual([['true', ' *']])
  })

  test('a form that passes goes on (303); the fields with no problem carry no message', async () => {
    const res = await post({ 'customer.name': 'Ann Lee', 'customer.phone': '+1 503 555 0100' })
    expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 303, location: '/kit/page?saved=1' })
    const found = await parse(await getPage('/kit/page'), { invalid: '[aria-invalid]', alert: '[role="alert"]' })
    expect(found.invalid).toEqual([])
    expect(found.alert!.map((a) => a.text)).toEqual([''])
  })
})

describe('built browser files', () => {
  test('the page links them by content-hashed names under /assets/', async () => {
    const found = await parse(await getPage('/kit/page'), { scripts: 'script[src]', css: 'link[rel="stylesheet"]' })
    const urls = [...found.scripts!.map((s) => s.attrs.src!), ...found.css!.map((l) => l.attrs.href!)]
    expect(urls.map((u) => u.replace(/\.[a-z0-9]{8}\./, '.<hash>.'))).toEqual(['/assets/dashboard.<hash>.js', '/assets/map.<hash>.js', '/assets/styles.<hash>.css', '/assets/map.<hash>.css'])
    expect(listPageAssets().map((a) => a.name)).toEqual(expect.arrayContaining(['dashboard.js', 'map.css', 'map.js', 'marker-icon-2x.png', 'marker-icon.png', 'marker-shadow.png', 'styles.css']))
  })

  test('each is served with its type and cached for a year as immutable', async () => {
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' }
    for (const asset of listPageAssets()) {
      const res = await api.request('GET', asset.url)
      const bytes = new Uint8Array(await res.arrayBuffer())
      expect({ url: asset.url, status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), nosniff: res.headers.get('x-content-type-options') })
        .toEqual({ url: asset.url, status: 200, type: types[asset.url.split('.').pop()!]!, cache: 'public, max-age=31536000, immutable', nosniff: 'nosniff' })
      expect(bytes.byteLength).toBeGreaterThan(0)
    }
  })

  test('scripts and styles travel as brotli or gzip when accepted, each decompressing to exactly the plain bytes; images as they are', async () => {
    for (const asset of listPageAssets()) {
      const plain = new Uint8Array(await (await api.request('GET', asset.url)).arrayBuffer())
      for (const coding of ['br', 'gzip'] as const) {
        const res = await api.request('GET', asset.url, { headers: { 'accept-encoding': coding } })
        const got = new Uint8Array(await res.arrayBuffer())
        if (asset.contentType.startsWith('image/png')) {
          expect({ url: asset.url, encoding: res.headers.get('content-encoding') }).toEqual({ url: asset.url, encoding: null })
          expect(got).toEqual(plain)
          continue
        }
        expect({ url: asset.url, encoding: res.headers.get('content-encoding'), vary: res.headers.get('vary') }).toEqual({ url: asset.url, encoding: coding, vary: 'accept-encoding' })
        expect(got.byteLength).toBeLessThan(plain.byteLength)
        expect(new Uint8Array(coding === 'br' ? brotliDecompressSync(got) : gunzipSync(got))).toEqual(plain)
      }
    }
  })

  test('the map script names its marker images by their hashed URLs, which are served', async () => {
    const script = await (await api.request('GET', assetUrl('map.js'))).text()
    const images = [...script.matchAll(/\/assets\/marker-[a-z0-9-]+\.[a-z0-9]{8}\.png/g)].map((m) => m[0])
    expect(new Set(images)).toEqual(new Set(['marker-icon.png', 'marker-icon-2x.png', 'marker-shadow.png'].map(assetUrl)))
  })

  test('anything else under /assets/ is 404: a logical name, a wrong hash, a path outside, no name', async () => {
    const hashed = assetUrl('dashboard.js')
    for (const path of ['/assets/dashboard.js', hashed.replace(/\.[a-z0-9]{8}\.js$/, '.00000000.js'), `${hashed}.map`, '/assets/..%2Fpackage.json', '/assets/%2e%2e/src/main.ts', '/assets/']) {
      const res = await api.request('GET', path)
      expect({ path, status: res.status, cache: res.headers.get('cache-control') }).toEqual({ path, status: 404, cache: 'no-store' })
    }
  })
})

describe('the stylesheet', () => {
  // A rule left open (a lost "}", as a bad merge leaves) silently swallows every rule after it:
  // the build and the browser both accept it.
  test('every block it opens is closed, outside comments and strings', async () => {
    const css = (await Bun.file(new URL('../../web/styles.css', import.meta.url)).text()).replace(/\/\*[\s\S]*?\*\//g, '').replace(/'[^']*'|"[^"]*"/g, '')
    let depth = 0
    css.split('\n').forEach((line, i) => {
      for (const ch of line) depth += ch === '{' ? 1 : ch === '}' ? -1 : 0
      if (depth < 0) throw new Error(`web/styles.css line ${i + 1} closes a block that was not opened`)
      // Only @media and @supports nest rules here: a selector's block never holds another.
      if (depth > 2) throw new Error(`web/styles.css line ${i + 1} opens a block inside a rule: a "}" is missing above`)
    })
    expect(depth).toBe(0)
  })
})

/**
 * The pages' browser files (web/: scripts, the stylesheet, the map's CSS and marker images),
 * served from this server under content-hashed names and cached by browsers for good.
 *
 * - `assetUrl('dashboard.js')` gives the URL a page links to (`/assets/dashboard.3f2a1c9b.js`);
 *   a new build changes the name, so a cached copy is never stale.
 * - In the compiled binary the files were built by `npm run build` and embedded beside a
 *   manifest (scripts/build.ts). Run from source (`npm start`, tests, bunx) they are built in
 *   memory once per process, off the main thread; `createHandler` holds requests until that is
 *   done, so a page handler can always call `assetUrl`.
 * - `assetRoutes()` serves `/assets/<hashed name>` with `Cache-Control: public, max-age=31536000,
 *   immutable`, brotli or gzip when accepted (each compressed once, on first demand); any other
 *   name under /assets/ is 404.
 */
import { Elysia } from 'elysia'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { compressedOnce, pickCoding, type Coding } from '../platform/compress'
import { AppError } from '../platform/errors'
import { ASSET_PREFIX, buildWebAssets, contentTypeOf, type BuiltFile } from './web-build'
import { COMPILED } from '../platform/compiled'

/** The folder name the build embeds the files under (`--asset <dir>/web` keeps the last part). */
export const EMBEDDED_FOLDER = 'web'
/** The file in that folder mapping logical names to hashed ones. */
export const MANIFEST_FILE = 'manifest.json'


/** A served file. */
interface Asset {
  name: string
  file: string
  url: string
  contentType: string
  read(): Promise<Uint8Array<ArrayBuffer>>
  /** Present for text files (scripts, styles, SVG): their br and gzip bytes, each made once. */
  compressed?: (coding: Coding) => Promise<Uint8Array<ArrayBuffer>>
}

const COMPRESSIBLE = /^(text\/|image\/svg\+xml)/
let byName: Map<string, Asset> | undefined
let byFile: Map<string, Asset> | undefined
let loading: Promise<void> | undefined
let inlineCss: { css: string; source: string } | undefined

/** Makes the served record of a file whose bytes `read` gives. */
function assetOf(name: string, file: string, read: () => Promise<Uint8Array<ArrayBuffer>>): Asset {
  let bytes: Promise<Uint8Array<ArrayBuffer>> | undefined
  const once = () => (bytes ??= read())
  const contentType = contentTypeOf(file)
  return { name, file, url: ASSET_PREFIX + file, contentType, read: once, compressed: COMPRESSIBLE.test(contentType) ? compressedOnce(once) : undefined }
}

/** Reads the manifest the build embedded; the files themselves are read on first request. */
function embeddedAssets(): Asset[] {
  const dir = join(import.meta.dir, EMBEDDED_FOLDER)
  let manifest: Record<string, string>
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8'))
  } catch (err) {
    throw new Error(`this binary holds no page assets (${(err as Error).message}); build it with npm run build`)
  }
  return Object.entries(manifest).map(([name, file]) => assetOf(name, file, async () => new Uint8Array(await Bun.file(join(dir, file)).arrayBuffer())))
}

/** Turns in-memory build output into served records. */
function builtAssets(files: BuiltFile[]): Asset[] {
  return files.map((f) => assetOf(f.name, f.file, async () => f.bytes))
}

/**
 * Loads the page assets once per process: the embedded manifest in the binary, an in-memory
 * build of web/ from source. Resolves when `assetUrl` can answer; rejects when web/ does not build.
 */
export function loadPageAssets(): Promise<void> {
  loading ??= (async () => {
    const assets = COMPILED ? embeddedAssets() : builtAssets(await buildWebAssets())
    byName = new Map(assets.map((a) => [a.name, a]))
    byFile = new Map(assets.map((a) => [a.file, a]))
    const css = byName.get('styles.css')
    if (css) {
      const text = new TextDecoder().decode(await css.read())
      if (/<\/style/i.test(text)) throw new Error('styles.css holds "</style": it cannot be inlined')
      inlineCss = { css: text, source: `'sha256-${new Bun.CryptoHasher('sha256').update(text).digest('base64')}'` }
    }
  })()
  return loading
}

/** The URL of a built file by its logical name (`dashboard.js`, `map.css`, `styles.css`); throws for a name that was not built. */
export function assetUrl(name: string): string {
  if (!byName) throw new Error('the page assets are not loaded yet: await loadPageAssets() first (createHandler does)')
  const asset = byName.get(name)
  if (!asset) throw new Error(`there is no page asset named ${name} (built: ${[...byName.keys()].join(', ')})`)
  return asset.url
}

/**
 * The stylesheet as a page inlines it (the phone pages: one round trip less before the first
 * paint on a slow network) and the CSP source that allows exactly it (`'sha256-…'`).
 */
export function inlineStylesheet(): { css: string; source: string } {
  if (!inlineCss) throw new Error('the page assets are not loaded yet: await loadPageAssets() first (createHandler does)')
  return inlineCss
}

/** Tells whether a built file has this logical name (a script's stylesheet, `map.css`, exists only if it imports CSS). */
export function hasAsset(name: string): boolean {
  return byName?.has(name) ?? false
}

/** Every built file: logical name, URL and Content-Type (for tests and the size report). */
export function listPageAssets(): { name: string; url: string; contentType: string }[] {
  return [...(byName?.values() ?? [])].map(({ name, url, contentType }) => ({ name, url, contentType }))
}

const IMMUTABLE = 'public, max-age=31536000, immutable'

/** Answers a request for one built file, compressed when the client accepts it and the file is text. */
async function serveAsset(asset: Asset, acceptEncoding: string | null): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': asset.contentType, 'cache-control': IMMUTABLE }
  if (asset.compressed) {
    headers.vary = 'accept-encoding'
    const coding = pickCoding(acceptEncoding)
    if (coding) {
      try {
        return new Response(await asset.compressed(coding), { headers: { ...headers, 'content-encoding': coding } })
      } catch { /* fall through: the plain bytes always work */ }
    }
  }
  return new Response(await asset.read(), { headers })
}

/** The route serving `/assets/<hashed name>` (see the top of this file). */
export function assetRoutes() {
  return new Elysia({ name: 'towline.assets' })
    .get(`${ASSET_PREFIX}:file`, async ({ params, request }) => {
      await loadPageAssets()
      const asset = byFile!.get(params.file)
      if (!asset) throw new AppError('not_found', 'There is no such file here.', { path: `${ASSET_PREFIX}${params.file}` })
      return serveAsset(asset, request.headers.get('accept-encoding'))
    })
}

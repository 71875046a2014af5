/**
 * Builds the browser code in web/ (scripts, the stylesheet, Leaflet's CSS and marker images)
 * with Bun.build: minified, one self-contained bundle per entry, every file named by its content
 * hash (`dashboard.3f2a1c9b.js`) so it can be cached for good. `npm run build` writes the result
 * beside the binary's other assets (scripts/build.ts); run from source, the server builds it in
 * memory at start (assets.ts).
 */
import { basename, join } from 'node:path'

/** The entry points, relative to web/: each becomes `<name>.<hash>.js` (or `.css`). */
export const WEB_ENTRIES = ['dashboard.ts', 'board.ts', 'job.ts', 'map.ts', 'driver.ts', 'tracking.ts', 'sign-in.ts', 'styles.css'] as const

/** Where the browser code is when running from source (or from the npm package). */
export const WEB_DIR = join(import.meta.dir, '..', '..', 'web')

/** URL path the built files are served under (assets.ts). */
export const ASSET_PREFIX = '/assets/'

/** One built file: its logical name (`dashboard.js`), its hashed file name, type and bytes. */
export interface BuiltFile {
  name: string
  file: string
  contentType: string
  bytes: Uint8Array<ArrayBuffer>
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  png: 'image/png',
  svg: 'image/svg+xml',
  woff2: 'font/woff2',
}

/** The Content-Type a built file is served with, by its extension. */
export function contentTypeOf(file: string): string {
  return TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream'
}

/** Builds web/ in memory; throws with Bun's messages when it does not build. */
export async function buildWebAssets(): Promise<BuiltFile[]> {
  const result = await Bun.build({
    entrypoints: WEB_ENTRIES.map((e) => join(WEB_DIR, e)),
    target: 'browser',
    format: 'esm',
    minify: true,
    splitting: false,
    // Marker images imported by the map script are separate hashed files, fetched from here.
    publicPath: ASSET_PREFIX,
    naming: { entry: '[name].[hash].[ext]', chunk: '[name].[hash].[ext]', asset: '[name].[hash].[ext]' },
    throw: false,
  })
  if (!result.success) {
    throw new Error(`building the pages' browser code (web/) failed:\n${result.logs.map((l) => String(l)).join('\n')}`)
  }
  const files: BuiltFile[] = []
  for (const out of result.outputs) {
    const file = basename(out.path)
    const name = out.hash ? file.replace(`.${out.hash}.`, '.') : file
    if (files.some((f) => f.name === name)) throw new Error(`web/: two built files are both named ${name}; rename one entry or image`)
    files.push({ name, file, contentType: contentTypeOf(file), bytes: new Uint8Array(await out.arrayBuffer()) })
  }
  return files
}

/**
 * The "pages" section: what the page kit costs. Bytes of each built browser file as the binary
 * serves it (plain, gzip, brotli), what a dashboard page and a page with a map load, the time of
 * the in-memory build of web/, and start-up from source (`bun src/main.ts serve`, which builds
 * web/ in memory while the database opens) beside the binary's, to /healthz 200. Then the
 * driver's and the tracking page in Chromium (phone-pages.ts): weight before the map, first
 * paint with 4x CPU and slow-4G throttling, a 12-megapixel photo's upload, and 500 tracking
 * streams (RSS, a status change's time to reach them all).
 */
import { join } from 'node:path'
import { constants, brotliCompressSync, gzipSync } from 'node:zlib'
import { buildWebAssets } from '../../src/pages/web-build'
import type { BenchContext, Section } from './lib'
import { fmt, median } from './lib'
import { createBenchKey, startTowline } from './frame'
import { measurePhonePages } from './phone-pages'

/** pages.md: the driver and tracking pages weigh under 150 KB before the map. */
const PAGE_WEIGHT_KB = 150

/** Sizes as served: gzip level 9 and brotli quality 6, as src/platform/compress.ts makes them. */
function sizes(bytes: Uint8Array) {
  return {
    raw: bytes.byteLength,
    gzip: gzipSync(bytes, { level: 9 }).byteLength,
    br: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 6 } }).byteLength,
  }
}

/** Bytes as kilobytes with one decimal. */
const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`

/** Median time to /healthz 200 over BENCH_STARTS fresh starts of `command` (the binary when absent). */
async function startups(ctx: BenchContext, db: string, command?: string[]): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < ctx.settings.starts; i++) {
    const { server, startupMs } = await startTowline(ctx, db, { command })
    times.push(startupMs)
    await ctx.children.stop(server.proc)
  }
  return times
}

/** The section (see the top of this file). */
export const pages: Section = {
  name: 'pages',
  summary: "the pages' built files, start-up from source; the driver and tracking pages in Chromium: weight, first paint (CPU 4x, slow 4G), photo upload, 500 tracking streams",
  async run(ctx) {
    const started = performance.now()
    const files = await buildWebAssets()
    ctx.record({ metric: 'in-memory build of web/ (in this process)', value: `${fmt(performance.now() - started)} ms`, target: '', pass: null })
    const byName = new Map(files.map((f) => [f.name, sizes(f.bytes)]))
    // Images are served as they are (compress.ts compresses text only).
    const isText = (name: string) => !name.endsWith('.png')
    for (const [name, s] of byName) {
      if (isText(name)) ctx.record({ metric: `${name}: plain / gzip / br`, value: `${fmt(s.raw)} / ${fmt(s.gzip)} / ${fmt(s.br)} B`, target: '', pass: null })
      else ctx.record({ metric: `${name}: served as is`, value: `${fmt(s.raw)} B`, target: '', pass: null })
    }
    const weight = (names: string[]) => names.reduce((sum, n) => sum + ((isText(n) ? byName.get(n)?.br : byName.get(n)?.raw) ?? 0), 0)
    const plainPage = weight(['styles.css', 'dashboard.js'])
    ctx.record({ metric: 'a page\'s files before the map (styles.css + dashboard.js, br)', value: kb(plainPage), target: `< ${PAGE_WEIGHT_KB} KB`, pass: plainPage < PAGE_WEIGHT_KB * 1024 })
    ctx.record({ metric: 'the map\'s files (map.js + map.css + a marker and its shadow, br)', value: kb(weight(['map.js', 'map.css', 'marker-icon.png', 'marker-shadow.png'])), target: '', pass: null })

    const db = join(ctx.tmp, 'pages.db')
    await createBenchKey(ctx, db)
    // In turn, so drift of this machine's speed falls on both alike.
    const source: number[] = []
    const binary: number[] = []
    for (let round = 0; round < 2; round++) {
      source.push(...await startups(ctx, db, [process.execPath, join(ctx.root, 'src/main.ts')]))
      binary.push(...await startups(ctx, db))
    }
    ctx.log(`start-up from source: ${source.map((t) => fmt(t)).join(', ')} ms; binary: ${binary.map((t) => fmt(t)).join(', ')} ms`)
    ctx.record({ metric: `start-up from source to /healthz 200 (builds web/), median of ${source.length}`, value: `${fmt(median(source))} ms`, target: '', pass: null })
    ctx.record({ metric: `start-up of the binary to /healthz 200, median of ${binary.length}`, value: `${fmt(median(binary))} ms`, target: '< 300 ms', pass: median(binary) < 300 })

    await measurePhonePages(ctx)
  },
}

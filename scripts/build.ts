/**
 * Builds dist/towline with `bun build --compile`. The server is not minified: minification
 * breaks Elysia (stack notes §4.9). NODE_ENV is defined as production at build time. The pages'
 * browser code (web/) is built first (minified, content-hashed names) and embedded with a
 * manifest, as is the API reference's script.
 *
 *   bun scripts/build.ts [OUTFILE]          (default dist/towline)
 *
 * `buildBinary({ entry, outfile })` builds another entry the same way (the page-kit test's fixture server).
 */
import { $ } from 'bun'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { buildWebAssets } from '../src/pages/web-build'
import { EMBEDDED_FOLDER, MANIFEST_FILE } from '../src/pages/assets'

const ROOT = resolve(import.meta.dir, '..')
/** Worker entry points, embedded beside the main entry under their path from src/ (import-off-thread.ts, pg-client.ts and checkpointer.ts start them). */
const WORKERS = ['src/jobs-csv/import-worker.ts', 'src/db/pg/pg-thread.ts', 'src/db/checkpoint-worker.ts']

/** Compiles `entry` (default src/main.ts) into `outfile` with every asset embedded. */
export async function buildBinary(opts: { entry?: string; outfile: string }): Promise<void> {
  await $`bun scripts/gen-migrations.ts`.cwd(ROOT).quiet()
  mkdirSync(join(ROOT, '.tmp'), { recursive: true })
  // Its own folder per build: --asset embeds each folder under its last name, and two builds may run at once.
  const assets = mkdtempSync(join(ROOT, '.tmp', 'build-'))
  try {
    // Only the one file the docs page needs goes into the binary (the package's dist is ~25 MB).
    const scalarDir = dirname(Bun.resolveSync('@scalar/api-reference', ROOT))
    await Bun.write(join(assets, 'scalar', 'standalone.js'), Bun.file(join(scalarDir, 'browser', 'standalone.js')))
    const web = join(assets, EMBEDDED_FOLDER)
    const files = await buildWebAssets()
    for (const f of files) await Bun.write(join(web, f.file), f.bytes)
    await Bun.write(join(web, MANIFEST_FILE), JSON.stringify(Object.fromEntries(files.map((f) => [f.name, f.file])), null, 2))
    await $`bun build --compile --define process.env.NODE_ENV='"production"' --asset ${join(assets, 'scalar')} --asset ${web} ${opts.entry ?? 'src/main.ts'} ${WORKERS} --outfile ${opts.outfile}`.cwd(ROOT).quiet()
  } finally {
    rmSync(assets, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const out = process.argv[2] ?? 'dist/towline'
  const started = performance.now()
  await buildBinary({ outfile: out })
  console.log(`built ${out} in ${Math.round(performance.now() - started)} ms`)
}

/**
 * Builds dist/towline with `bun build --compile`. Not minified: minification breaks Elysia
 * (stack notes §4.9). NODE_ENV is defined as production at build time.
 */
import { $ } from 'bun'
import { dirname } from 'node:path'

const out = process.argv[2] ?? 'dist/towline'
const started = performance.now()
await $`bun scripts/gen-migrations.ts`.quiet()
// Only the one file the docs page needs goes into the binary (the package's dist is ~25 MB).
const assets = '.tmp/assets/scalar'
await $`rm -rf ${assets} && mkdir -p ${assets}`
const scalarDir = dirname(Bun.resolveSync('@scalar/api-reference', process.cwd()))
await Bun.write(`${assets}/standalone.js`, Bun.file(`${scalarDir}/browser/standalone.js`))
await $`bun build --compile --define process.env.NODE_ENV='"production"' --asset ${assets} src/main.ts --outfile ${out}`.quiet()
console.log(`built ${out} in ${Math.round(performance.now() - started)} ms`)

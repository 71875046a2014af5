/**
 * Builds dist/towline with `bun build --compile`. Not minified: minification breaks Elysia
 * (stack notes §4.9). NODE_ENV is defined as production at build time.
 */
import { $ } from 'bun'

const out = process.argv[2] ?? 'dist/towline'
const started = performance.now()
await $`bun scripts/gen-migrations.ts`.quiet()
await $`bun build --compile --define process.env.NODE_ENV='"production"' src/main.ts --outfile ${out}`.quiet()
console.log(`built ${out} in ${Math.round(performance.now() - started)} ms`)

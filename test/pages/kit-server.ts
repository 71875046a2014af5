/**
 * `towline serve` with the page-kit fixture mounted (test/pages/kit-fixture.ts), as an entry
 * compiled exactly like dist/towline (scripts/build.ts's buildBinary): the fixture then runs on
 * the embedded, minified browser files, as real pages will. Takes serve's flags:
 * `kit-server serve --port N --host ADDR --public-url URL --db FILE`.
 */
import { parseArgs } from 'node:util'
import { configFrom } from '../../src/cli/cli'
import { systemClock } from '../../src/platform/clock'
import { serve } from '../../src/server'
import { pageKitFixture } from './kit-fixture'

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: { db: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'public-url': { type: 'string' } },
})
const config = configFrom(values)
await serve(config, systemClock, { pages: [pageKitFixture({ tileUrl: config.tileUrl })] })

#!/usr/bin/env bun
// The CLI from source under Bun: the package's command (bin/towline.js) runs this, under Bun itself or by handing over to it.
import { main } from '../src/main.ts'

const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)

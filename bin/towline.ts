#!/usr/bin/env bun
// `bunx towline` / `npx towline` entry: runs the CLI from source under Bun.
import { main } from '../src/main.ts'

const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)

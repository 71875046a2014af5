#!/usr/bin/env node
// `npx towline` / `bunx towline`: the command line of the package. Towline runs on Bun: under Bun
// this runs it here; under Node it hands over to the `bun` on PATH (signals passed on, its exit
// code kept), or says in one line how to get one.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const entry = fileURLToPath(new URL('./towline.ts', import.meta.url))

if (process.versions.bun) {
  await import(entry)
} else {
  const child = spawn('bun', [entry, ...process.argv.slice(2)], { stdio: 'inherit' })
  const pass = (signal) => () => { if (child.exitCode === null) child.kill(signal) }
  // Ctrl-C reaches both through the terminal: this one waits for Bun to stop cleanly.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, pass(signal))
  child.on('error', (err) => {
    if (err.code === 'ENOENT') {
      process.stderr.write('towline runs on Bun, and no bun is on PATH: install it with `npm install -g bun`, then run this again.\n')
      process.exit(127)
    }
    process.stderr.write(`towline: could not start bun: ${err.message}\n`)
    process.exit(1)
  })
  child.on('exit', (code, signal) => {
    if (!signal) process.exit(code ?? 1)
    // Ended by a signal: so does this one (its own handler for it removed first).
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  })
}

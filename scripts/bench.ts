/**
 * Performance report for the compiled binary (`bun run bench`). Builds dist/towline if it is
 * missing, runs each section against servers on 127.0.0.1, and prints every figure beside its
 * target. It is a report, not a test: a missed target still exits 0; only a bench that could
 * not measure (an exception) exits 1.
 *
 *   bun scripts/bench.ts [--only SECTION[,SECTION...]]
 *
 * Environment: BENCH_SECONDS (measured load per target, default 10), BENCH_WARMUP_SECONDS
 * (default 2), BENCH_CONNECTIONS (default 50), BENCH_STARTS (start-up samples, default 5),
 * BENCH_TOOL=wrk|autocannon (default wrk when installed: `apt-get install -y wrk`),
 * BENCH_LIST_CONNECTIONS (jobs section, connections for the list latency runs, default 1).
 * The jobs section caches its 1,000,000-job database under .tmp/ (about 1.2 GB; delete to rebuild).
 * The webhooks section needs openssl (it makes its own CA and receiver certificate); it also reads
 * BENCH_WEBHOOKS_ENDPOINTS (default 1,10,50) and BENCH_WEBHOOKS_PROFILE=<dir> (see scripts/bench/webhooks.ts).
 * The search section caches its 50,000-job database under .tmp/ too. The boards section needs
 * Chromium (/usr/bin/chromium, or CHROMIUM_PATH) and reads BENCH_BOARDS (default 200) and
 * BENCH_BOARD_WRITES (default 250). The import section times a 500-row CSV import (console and
 * page) and GET /jobs/{id}'s p99 while it runs. The engines section runs the binary on SQLite and on
 * a throwaway PostgreSQL cluster side by side (PostgreSQL's server binaries, as npm test uses them).
 * The pages section needs Chromium too, and reads BENCH_TRACKING_READERS (default 500) and
 * BENCH_TRACKING_CHANGES (default 60) for its tracking streams (scripts/bench/phone-pages.ts).
 *
 * A section is a named { name, summary, run(ctx) } in scripts/bench/; add it to SECTIONS below.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Children, readSettings, runCommand, type BenchContext, type Row, type Section } from './bench/lib'
import { frame } from './bench/frame'
import { jobs } from './bench/jobs'
import { webhooks } from './bench/webhooks'
import { texts } from './bench/texts'
import { pages } from './bench/pages'
import { search } from './bench/search'
import { boards } from './bench/boards'
import { importSection } from './bench/import'
import { engines } from './bench/engines'

/** Every section, in the order they run. */
const SECTIONS: Section[] = [frame, jobs, webhooks, texts, pages, search, boards, importSection, engines]

const ROOT = resolve(import.meta.dir, '..')
const BINARY = join(ROOT, 'dist', 'towline')

/** Parses --only/--help and returns the sections to run (exits 2 on a bad name). */
function chooseSections(argv: string[]): Section[] {
  const { values } = parseArgs({ args: argv, options: { only: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    process.stdout.write(`Usage: bun scripts/bench.ts [--only SECTION[,SECTION...]]\n\nSections:\n${SECTIONS.map((s) => `  ${s.name.padEnd(10)} ${s.summary}`).join('\n')}\n`)
    process.exit(0)
  }
  if (!values.only) return SECTIONS
  const names = values.only.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)
  const unknown = names.filter((n) => !SECTIONS.some((s) => s.name === n))
  if (unknown.length) {
    process.stderr.write(`bench: unknown section ${unknown.join(', ')} (have: ${SECTIONS.map((s) => s.name).join(', ')})\n`)
    process.exit(2)
  }
  return SECTIONS.filter((s) => names.includes(s.name))
}

/** Builds dist/towline with scripts/build.ts unless it is already there; returns a note if it looks stale. */
async function ensureBinary(children: Children): Promise<string | null> {
  if (existsSync(BINARY)) {
    const built = statSync(BINARY).mtimeMs
    const newer = ['src', 'migrations', 'web'].flatMap((dir) => newerFiles(join(ROOT, dir), built))
    if (!newer.length) return null
    return `dist/towline is older than ${newer.length} file(s) in src/, migrations/ or web/ (e.g. ${newer[0]}); this run measured the old binary (bun run build to refresh)`
  }
  process.stderr.write('bench: dist/towline is missing, building it\n')
  const out = await runCommand(children, [process.execPath, 'scripts/build.ts'], { cwd: ROOT })
  process.stderr.write(`bench: ${out.trim()}\n`)
  return null
}

/** Lists the files under `dir` modified after `sinceMs`, relative to the repository root. */
function newerFiles(dir: string, sinceMs: number): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && (statSync(join(e.parentPath, e.name), { throwIfNoEntry: false })?.mtimeMs ?? 0) > sinceMs)
    .map((e) => join(e.parentPath, e.name).slice(ROOT.length + 1))
}

/** Formats the rows as an aligned table with PASS/FAIL marks. */
function renderTable(rows: Row[]): string {
  const cells = rows.map((r) => [r.section, r.metric, r.value, r.target, r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL'])
  const header = ['section', 'metric', 'value', 'target', 'result']
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]) => c.map((v, i) => (i === 2 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n')
}

/** Runs the chosen sections, prints the report, and always stops the children and removes the temp folder. */
async function main(): Promise<number> {
  const sections = chooseSections(process.argv.slice(2))
  const settings = readSettings(process.env)
  const children = new Children()
  const tmp = mkdtempSync(join(tmpdir(), 'towline-bench-'))
  const rows: Row[] = []
  const notes: string[] = []
  let failed = false

  // Ctrl-C or a supervisor's SIGTERM: still stop every server we started.
  const onSignal = (signal: string) => void children.stopAll().finally(() => {
    rmSync(tmp, { recursive: true, force: true })
    process.stderr.write(`bench: stopped by ${signal}\n`)
    process.exit(130)
  })
  process.on('SIGINT', () => onSignal('SIGINT'))
  process.on('SIGTERM', () => onSignal('SIGTERM'))

  try {
    const stale = await ensureBinary(children)
    if (stale) notes.push(stale)
    process.stderr.write(`bench: ${settings.tool}, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per target\n`)
    for (const section of sections) {
      const ctx: BenchContext = {
        root: ROOT,
        binary: BINARY,
        tmp: join(tmp, section.name),
        settings,
        children,
        record: (row) => rows.push({ section: section.name, ...row }),
        log: (message) => process.stderr.write(`${section.name}: ${message}\n`),
        note: (message) => notes.push(`${section.name}: ${message}`),
      }
      mkdirSync(ctx.tmp)
      try {
        await section.run(ctx)
      } catch (err) {
        failed = true
        rows.push({ section: section.name, metric: 'error', value: String(err instanceof Error ? err.message : err).split('\n')[0]!, target: '', pass: false })
        process.stderr.write(`${section.name}: failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
        // What the section's servers logged, kept for a look at why.
        const kept = join(ROOT, '.tmp', `bench-failed-${section.name}-${Date.now().toString(36)}`)
        try { cpSync(ctx.tmp, kept, { recursive: true }); process.stderr.write(`${section.name}: its folder (server logs) is kept at ${kept}\n`) } catch { /* the report goes on */ }
      } finally {
        await children.stopAll()
      }
    }
  } finally {
    await children.stopAll()
    rmSync(tmp, { recursive: true, force: true })
  }

  const judged = rows.filter((r) => r.pass !== null)
  const passed = judged.filter((r) => r.pass).length
  process.stdout.write(`\nTowline bench (${settings.tool}, ${settings.connections} connections, ${settings.seconds} s per target, 127.0.0.1)\n\n`)
  process.stdout.write(renderTable(rows) + '\n\n')
  for (const note of notes) process.stdout.write(`note: ${note}\n`)
  if (notes.length) process.stdout.write('\n')
  process.stdout.write(`${passed}/${judged.length} targets met${failed ? '; a section failed to run (see above)' : ''}\n`)
  return failed ? 1 : 0
}

process.exit(await main())

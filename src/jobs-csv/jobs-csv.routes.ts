import { Elysia } from 'elysia'
import type { RouteDeps } from '../app'
import { dashboardPage } from '../dashboard/shell'
import { AppError } from '../platform/errors'
import { dayIn } from '../platform/time-zone'
import type { FormFields } from '../platform/forms'
import { randomBase62 } from '../platform/ids'
import { routeProps } from '../platform/route-props'
import type { SessionPlugin } from '../users/session.plugin'
import { exportSearchedJobs, importTemplate } from './export-jobs'
import { IMPORT_MAX_BYTES, type ImportResult } from './import-jobs'
import { importOffThread } from './import-off-thread'
import { importBody, type ImportOutcome } from './import.page'

/**
 * The upload cap of POST /import: well above the 2 MB a file may hold, so that a file somewhat
 * over it still reaches the import and is refused with the limit named (with its multipart
 * framing), rather than by the HTTP layer's bare 413 page.
 */
export const IMPORT_UPLOAD_BYTES = 4 * IMPORT_MAX_BYTES

const one = (value: unknown): string => (Array.isArray(value) ? one(value[0]) : typeof value === 'string' ? value : '')
const KEY = /^[0-9A-Za-z]{24}$/

/** Streams CSV chunks as an attachment named `filename`. */
function csvResponse(chunks: Iterator<string>, filename: string): Response {
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    // One batch of jobs per pull: the export never holds more than that in memory.
    pull(controller) {
      const next = chunks.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(next.value))
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${filename}"` } })
}

/** `/import` (CSV import: Check file, Import, the template) and `/jobs/export.csv` (the jobs list's Export CSV). */
export function jobsCsvRoutes(session: SessionPlugin, deps: RouteDeps) {
  const page = (user: Parameters<typeof dashboardPage>[0]['user'], outcome: ImportOutcome, status = 200, fileError?: string) =>
    dashboardPage({ title: 'Import jobs', user, active: 'import', body: importBody({ outcome, idempotencyKey: randomBase62(24), fileError }), status })

  return new Elysia({ name: 'towline.jobs-csv' }).use(routeProps).use(session)
    .get('/import', ({ user, query }) => {
      const imported = one((query as Record<string, unknown>).imported)
      return page(user, /^\d{1,4}$/.test(imported) ? { kind: 'imported', count: Number(imported) } : { kind: 'none' })
    }, { signedIn: 'dispatcher' })
    .get('/import/template.csv', () => new Response(importTemplate(), {
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="towline-import-template.csv"' },
    }), { signedIn: 'dispatcher' })
    .post('/import', async ({ user, ctx, body }) => {
      const f = body as FormFields
      const file = f.file instanceof File ? f.file : null
      if (!file) return page(user, { kind: 'none' }, 422, 'Choose a CSV file first.')
      const dryRun = one(f.action) !== 'import'
      const bytes = new Uint8Array(await file.arrayBuffer())
      const idemKey = one(f.idempotency_key)
      // Parsed, checked and written on the import thread, off this one (import-off-thread.ts). The
      // form's own key makes a double-clicked Import one import; a check writes nothing, so needs none.
      const done = await importOffThread(deps, ctx, {
        bytes, dryRun,
        idempotency: dryRun || !KEY.test(idemKey) ? null : { key: idemKey, sha256: new Bun.CryptoHasher('sha256').update(bytes).digest('hex') },
      })
      // Boards follow the imported jobs now, not at the next look at the database.
      if (!dryRun) deps.bus?.notify()
      const result = done.body as ImportResult
      if (result.errors.length) {
        const tooLarge = bytes.byteLength > IMPORT_MAX_BYTES
        return page(user, { kind: 'refused', errors: result.errors, fileName: file.name, imported: false, dryRun }, tooLarge ? 413 : 422)
      }
      if (dryRun) return page(user, { kind: 'passed', rows: result.rows, fileName: file.name })
      return new Response(null, { status: 303, headers: { location: `/import?imported=${result.imported}` } })
    }, { signedIn: 'dispatcher', accepts: { kind: 'multipart', maxBytes: IMPORT_UPLOAD_BYTES, maxFields: 8 } })
    .get('/jobs/export.csv', ({ ctx, query }) => {
      const q = query as Record<string, unknown>
      try {
        const chunks = exportSearchedJobs(ctx, { q: one(q.q), from: one(q.from), to: one(q.to), status: one(q.status), includeArchived: one(q.archived) !== '' })
        return csvResponse(chunks, `towline-jobs-${dayIn(ctx.clock.now(), ctx.account.timeZone)}.csv`)
      } catch (err) {
        if (err instanceof AppError && err.errorCode === 'validation_failed') {
          const fields = (err.details.fields ?? []) as { path: string; message: string }[]
          throw new AppError('validation_failed', `The export was not made: ${fields.map((x) => `${x.path}: ${x.message}`).join('; ')}. Correct the search on the jobs list.`, err.details)
        }
        throw err
      }
    }, { signedIn: 'dispatcher' })
}

import { html, type Html } from '../pages/html'
import { formAlert } from '../pages/form'
import type { RowError } from './import-jobs'
import { IMPORT_MAX_ROWS } from './import-jobs'

/** What the import page shows under its form. */
export type ImportOutcome =
  | { kind: 'none' }
  /** A dry run (Check file) found nothing wrong. */
  | { kind: 'passed'; rows: number; fileName: string }
  /** The file was refused (a dry run or an import): every problem. */
  | { kind: 'refused'; errors: RowError[]; fileName: string; imported: false; dryRun: boolean }
  /** After Import: how many jobs arrived. */
  | { kind: 'imported'; count: number }

/** The whole-file problems (no row) in words, then how many rows have problems. */
function refusalSummary(errors: RowError[], dryRun: boolean): string {
  const whole = errors.filter((e) => e.row === null)
  if (whole.length) return `${dryRun ? 'The file cannot be imported' : 'Nothing was imported'}: ${whole.map((e) => e.message).join(' ')}`
  const rows = new Set(errors.map((e) => e.row)).size
  return `${dryRun ? 'Checked: nothing was written.' : 'Nothing was imported.'} ${errors.length} ${errors.length === 1 ? 'problem' : 'problems'} in ${rows} ${rows === 1 ? 'row' : 'rows'}; fix ${errors.length === 1 ? 'it' : 'them'} in the file and choose it again.`
}

function errorTable(errors: RowError[]): Html {
  const listed = errors.filter((e) => e.row !== null || e.column !== null)
  if (!listed.length) return html``
  return html`<div class="table-scroll" role="region" aria-labelledby="import-errors-caption" tabindex="0">
<table class="import-errors">
<caption id="import-errors-caption">Rows to fix (row 1 is the header)</caption>
<thead><tr><th scope="col">Row</th><th scope="col">Column</th><th scope="col">Message</th></tr></thead>
<tbody>
${listed.map((e) => html`<tr><td>${e.row ?? ''}</td><td>${e.column ?? ''}</td><td>${e.message}</td></tr>\n`)}
</tbody>
</table>
</div>`
}

function outcomeBlock(o: ImportOutcome): Html {
  switch (o.kind) {
    case 'none': return html``
    case 'passed': return html`<p class="notice notice-ok" role="status" data-focus-on-load>Every row of ${o.fileName} passes (${o.rows} ${o.rows === 1 ? 'job' : 'jobs'}). Nothing was written: choose the file again and press Import to bring the jobs in.</p>`
    case 'imported': return html`<p class="notice notice-ok" role="status" data-focus-on-load>Imported ${o.count} ${o.count === 1 ? 'job' : 'jobs'}. <a href="/jobs">See them in the jobs list</a>.</p>`
    case 'refused': return errorTable(o.errors)
  }
}

/** The `/import` page: the form (**CSV file**, **Check file**, **Import**), the template link, and what the last post found. */
export function importBody(p: { outcome: ImportOutcome; idempotencyKey: string; fileError?: string }): string {
  const alert = p.fileError ?? (p.outcome.kind === 'refused' ? refusalSummary(p.outcome.errors, p.outcome.dryRun) : '')
  const described = ['f-file-hint', p.fileError ? 'f-file-error' : ''].filter(Boolean).join(' ')
  return html`<h1>Import jobs</h1>
<p>Bring past jobs in from a CSV file (a spreadsheet saved as CSV): at most ${IMPORT_MAX_ROWS} rows and 2 MB a file. Each job keeps its status and times, is marked imported, and nobody is texted. <a href="/import/template.csv">Download the template</a>: the columns and one example row.</p>
<form method="post" action="/import" enctype="multipart/form-data" class="import-form" novalidate>
${formAlert({ values: {}, errors: {}, alert })}
<input type="hidden" name="idempotency_key" value="${p.idempotencyKey}">
<div class="field"><label for="f-file">CSV file</label><span class="required" aria-hidden="true"> *</span>
<p class="field-hint" id="f-file-hint">Comma or semicolon separated, UTF-8 (Excel's "CSV UTF-8") or Excel's own CSV. Times with their zone, such as 2026-11-21T09:30:00Z.</p>
<input type="file" id="f-file" name="file" accept=".csv,.txt,text/csv" required aria-describedby="${described}"${p.fileError ? html` aria-invalid="true"` : ''}>
<p class="field-error" id="f-file-error">${p.fileError ?? ''}</p></div>
<div class="import-actions">
<button type="submit" name="action" value="check">Check file</button>
<button type="submit" name="action" value="import">Import</button>
</div>
</form>
${outcomeBlock(p.outcome)}`.text
}

import { inTransaction, type Db } from '../db/client'
import { searchTextOf } from './commit-job-change'
import type { JobCustomer } from './job.table'

/** The rows still without search text (a thousand at a time): read through jobs_search_text_missing_idx, empty once all are filled. */
export const MISSING_SEARCH_TEXT = 'SELECT id, customer, external_ref FROM jobs WHERE search_text IS NULL LIMIT 1000'

/**
 * Fills in the jobs list's search text of rows written before it existed (a database from an
 * older towline, or rows another program wrote), a thousand to a transaction, so a long fill
 * never holds the write lock for long. Run by `serve` at start; the search lets such rows through
 * to its own check meanwhile. Returns how many rows it filled.
 */
export function fillSearchText(db: Db): number {
  let filled = 0
  for (;;) {
    const rows = db.$client.query<{ id: string; customer: string; external_ref: string | null }, []>(MISSING_SEARCH_TEXT).all()
    if (!rows.length) return filled
    inTransaction(db, () => {
      const write = db.$client.query('UPDATE jobs SET search_text = ? WHERE id = ? AND search_text IS NULL')
      for (const r of rows) write.run(searchTextOf({ customer: JSON.parse(r.customer) as JobCustomer, externalRef: r.external_ref }), r.id)
    })
    filled += rows.length
  }
}

import { inTransaction } from '../db/client'
import { validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import { commitJobChange, loadWritableJob, type JobContext } from './job-context'
import type { AddNoteBody } from './job.model'
import { jobNotes } from './job.table'

/** Adds a note to a job (optionally visible to the customer) and writes job.note_added. */
export function addNote(ctx: JobContext, id: string, input: AddNoteBody) {
  const text = input.text.trim()
  if (!text) throw validationFailed([{ path: 'text', message: 'must not be blank' }])
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id)
    const now = ctx.clock.now()
    const note = { id: newId('note', now), accountId: job.accountId, jobId: job.id, text, customerVisible: input.customer_visible ?? false, authorKeyId: ctx.actor.keyId ?? null, createdAt: now }
    tx.insert(jobNotes).values(note).run()
    commitJobChange(tx, ctx, job, {}, [{ type: 'job.note_added', detail: { note_id: note.id, text, customer_visible: note.customerVisible } }])
    return { object: 'note' as const, id: note.id, job_id: job.id, text, customer_visible: note.customerVisible, created_at: new Date(now).toISOString() }
  })
}

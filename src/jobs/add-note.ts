import { requirePermission } from '../accounts/actor'
import { inTransaction } from '../db/client'
import { validationFailed } from '../platform/errors'
import { newId } from '../platform/ids'
import type { OperationContext } from '../operations/operation-context'
import { commitJobChange } from './commit-job-change'
import { loadWritableJob, type ActionGuard } from './job-context'
import type { AddNoteBody } from './job.model'

/** Adds a note to a job (optionally visible to the customer) and writes job.note_added. */
export function addNote(ctx: OperationContext, id: string, input: AddNoteBody, guard: ActionGuard = {}) {
  requirePermission(ctx.actor, 'jobs:write')
  const text = input.text.trim()
  if (!text) throw validationFailed([{ path: 'text', message: 'must not be blank' }])
  return inTransaction(ctx.db, (tx) => {
    const job = loadWritableJob(ctx, tx, id, 'jobs:write', guard)
    const now = ctx.clock.now()
    const note = { id: newId('note', now), customerVisible: input.customer_visible ?? false }
    const actor = ctx.actor
    tx.$client.query('INSERT INTO job_notes (id, account_id, job_id, text, customer_visible, author_key_id, author_user_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(note.id, job.accountId, job.id, text, note.customerVisible ? 1 : 0, actor.kind === 'system' && actor.via === 'key' ? actor.keyId : null, actor.kind === 'dispatcher' ? actor.userId : null, now)
    commitJobChange(tx, ctx, job, { events: [{ type: 'job.note_added', detail: { note_id: note.id, text, customer_visible: note.customerVisible } }] })
    return { object: 'note' as const, id: note.id, job_id: job.id, text, customer_visible: note.customerVisible, created_at: new Date(now).toISOString() }
  })
}

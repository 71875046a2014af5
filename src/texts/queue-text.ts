import type { Db } from '../db/client'
import { newId } from '../platform/ids'
import { DEFAULT_TEMPLATES, renderTemplate, type TemplateName } from './templates'

export interface TextRequest {
  accountId: string
  jobId?: string | null
  unitId?: string | null
  eventId?: string | null
  recipient: 'customer' | 'driver'
  toPhone: string | null | undefined
  template: TemplateName
  values: Record<string, string | undefined>
  /** Set when the text must not go out (no consent, no phone, imported job...). */
  skipReason?: string | null
}

/** Writes a text into the outbox inside the caller's transaction: queued, or skipped with the reason. */
export function queueText(tx: Db, req: TextRequest, nowMs: number): string {
  const id = newId('txt', nowMs)
  const skip = req.skipReason ?? (req.toPhone ? null : 'no_phone')
  // A cached statement rather than drizzle's builder: every job write queues texts.
  tx.$client.query(
    `INSERT INTO texts (id, account_id, job_id, unit_id, event_id, recipient, to_phone, template, body, status, skip_reason, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
  ).run(
    id, req.accountId, req.jobId ?? null, req.unitId ?? null, req.eventId ?? null, req.recipient, req.toPhone ?? null, req.template,
    renderTemplate(DEFAULT_TEMPLATES[req.template], req.values), skip ? 'skipped' : 'queued', skip, skip ? null : nowMs, nowMs, nowMs,
  )
  return id
}

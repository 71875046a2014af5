import type { Db } from '../db/client'
import { newId } from '../platform/ids'
import { texts } from './text.table'
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
  tx.insert(texts).values({
    id,
    accountId: req.accountId,
    jobId: req.jobId ?? null,
    unitId: req.unitId ?? null,
    eventId: req.eventId ?? null,
    recipient: req.recipient,
    toPhone: req.toPhone ?? null,
    template: req.template,
    body: renderTemplate(DEFAULT_TEMPLATES[req.template], req.values),
    status: skip ? 'skipped' : 'queued',
    skipReason: skip,
    nextAttemptAt: skip ? null : nowMs,
    createdAt: nowMs,
    updatedAt: nowMs,
  }).run()
  return id
}

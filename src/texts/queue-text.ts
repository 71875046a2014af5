import type { Db } from '../db/client'
import { newId } from '../platform/ids'
import { DEFAULT_TEMPLATES, renderTemplate, type TemplateName } from './templates'
import { isOptedOut } from './consent'

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

/** Woken after a queued text commits, so the sender goes at once. */
let wakeSender: () => void = () => {}
/** Lets the running sender hear about new texts. */
export function onTextsQueued(wake: () => void): void {
  wakeSender = wake
}

/** The account's wording of a template, or the default. */
export function templateFor(db: Db, accountId: string, name: TemplateName): string {
  const own = db.$client.query<{ body: string }, [string, string]>('SELECT body FROM text_templates WHERE account_id = ? AND name = ?').get(accountId, name)
  return own?.body ?? DEFAULT_TEMPLATES[name]
}

/**
 * Writes a text into the outbox inside the caller's transaction: queued, or skipped with the
 * reason (no phone, no consent, the number opted out, an imported job). Sending happens later.
 */
export function queueText(tx: Db, req: TextRequest, nowMs: number): string {
  const id = newId('txt', nowMs)
  const skip = req.skipReason ?? (!req.toPhone ? 'no_phone' : req.recipient === 'customer' && isOptedOut(tx, req.accountId, req.toPhone) ? 'opted_out' : null)
  // A cached statement rather than drizzle's builder: every job write queues texts.
  tx.$client.query(
    `INSERT INTO texts (id, account_id, job_id, unit_id, event_id, recipient, to_phone, template, body, status, skip_reason, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
  ).run(
    id, req.accountId, req.jobId ?? null, req.unitId ?? null, req.eventId ?? null, req.recipient, req.toPhone ?? null, req.template,
    renderTemplate(templateFor(tx, req.accountId, req.template), req.values), skip ? 'skipped' : 'queued', skip, skip ? null : nowMs, nowMs, nowMs,
  )
  if (!skip) queueMicrotask(() => wakeSender()) // after the caller's transaction commits
  return id
}

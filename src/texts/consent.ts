import type { Db } from '../db/client'

/** Records that a number agreed to texts (from a job's sms_consent, or START). A STOP is cleared only by START. */
export function recordConsent(db: Db, accountId: string, phone: string, source: string, nowMs: number, clearsOptOut = false): void {
  db.$client.query(
    `INSERT INTO sms_consents (account_id, phone, consented_at, consent_source, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, phone) DO UPDATE SET consented_at = excluded.consented_at, consent_source = excluded.consent_source,
       opted_out_at = CASE WHEN ? THEN NULL ELSE opted_out_at END, opt_out_source = CASE WHEN ? THEN NULL ELSE opt_out_source END, updated_at = excluded.updated_at`,
  ).run(accountId, phone, nowMs, source, nowMs, clearsOptOut ? 1 : 0, clearsOptOut ? 1 : 0)
}

/** Records that a number asked for no more texts (STOP and its synonyms). */
export function recordOptOut(db: Db, accountId: string, phone: string, source: string, nowMs: number): void {
  db.$client.query(
    `INSERT INTO sms_consents (account_id, phone, opted_out_at, opt_out_source, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, phone) DO UPDATE SET opted_out_at = excluded.opted_out_at, opt_out_source = excluded.opt_out_source, updated_at = excluded.updated_at`,
  ).run(accountId, phone, nowMs, source, nowMs)
}

/** Tells whether a number opted out of the account's texts. */
export function isOptedOut(db: Db, accountId: string, phone: string): boolean {
  const row = db.$client.query<{ opted_out_at: number | null }, [string, string]>('SELECT opted_out_at FROM sms_consents WHERE account_id = ? AND phone = ?').get(accountId, phone)
  return !!row?.opted_out_at
}

/** The consent record of a number, for the CLI and tests. */
export function consentOf(db: Db, accountId: string, phone: string) {
  return db.$client.query<Record<string, unknown>, [string, string]>('SELECT * FROM sms_consents WHERE account_id = ? AND phone = ?').get(accountId, phone)
}

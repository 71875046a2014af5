import { iso } from '../platform/clock'
import type { Db } from '../db/client'

/** Records that a number agreed to texts (from a job's sms_consent, or START). A STOP is cleared only by START. */
export function recordConsent(db: Db, accountId: string, phone: string, source: string, nowMs: number, clearsOptOut = false): void {
  db.$client.query(
    `INSERT INTO sms_consents (account_id, phone, consented_at, consent_source, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, phone) DO UPDATE SET consented_at = excluded.consented_at, consent_source = excluded.consent_source,
       opted_out_at = CASE WHEN ? = 1 THEN NULL ELSE sms_consents.opted_out_at END, opt_out_source = CASE WHEN ? = 1 THEN NULL ELSE sms_consents.opt_out_source END, updated_at = excluded.updated_at`,
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

/** A number's consent record as the CLI shows it. */
export type ConsentView = { phone: string; texts: 'allowed' | 'opted_out'; consented_at: string | null; consent_source: string | null; opted_out_at: string | null; opt_out_source: string | null; updated_at: string }

/** Lists an account's consent records, or one number's, most recently changed first. */
export function listConsents(db: Db, accountId: string, phone?: string, limit = 100): ConsentView[] {
  const rows = db.$client.query<Record<string, any>, (string | number)[]>(
    `SELECT * FROM sms_consents WHERE account_id = ? ${phone ? 'AND phone = ?' : ''} ORDER BY updated_at DESC, phone LIMIT ?`,
  ).all(...(phone ? [accountId, phone, limit] : [accountId, limit]))
  return rows.map((r) => ({
    phone: r.phone, texts: r.opted_out_at ? 'opted_out' : 'allowed',
    consented_at: iso(r.consented_at), consent_source: r.consent_source, opted_out_at: iso(r.opted_out_at), opt_out_source: r.opt_out_source,
    updated_at: iso(r.updated_at)!,
  }))
}

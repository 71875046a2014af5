import { formVersion } from '../platform/form-version'
import type { Db } from '../db/client'
import { nameKey } from '../platform/chars'
import type { CommercialAccountContact } from './commercial-account.table'
import type { CommercialAccountRef } from './commercial-account.model'

/** A commercial_accounts row, private fields included: never hand it to an API response (use commercialAccountView). */
export interface CommercialAccountRow {
  id: string
  accountId: string
  name: string
  kind: string
  contacts: CommercialAccountContact[]
  rates: string | null
  billingAddress: string | null
  internalNotes: string | null
  createdAt: number
  updatedAt: number
}

type Raw = Record<string, any>

/**
 * What an edit form says it was opened on: a digest of every field it edits. Two saves in the same
 * millisecond leave updated_at alike; the fields cannot be alike unless nothing changed.
 */
export function commercialAccountVersion(row: CommercialAccountRow): string {
  const fields = [row.name, row.kind, row.contacts, row.rates, row.billingAddress, row.internalNotes]
  return formVersion(fields)
}

const toRow = (r: Raw): CommercialAccountRow => ({
  id: r.id, accountId: r.account_id, name: r.name, kind: r.kind, contacts: JSON.parse(r.contacts),
  rates: r.rates, billingAddress: r.billing_address, internalNotes: r.internal_notes, createdAt: r.created_at, updatedAt: r.updated_at,
})

/** The commercial account with this id in the tenant account, or undefined (another account's id included). */
export function findCommercialAccountRow(db: Db, accountId: string, id: string): CommercialAccountRow | undefined {
  const r = db.$client.query<Raw, [string, string]>('SELECT * FROM commercial_accounts WHERE id = ? AND account_id = ?').get(id, accountId)
  return r ? toRow(r) : undefined
}


/** Names in the order people look them up: letters by the alphabet, accents and case aside (É with E, not after Z). */
const BY_NAME = new Intl.Collator('en', { sensitivity: 'base', numeric: true })

/**
 * The id and name of the commercial account with this name (case and accents' composition aside)
 * in the tenant account. SQLite's lower() folds only A-Z (ÉCLAIR stayed apart from éclair), so the
 * comparison is made here, the same on both engines; the unique index stays as the database's backstop.
 */
export function findCommercialAccountRefByName(db: Db, accountId: string, name: string): CommercialAccountRef | undefined {
  const key = nameKey(name)
  return db.$client.query<CommercialAccountRef, [string]>('SELECT id, name FROM commercial_accounts WHERE account_id = ? ORDER BY id').all(accountId).find((r) => nameKey(r.name) === key)
}

/** The id and name of one commercial account of the tenant account, or undefined. */
export function findCommercialAccountRef(db: Db, accountId: string, id: string): CommercialAccountRef | undefined {
  return db.$client.query<CommercialAccountRef, [string, string]>('SELECT id, name FROM commercial_accounts WHERE id = ? AND account_id = ?').get(id, accountId) ?? undefined
}

/** Ids and names of several commercial accounts of one tenant account, in one query (a page of jobs). */
export function commercialAccountRefsByIds(db: Db, accountId: string, ids: string[]): Map<string, CommercialAccountRef> {
  const unique = [...new Set(ids)]
  if (!unique.length) return new Map()
  const rows = db.$client.query<CommercialAccountRef, string[]>(
    `SELECT id, name FROM commercial_accounts WHERE account_id = ? AND id IN (${unique.map(() => '?').join(',')})`,
  ).all(accountId, ...unique)
  return new Map(rows.map((r) => [r.id, r]))
}

/** A page of the tenant account's commercial accounts, newest first by (created_at, id), after a cursor position. */
export function listCommercialAccountRows(db: Db, accountId: string, after: [number, string] | undefined, limit: number): CommercialAccountRow[] {
  const rows = after
    ? db.$client.query<Raw, [string, number, number, string, number]>(
      'SELECT * FROM commercial_accounts WHERE account_id = ? AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?',
    ).all(accountId, after[0], after[0], after[1], limit)
    : db.$client.query<Raw, [string, number]>('SELECT * FROM commercial_accounts WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?').all(accountId, limit)
  return rows.map(toRow)
}

/** Every commercial account of the tenant account by name (alphabetically, accents and case aside), at most `limit`: the dashboard's directory and selects. */
export function listCommercialAccountRowsByName(db: Db, accountId: string, limit: number): CommercialAccountRow[] {
  return db.$client.query<Raw, [string]>('SELECT * FROM commercial_accounts WHERE account_id = ?').all(accountId).map(toRow)
    .sort((a, b) => BY_NAME.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit)
}

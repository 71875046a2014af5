import type { Db } from '../db/client'
import { validationFailed } from '../platform/errors'
import type { CommercialAccountRef } from './commercial-account.model'
import { commercialAccountRefsByIds, findCommercialAccountRef } from './commercial-account.queries'

/**
 * Reads a job body's `commercial_account_id`: undefined (not sent), null (clear it), or the id
 * of a commercial account of the tenant account; any other id is a 422 on that field (an id in
 * a body that names nothing is 422, not 404; another account's id names nothing here).
 */
export function commercialAccountIdForJob(db: Db, accountId: string, raw: string | null | undefined): string | null | undefined {
  if (raw === undefined || raw === null) return raw
  const found = findCommercialAccountRef(db, accountId, raw.trim())
  if (!found) throw validationFailed([{ path: 'commercial_account_id', message: "names no commercial account in this account's directory (GET /accounts lists them)" }])
  return found.id
}

/** The commercial account a job shows, `{ id, name }`, or null. */
export function commercialAccountOfJob(db: Db, accountId: string, id: string | null): CommercialAccountRef | null {
  return id ? findCommercialAccountRef(db, accountId, id) ?? null : null
}

/** The commercial accounts a page of jobs shows, by id, in one query. */
export function commercialAccountsOfJobs(db: Db, jobs: { accountId: string; commercialAccountId: string | null }[]): Map<string, CommercialAccountRef> {
  const byAccount = new Map<string, string[]>()
  for (const j of jobs) if (j.commercialAccountId) byAccount.set(j.accountId, [...(byAccount.get(j.accountId) ?? []), j.commercialAccountId])
  const out = new Map<string, CommercialAccountRef>()
  for (const [accountId, ids] of byAccount) for (const [id, ref] of commercialAccountRefsByIds(db, accountId, ids)) out.set(id, ref)
  return out
}

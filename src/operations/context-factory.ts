import type { Actor } from '../accounts/actor'
import { findAccountById } from '../accounts/account.queries'
import type { Principal } from '../accounts/authenticate'
import type { Db } from '../db/client'
import type { JobWriter } from '../jobs/commit-job-change'
import type { JobEventBus } from '../jobs/job-event-bus'
import type { JobLinks } from '../jobs/job-links'
import type { Clock } from '../platform/clock'
import { AppError } from '../platform/errors'
import { usableTimeZone } from '../platform/time-zone'
import { textsWriter } from '../texts/text-policy'
import { webhookOutboxWriter } from '../webhooks/fan-out'
import type { AccountInfo, OperationContext, OperationScope } from './operation-context'

/** What a context is made from; the bus is absent in a console command (the server notices its writes). */
export interface ContextDeps {
  db: Db
  clock: Clock
  links: JobLinks
  bus?: JobEventBus
}

/**
 * What a committed job change sets off inside its transaction, in this order: the customer and
 * driver texts of the policy, then the webhook outbox. Registered here, once, for every actor.
 */
export const JOB_WRITERS: readonly JobWriter[] = [textsWriter, webhookOutboxWriter]

/** Makes every operation context: the only place an actor, its account and its scope are put together. */
export function createContextFactory(deps: ContextDeps) {
  const afterCommit = deps.bus ? () => deps.bus!.notify() : () => {}
  const make = (actor: Actor, account: AccountInfo, scope: OperationScope, requestId?: string): OperationContext =>
    ({ db: deps.db, clock: deps.clock, links: deps.links, actor, account, scope, jobWriters: JOB_WRITERS, afterCommit, requestId })
  const accountInfo = (accountId: string): AccountInfo => {
    const a = findAccountById(deps.db, accountId)
    if (!a) throw new AppError('not_found', `No account with id ${accountId} was found.`, { id: accountId })
    return { id: a.id, name: a.name, phone: a.phone, defaultCountry: a.defaultCountry, timeZone: usableTimeZone(a.timeZone) }
  }
  // A key's actor, account and scope, made once per resolved principal (the authenticator makes a
  // new principal whenever keys or the database change) and shared by its requests, read-only.
  const ofKey = new WeakMap<Principal, { actor: Actor; account: AccountInfo; scope: OperationScope }>()
  return {
    /** An API key's request: actor `system`, the key's scopes and sites. */
    forKey(p: Principal, requestId?: string): OperationContext {
      let parts = ofKey.get(p)
      if (!parts) {
        parts = {
          actor: { kind: 'system', via: 'key', keyId: p.keyId, scopes: p.scopes },
          account: { id: p.accountId, name: p.accountName, phone: p.accountPhone, defaultCountry: p.defaultCountry, timeZone: usableTimeZone(p.timeZone) },
          scope: { accountId: p.accountId, siteIds: p.siteIds },
        }
        ofKey.set(p, parts)
      }
      return make(parts.actor, parts.account, parts.scope, requestId)
    },
    /** A dashboard user's request: actor `dispatcher` (owner or dispatcher role), their account and sites. */
    forDispatcher(user: { userId: string; role: 'owner' | 'dispatcher'; accountId: string; siteIds?: string[] | null }, requestId?: string): OperationContext {
      return make({ kind: 'dispatcher', userId: user.userId, role: user.role }, accountInfo(user.accountId), { accountId: user.accountId, siteIds: user.siteIds ?? null }, requestId)
    },
    /** The holder of a job's driver link: actor `driver`, that job only. */
    forDriver(link: { accountId: string; jobId: string; unitId: string }, requestId?: string): OperationContext {
      return make({ kind: 'driver', unitId: link.unitId, jobId: link.jobId }, accountInfo(link.accountId), { accountId: link.accountId, siteIds: null, jobId: link.jobId }, requestId)
    },
    /** The customer (their tracking link, or a text they sent): actor `customer`, that job only. */
    forCustomer(link: { accountId: string; jobId: string }, requestId?: string): OperationContext {
      return make({ kind: 'customer', jobId: link.jobId }, accountInfo(link.accountId), { accountId: link.accountId, siteIds: null, jobId: link.jobId }, requestId)
    },
    /** The operator at the console (CLI commands, the demo loader): actor `system`, the whole account. */
    forOperator(accountId: string): OperationContext {
      return make({ kind: 'system', via: 'operator' }, accountInfo(accountId), { accountId, siteIds: null })
    },
  }
}

/** The factory's type, passed to routes and commands. */
export type ContextFactory = ReturnType<typeof createContextFactory>

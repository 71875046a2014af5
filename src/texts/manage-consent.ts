import { actorSource, requirePermission } from '../accounts/actor'
import { InputError } from '../platform/errors'
import { normalizePhone } from '../platform/phone'
import type { OperationContext } from '../operations/operation-context'
import { listConsents, recordConsent, recordOptOut, type ConsentView } from './consent'

/** A number as typed, in E.164 (read in the account's default country), else 422 on `phone`. */
function numberOf(ctx: OperationContext, raw: string): string {
  const phone = normalizePhone(raw, ctx.account.defaultCountry)
  if (!phone) throw new InputError(`"${raw}" is not a phone number we can text (use the +country form, e.g. +15035550100)`, 'phone')
  return phone
}

/** A number's consent record (or, with no number, the account's latest 100), as `towline texts consent` shows them. */
export function lookUpConsent(ctx: OperationContext, rawPhone?: string): { phone: string | null; records: ConsentView[] } {
  requirePermission(ctx.actor, 'settings:manage')
  const phone = rawPhone === undefined ? null : numberOf(ctx, rawPhone)
  return { phone, records: listConsents(ctx.db, ctx.account.id, phone ?? undefined) }
}

/**
 * Opts a number out of the account's texts, as if it had texted STOP (a customer who asked by
 * phone): recorded with who did it (`cli`, `dispatcher:<user id>`). Queued texts to it are
 * skipped when their turn comes; only START (or startTexts) lets it be texted again.
 */
export function stopTexts(ctx: OperationContext, rawPhone: string): { phone: string; record: ConsentView } {
  requirePermission(ctx.actor, 'settings:manage')
  const phone = numberOf(ctx, rawPhone)
  recordOptOut(ctx.db, ctx.account.id, phone, actorSource(ctx.actor), ctx.clock.now())
  return { phone, record: listConsents(ctx.db, ctx.account.id, phone)[0]! }
}

/** Lets a number be texted again, as START does: its opt-out is cleared and its consent recorded with who did it. */
export function startTexts(ctx: OperationContext, rawPhone: string): { phone: string; record: ConsentView } {
  requirePermission(ctx.actor, 'settings:manage')
  const phone = numberOf(ctx, rawPhone)
  recordConsent(ctx.db, ctx.account.id, phone, actorSource(ctx.actor), ctx.clock.now(), true)
  return { phone, record: listConsents(ctx.db, ctx.account.id, phone)[0]! }
}

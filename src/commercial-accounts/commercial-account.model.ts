import { t, type Static } from 'elysia'
import { named, oneOf } from '../platform/schema'
import type { CommercialAccountContact } from './commercial-account.table'

/** The kinds of commercial account, in the order the dashboard offers them. */
export const COMMERCIAL_ACCOUNT_KINDS = ['motor_club', 'police', 'fleet', 'body_shop', 'dealer', 'insurance', 'municipality', 'private_property', 'other'] as const
export type CommercialAccountKind = (typeof COMMERCIAL_ACCOUNT_KINDS)[number]

/** The words the dashboard shows for each kind. */
export const KIND_LABELS: Record<CommercialAccountKind, string> = {
  motor_club: 'Motor club', police: 'Police', fleet: 'Fleet', body_shop: 'Body shop', dealer: 'Dealer', insurance: 'Insurance',
  municipality: 'Municipality', private_property: 'Private property', other: 'Other',
}

/** Most contacts one commercial account keeps. */
export const MAX_CONTACTS = 20
/** Longest rates, billing address or internal notes text. */
export const MAX_PRIVATE_TEXT = 2000
/** Longest name. */
export const MAX_NAME = 200

/** What creating or saving a commercial account takes (the dashboard's form, read into this shape). */
export interface CommercialAccountInput {
  name: string
  kind: string
  contacts: { name?: string | null; role?: string | null; phone?: string | null; email?: string | null }[]
  rates?: string | null
  billing_address?: string | null
  internal_notes?: string | null
}

const Timestamp = t.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' })

/** A commercial account as the API shows it: never its rates, billing address or internal notes. */
export const CommercialAccount = named('CommercialAccount', t.Object({
  object: t.Literal('commercial_account'),
  id: t.String({ examples: ['cac_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }),
  name: t.String({ description: 'Unique within the account (compared without case).' }),
  kind: oneOf([...COMMERCIAL_ACCOUNT_KINDS], { description: `One of ${COMMERCIAL_ACCOUNT_KINDS.join(', ')}.` }),
  contacts: t.Array(t.Object({
    name: t.String(),
    role: t.Nullable(t.String({ description: 'e.g. dispatch desk, billing, sergeant on duty.' })),
    phone: t.Nullable(t.String({ description: 'E.164.' })),
    email: t.Nullable(t.String()),
  }), { description: 'At most 20.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'An entry of the commercial accounts directory: a motor club, police agency, fleet, body shop, dealer... the company works for. Its rates, billing address and internal notes stay in the dashboard and are never in any API response. Clients must tolerate fields added later.' }))
export type CommercialAccount = Static<typeof CommercialAccount>

/** The {id} of /accounts/{id}. */
export const CommercialAccountIdParams = t.Object({ id: t.String({ description: 'Commercial account id (cac_...).' }) })

/** The commercial account a job is done for, as the job shows it. */
export interface CommercialAccountRef { id: string; name: string }

/** A contact as the API shows it: exactly these four fields, whatever the row holds. */
export const contactView = (c: CommercialAccountContact) => ({ name: c.name, role: c.role ?? null, phone: c.phone ?? null, email: c.email ?? null })

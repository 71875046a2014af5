/** The scopes of the spec's table; every endpoint requires exactly one of them. */
export const SCOPES = ['jobs:read', 'jobs:write', 'roster:read', 'services:read', 'webhooks:manage', 'accounts:read'] as const
export type Scope = (typeof SCOPES)[number]

/**
 * What each scope grants. `accounts:read` is the commercial accounts directory (motor clubs,
 * police, fleets: `cac_` ids, src/commercial-accounts/), never the tenant account a key belongs
 * to (`acct_`, this folder), which every key sees through GET /me.
 */
export const SCOPE_MEANINGS: Record<Scope, string> = {
  'jobs:read': 'Read jobs, their timelines and texts (and GET /me).',
  'jobs:write': 'Create and change jobs: status, fields, assignment, notes, reopen.',
  'roster:read': "Read units (trucks and drivers) and their positions, and see drivers' numbers in texts.",
  'services:read': 'Read services and their rate cards.',
  'webhooks:manage': 'Add, change and remove webhook endpoints; read their deliveries.',
  'accounts:read': 'Read the commercial accounts directory (GET /accounts, GET /accounts/{id}): the names, kinds and contacts of the motor clubs, police agencies, fleets... the company works for, never their rates, billing addresses or internal notes. Not the tenant account (GET /me).',
}

/** Tells whether a string names a known scope. */
export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s)
}

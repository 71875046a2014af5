/** The scopes of the spec's table; every endpoint requires exactly one of them. */
export const SCOPES = ['jobs:read', 'jobs:write', 'roster:read', 'services:read', 'webhooks:manage', 'accounts:read'] as const
export type Scope = (typeof SCOPES)[number]

/** Tells whether a string names a known scope. */
export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s)
}

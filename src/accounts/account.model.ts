import { t, type Static } from 'elysia'
import { named, oneOf, wholeNumber } from '../platform/schema'
import { SCOPES } from './scopes'

const Ref = t.Object({ id: t.String(), name: t.String() })

/** GET /me: who the key is. */
export const KeyDescription = named('ApiKey', t.Object({
  object: t.Literal('key'),
  id: t.String({ examples: ['key_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }),
  name: t.String(),
  account: Ref,
  sites: t.Array(Ref, { description: 'The sites this key can see: all of the account\'s unless the key is limited.' }),
  site_restricted: t.Boolean(),
  scopes: t.Array(oneOf([...SCOPES])),
  rate_limits: t.Object({ reads_per_minute: wholeNumber({ minimum: 1 }), writes_per_minute: wholeNumber({ minimum: 1 }) }),
}, { description: 'The API key making the request: its account, the sites it sees and its scopes.' }))
export type KeyDescription = Static<typeof KeyDescription>

import { t, type Static } from 'elysia'
import { named, oneOf, wholeNumber } from '../platform/schema'

const Timestamp = t.String({ format: 'date-time' })

/** A text (SMS) in the outbox, as GET /jobs/{id}/texts and `towline texts list --json` show it. */
export const TextMessage = named('JobText', t.Object({
  object: t.Literal('text'),
  id: t.String({ examples: ['txt_01JF3Z8Q2W4E6R8T0Y2U4I6O8P'] }),
  job_id: t.Nullable(t.String()),
  event_id: t.Nullable(t.String({ description: 'The timeline event that caused the text (GET /jobs/{id}/events), when there is one.' })),
  recipient: oneOf(['customer', 'driver']),
  to: t.Nullable(t.String({ description: "E.164; null when there was no number to text, and for a driver's text unless the key has roster:read." })),
  template: t.String({ description: 'Which template the body came from, e.g. request_received, status_en_route, driver_job_link.' }),
  body: t.String({ description: "The text as sent (or as it would have been, for skipped texts); a driver's job link shows as [driver link]." }),
  status: oneOf(['queued', 'skipped', 'sending', 'sent', 'delivered', 'failed'], { description: 'skipped carries skip_reason; failed carries error.' }),
  skip_reason: t.Nullable(t.String({ description: 'Why no text was sent: no_consent (the customer did not agree to texts), opted_out (the number texted STOP), no_phone, imported, demo (towline demo jobs), expired (not sent within TOWLINE_SMS_MAX_AGE_HOURS of being written, 6 by default).' })),
  provider: t.Nullable(t.String({ description: 'log (recorded here, nothing leaves the machine) or twilio.' })),
  provider_message_id: t.Nullable(t.String()),
  error: t.Nullable(t.String()),
  attempts: wholeNumber({ minimum: 0 }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'A text (SMS) a job caused, to its customer or driver, and where it got to.' }))
export type TextMessage = Static<typeof TextMessage>

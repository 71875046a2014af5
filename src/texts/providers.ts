import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Logger } from '../platform/log'

/** A provider refused or failed a send; `retryable` says whether trying again may work. */
export class ProviderError extends Error {
  /**
   * `maybeSent`: the request may have reached the provider and been taken (a timeout or a
   * connection lost after sending): before sending again, ask it (findSent) whether it has the text.
   */
  constructor(message: string, public retryable: boolean, public code: string | null = null, public maybeSent = false) { super(message) }
}

/** Errors of a request that never reached the other side: no connection was made. */
const NOT_REACHED = new Set(['ConnectionRefused', 'ECONNREFUSED', 'FailedToOpenSocket', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'DNSException'])

export interface OutgoingText {
  textId: string
  to: string
  body: string
  /** The account's own sending number, or null for the provider's default (TWILIO_FROM). */
  from?: string | null
}
export interface SentText { id: string; status: string }

/** Where texts go: `log` keeps them on this machine, `twilio` sends them. */
export interface SmsProvider {
  name: 'log' | 'twilio'
  /** What texts go out from when the account names no number of its own (null for log). */
  defaultFrom: string | null
  send(text: OutgoingText): Promise<SentText>
  /**
   * Finds a text the provider already took (after a crash mid-send), or null: the same body to
   * the same number, created since `sinceMs` (less two minutes of clock skew), and not already
   * the message of another of our texts (`isKnown`).
   */
  findSent(text: OutgoingText, sinceMs: number, isKnown: (providerId: string) => boolean): Promise<SentText | null>
}

/** A phone number as the log shows it: the country code and last four digits. */
export function maskPhone(phone: string): string {
  return phone.length > 6 ? `${phone.slice(0, 2)}${'*'.repeat(phone.length - 6)}${phone.slice(-4)}` : '****'
}

/** A text's body as the log shows it: its links (which act as the driver, or show the customer's tow) left out. */
export function redactLinks(body: string): string {
  return body.replace(/\bhttps?:\/\/\S+/g, '[link]')
}

/** The default provider: records texts in the log and the outbox; nothing leaves the machine. */
export function logProvider(logger: Logger): SmsProvider {
  return {
    name: 'log',
    defaultFrom: null,
    async send(t) {
      // Logs go to files and log collectors: never a job link (a capability) or a whole number. The text itself is read on the job.
      logger.info({ text_id: t.textId, to: maskPhone(t.to), body: redactLinks(t.body) }, 'text (log provider: not sent)')
      return { id: `log_${t.textId}`, status: 'sent' }
    },
    // Nothing left the machine, so a text caught mid-send is simply logged again.
    async findSent() { return null },
  }
}

export interface TwilioSettings {
  accountSid: string; authToken: string; from: string; apiBase: string; statusCallbackUrl: string
  /** How long a request to Twilio may take (15 s). */
  timeoutMs?: number
}

/** Twilio's Messages REST API: basic auth with the account SID and auth token, form-encoded bodies. */
export function twilioProvider(cfg: TwilioSettings): SmsProvider {
  const auth = 'Basic ' + Buffer.from(`${cfg.accountSid}:${cfg.authToken}`).toString('base64')
  const timeoutMs = cfg.timeoutMs ?? 15_000
  const messagesUrl = `${cfg.apiBase}/2010-04-01/Accounts/${encodeURIComponent(cfg.accountSid)}/Messages.json`
  // TWILIO_FROM is a number, or a Messaging Service (MG...) that picks the number itself.
  const viaService = /^MG[0-9a-f]{32}$/i.test(cfg.from)
  const sender = (own: string | null | undefined): Record<string, string> => own ? { From: own } : viaService ? { MessagingServiceSid: cfg.from } : { From: cfg.from }
  return {
    name: 'twilio',
    defaultFrom: cfg.from,
    async send(t) {
      let res: Response
      try {
        res = await fetch(messagesUrl, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({ To: t.to, ...sender(t.from), Body: t.body, StatusCallback: cfg.statusCallbackUrl }),
          signal: AbortSignal.timeout(timeoutMs),
        })
      } catch (err) {
        // A timeout may come after Twilio took the message: asked about before any second send.
        const code = (err as { code?: string }).code
        throw new ProviderError(`Twilio unreachable: ${(err as Error).message}`, true, null, !(code && NOT_REACHED.has(code)))
      }
      const body = (await res.json().catch(() => ({}))) as Record<string, any>
      if (res.ok && body.sid) return { id: String(body.sid), status: String(body.status ?? 'queued') }
      // Taken (2xx) but its answer unreadable: the message exists.
      if (res.ok) throw new ProviderError(`Twilio ${res.status} without a message sid`, true, null, true)
      // Twilio's error payload: { code, message, more_info, status }. 429 and 5xx are worth retrying.
      const retryable = res.status === 429 || res.status >= 500
      throw new ProviderError(`Twilio ${res.status}${body.code ? ` (${body.code})` : ''}: ${body.message ?? 'no message'}`, retryable, body.code ? String(body.code) : null)
    },
    async findSent(t, sinceMs, isKnown) {
      // Newest first, by recipient (and our number); matched on body and creation time here.
      // No DateSent filter: a message Twilio accepted but has not sent yet has no DateSent.
      const from = sender(t.from).From
      const url = `${messagesUrl}?${new URLSearchParams({ To: t.to, ...(from ? { From: from } : {}), PageSize: '100' })}`
      const res = await fetch(url, { headers: { authorization: auth, accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) })
      if (!res.ok) throw new ProviderError(`Twilio list ${res.status}`, true)
      const { messages = [] } = (await res.json()) as { messages?: Record<string, any>[] }
      // The oldest candidate not already another text's message: identical texts to one number never share one.
      const match = messages.filter((m) => m.body === t.body && Date.parse(m.date_created ?? '') >= sinceMs - 120_000 && !isKnown(String(m.sid))).at(-1)
      return match ? { id: String(match.sid), status: String(match.status) } : null
    },
  }
}

/** Checks X-Twilio-Signature: base64 HMAC-SHA1 of the URL followed by each POST parameter name and value, sorted by name. */
export function validTwilioSignature(authToken: string, url: string, params: Record<string, string>, signature: string | null): boolean {
  if (!signature || !authToken) return false
  const data = url + Object.keys(params).sort().map((k) => k + params[k]).join('')
  const expected = createHmac('sha1', authToken).update(data).digest()
  const given = Buffer.from(signature, 'base64')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

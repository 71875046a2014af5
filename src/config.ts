/** Settings, read once from flags and the environment (flags win). Nothing else reads process.env. */
import { DEFAULT_MAP_TILE_URL } from './platform/security-headers'
import { isPostgresUrl } from './db/location'
import { parseTrustedProxies, type TrustedProxies } from './platform/client-address'

/** pino's levels, as LOG_LEVEL takes them. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export interface Config {
  dbPath: string
  /** The file holding the key job links are sealed with (default: the database path + .key). */
  linkKeyFile: string
  port: number
  host: string
  publicUrl: string
  /** True when no public URL was given: serve then names the port it actually bound (--port 0). */
  publicUrlIsDefault: boolean
  /** The certificate and key files `serve` answers HTTPS with, or null for plain http (or a TLS proxy in front). */
  tls: { certFile: string; keyFile: string } | null
  /** How long a job's tracking link keeps working after the job finished. */
  trackingLinkMs: number
  rateLimitReads: number
  rateLimitWrites: number
  webhookRetryScheduleMs: number[]
  webhookTimeoutMs: number
  webhookAllowPrivate: boolean
  smsProvider: 'log' | 'twilio'
  twilio: { accountSid: string; authToken: string; from: string; apiBase: string }
  /** How long after a job finished a customer's reply is still threaded onto it. */
  smsReplyWindowMs: number
  /** Waits between attempts at a text the provider could not take. */
  smsRetryScheduleMs: number[]
  /** How old a text may be and still go out; older ones are skipped as `expired`. */
  smsMaxAgeMs: number
  /** How long webhook delivery history is kept beyond each endpoint's last 100 attempts. */
  webhookHistoryMs: number
  /** How long units' position history is kept (TOWLINE_POSITION_HISTORY_DAYS); fixes around a GOA job's arrival are kept regardless. */
  positionHistoryMs: number
  logLevel: string
  /** The pages' map tiles (`{z}/{x}/{y}` template); null: no tiles, a grey map with its markers. */
  tileUrl: string | null
  /** Body size limit of the API, in bytes. */
  maxBodyBytes: number
  /** Load balancers in front: requests from these addresses name their client in X-Forwarded-For. */
  trustedProxies: TrustedProxies
  /** Seconds a connection may stay silent before the server closes it (Bun.serve's idleTimeout); the live streams' heartbeats follow it. */
  idleTimeoutS: number
}

/** A setting that could not be understood; main prints it and exits 2. */
export class ConfigError extends Error {}

/** Flags accepted by `serve` and the operator commands, as parsed from argv. */
export type Flags = Record<string, string | boolean | undefined>

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** Parses `1m,10m,1h` into milliseconds; each entry must be later than the one before. */
export function parseSchedule(text: string, name = 'TOWLINE_WEBHOOK_RETRY_SCHEDULE'): number[] {
  const out = text.split(',').map((part) => {
    const m = DURATION.exec(part.trim())
    if (!m) throw new ConfigError(`${name}: "${part.trim()}" is not a duration like 500ms, 30s, 10m or 4h`)
    return Math.round(Number(m[1]) * UNIT_MS[m[2]!]!)
  })
  for (let i = 1; i < out.length; i++) {
    if (out[i]! <= out[i - 1]!) throw new ConfigError(`${name}: each retry must fall later than the one before`)
  }
  return out
}

function int(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name}: "${raw}" is not a whole number of at least ${min}`)
  return n
}

function flag(flags: Flags, name: string): string | undefined {
  const v = flags[name]
  return typeof v === 'string' ? v : undefined
}

/**
 * Checks a map tile URL template: http or https, with {z}, {x} and {y}, and `{s}` (Leaflet's
 * subdomains) only as the first label of the host, the one place a Content-Security-Policy
 * source may hold a wildcard. Empty means no tiles (null).
 */
function tileUrlOf(raw: string | undefined): string | null {
  if (raw === undefined) return DEFAULT_MAP_TILE_URL
  if (raw.trim() === '') return null
  const name = 'TOWLINE_TILE_URL'
  let url: URL
  try {
    url = new URL(raw.replace(/\{[a-z]+\}/g, (p) => (p === '{s}' ? 'subdomain' : '0')))
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not an absolute http or https URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name}: "${raw}" is not an absolute http or https URL`)
  if (!['{z}', '{x}', '{y}'].every((p) => raw.includes(p))) throw new ConfigError(`${name}: "${raw}" must hold {z}, {x} and {y} (e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png)`)
  if (raw.includes('{s}') && !/^https?:\/\/\{s\}\.[^/{}]+(\/|$)/.test(raw)) throw new ConfigError(`${name}: "${raw}" may use {s} only as the first part of the host name ({s}.tiles.example.net)`)
  return raw
}

/** Reads the whole configuration once. */
export function readConfig(given: Record<string, string | undefined>, flags: Flags = {}): Config {
  // A variable set to nothing (`TOWLINE_DB=` in a unit file or a compose file) is not set: its
  // default applies, as for the numbers. Except the tile URL, whose empty value means no tiles.
  const env = Object.fromEntries(Object.entries(given).filter(([k, v]) => v !== '' || k === 'TOWLINE_TILE_URL')) as Record<string, string | undefined>
  const port = int('TOWLINE_PORT', flag(flags, 'port') ?? env.TOWLINE_PORT, 8080, 0)
  if (port > 65535) throw new ConfigError(`TOWLINE_PORT: ${port} is not a port number`)
  const provider = (flag(flags, 'sms-provider') ?? env.TOWLINE_SMS_PROVIDER ?? 'log').toLowerCase()
  if (provider !== 'log' && provider !== 'twilio') throw new ConfigError(`TOWLINE_SMS_PROVIDER: "${provider}" is not log or twilio`)
  const certFile = flag(flags, 'tls-cert') || env.TOWLINE_TLS_CERT || undefined
  const keyFile = flag(flags, 'tls-key') || env.TOWLINE_TLS_KEY || undefined
  if (!certFile !== !keyFile) {
    throw new ConfigError(`TOWLINE_TLS_CERT and TOWLINE_TLS_KEY (--tls-cert, --tls-key) go together: give both the certificate and its key, or neither (${certFile ? 'the key' : 'the certificate'} is missing)`)
  }
  const tls = certFile && keyFile ? { certFile, keyFile } : null
  const givenUrl = flag(flags, 'public-url') ?? env.TOWLINE_PUBLIC_URL
  const publicUrl = (givenUrl ?? `${tls ? 'https' : 'http'}://localhost:${port}`).replace(/\/+$/, '')
  let publicProtocol: string
  try { publicProtocol = new URL(publicUrl).protocol } catch { throw new ConfigError(`TOWLINE_PUBLIC_URL: "${publicUrl}" is not an absolute URL`) }
  // Links in texts and pages start with it: only a web address opens on a phone.
  if (publicProtocol !== 'http:' && publicProtocol !== 'https:') throw new ConfigError(`TOWLINE_PUBLIC_URL: "${publicUrl}" must start with https:// (or http://)`)
  const logLevel = env.LOG_LEVEL ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL: "${logLevel}" is not a level; use one of ${LOG_LEVELS.join(', ')}`)
  if (provider === 'twilio') {
    const missing = ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'].filter((k) => !env[k])
    if (missing.length) throw new ConfigError(`TOWLINE_SMS_PROVIDER=twilio needs ${missing.join(', ')}`)
    if (!/^\+[1-9]\d{6,14}$/.test(env.TWILIO_FROM!) && !/^MG[0-9a-f]{32}$/i.test(env.TWILIO_FROM!)) {
      throw new ConfigError(`TWILIO_FROM: "${env.TWILIO_FROM}" is neither an E.164 number (+15035550100) nor a Messaging Service SID (MG...)`)
    }
  }
  const dbPath = flag(flags, 'db') ?? env.TOWLINE_DB ?? './towline.db'
  const proxies = parseTrustedProxies(flag(flags, 'trusted-proxies') ?? env.TOWLINE_TRUSTED_PROXIES ?? '')
  if (!proxies.ok) throw new ConfigError(`TOWLINE_TRUSTED_PROXIES: "${proxies.entry}" is neither an IP address nor a CIDR range (10.0.0.2, 10.0.1.0/24)`)
  return {
    dbPath,
    // Beside a SQLite file; for PostgreSQL in the working folder (every instance needs the same file).
    linkKeyFile: env.TOWLINE_LINK_KEY_FILE || defaultLinkKeyFile(dbPath),
    port,
    host: flag(flags, 'host') ?? env.TOWLINE_HOST ?? '0.0.0.0',
    publicUrl,
    publicUrlIsDefault: givenUrl === undefined,
    tls,
    trackingLinkMs: int('TOWLINE_TRACKING_LINK_DAYS', env.TOWLINE_TRACKING_LINK_DAYS, 7) * 86_400_000,
    rateLimitReads: int('TOWLINE_RATE_LIMIT_READS', env.TOWLINE_RATE_LIMIT_READS, 600),
    rateLimitWrites: int('TOWLINE_RATE_LIMIT_WRITES', env.TOWLINE_RATE_LIMIT_WRITES, 120),
    webhookRetryScheduleMs: parseSchedule(env.TOWLINE_WEBHOOK_RETRY_SCHEDULE ?? '1m,10m,1h,4h,12h,33h'),
    webhookTimeoutMs: int('TOWLINE_WEBHOOK_TIMEOUT_MS', env.TOWLINE_WEBHOOK_TIMEOUT_MS, 10_000),
    webhookAllowPrivate: env.TOWLINE_WEBHOOK_ALLOW_PRIVATE === '1' || env.TOWLINE_WEBHOOK_ALLOW_PRIVATE === 'true',
    smsProvider: provider,
    twilio: {
      accountSid: env.TWILIO_ACCOUNT_SID ?? '',
      authToken: env.TWILIO_AUTH_TOKEN ?? '',
      from: env.TWILIO_FROM ?? '',
      apiBase: (env.TOWLINE_TWILIO_API_BASE ?? 'https://api.twilio.com').replace(/\/+$/, ''),
    },
    smsRetryScheduleMs: parseSchedule(env.TOWLINE_SMS_RETRY_SCHEDULE ?? '30s,2m,10m,1h', 'TOWLINE_SMS_RETRY_SCHEDULE'),
    smsMaxAgeMs: int('TOWLINE_SMS_MAX_AGE_HOURS', env.TOWLINE_SMS_MAX_AGE_HOURS, 6) * 3_600_000,
    webhookHistoryMs: int('TOWLINE_WEBHOOK_HISTORY_DAYS', env.TOWLINE_WEBHOOK_HISTORY_DAYS, 30) * 86_400_000,
    positionHistoryMs: int('TOWLINE_POSITION_HISTORY_DAYS', env.TOWLINE_POSITION_HISTORY_DAYS, 30) * 86_400_000,
    smsReplyWindowMs: int('TOWLINE_SMS_REPLY_WINDOW_HOURS', env.TOWLINE_SMS_REPLY_WINDOW_HOURS, 72, 0) * 3_600_000,
    logLevel,
    tileUrl: tileUrlOf(env.TOWLINE_TILE_URL),
    maxBodyBytes: 256 * 1024,
    trustedProxies: proxies.ranges,
    idleTimeoutS: idleTimeout(env.TOWLINE_IDLE_TIMEOUT_SECONDS),
  }
}

/**
 * TOWLINE_IDLE_TIMEOUT_SECONDS: 5 to 255 (Bun's limit), 10 by default. Bun checks idle
 * connections every 4 s: a timeout under 5 s cuts a connection at the first check however
 * often it writes, so the live streams could not be kept open.
 */
function idleTimeout(raw: string | undefined): number {
  const s = int('TOWLINE_IDLE_TIMEOUT_SECONDS', raw, 10, 5)
  if (s > 255) throw new ConfigError(`TOWLINE_IDLE_TIMEOUT_SECONDS: ${s} is more than 255 seconds`)
  return s
}

/** Where a database's link key file is when TOWLINE_LINK_KEY_FILE names none: beside a SQLite file, in the working folder for PostgreSQL. */
export function defaultLinkKeyFile(dbPath: string): string {
  return isPostgresUrl(dbPath) ? './towline.key' : `${dbPath}.key`
}

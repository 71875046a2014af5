/** Settings read once from flags and the environment: the ones links and HTTPS add. */
import { describe, expect, test } from 'bun:test'
import { ConfigError, readConfig } from './config'

const refusal = (fn: () => unknown): string => {
  try { fn() } catch (err) { if (err instanceof ConfigError) return err.message; throw err }
  throw new Error('expected a ConfigError')
}

describe('TOWLINE_TRACKING_LINK_DAYS', () => {
  test('defaults to 7 days, takes a whole number of days, refuses anything else naming the setting', () => {
    expect(readConfig({}).trackingLinkMs).toBe(7 * 86_400_000)
    expect(readConfig({ TOWLINE_TRACKING_LINK_DAYS: '30' }).trackingLinkMs).toBe(30 * 86_400_000)
    for (const bad of ['0', '-1', '1.5', 'week']) expect(refusal(() => readConfig({ TOWLINE_TRACKING_LINK_DAYS: bad }))).toStartWith('TOWLINE_TRACKING_LINK_DAYS')
  })
})

describe('TOWLINE_IDLE_TIMEOUT_SECONDS', () => {
  test('defaults to 10 s, takes 5 to 255 whole seconds (Bun\'s limit), refuses anything else naming the setting', () => {
    expect(readConfig({}).idleTimeoutS).toBe(10)
    expect(readConfig({ TOWLINE_IDLE_TIMEOUT_SECONDS: '5' }).idleTimeoutS).toBe(5)
    expect(readConfig({ TOWLINE_IDLE_TIMEOUT_SECONDS: '255' }).idleTimeoutS).toBe(255)
    for (const bad of ['0', '4', '256', '5.5', 'long']) expect(refusal(() => readConfig({ TOWLINE_IDLE_TIMEOUT_SECONDS: bad }))).toStartWith('TOWLINE_IDLE_TIMEOUT_SECONDS')
  })
})

describe('TLS settings', () => {
  test('none by default: plain http, and the default public URL is http://localhost:<port>', () => {
    const c = readConfig({ TOWLINE_PORT: '9000' })
    expect(c.tls).toBeNull()
    expect(c.publicUrl).toBe('http://localhost:9000')
    expect(c.publicUrlIsDefault).toBe(true)
  })

  test('a certificate and a key, from flags or the environment (flags win); the default public URL becomes https', () => {
    const fromEnv = readConfig({ TOWLINE_PORT: '8443', TOWLINE_TLS_CERT: '/etc/towline/cert.pem', TOWLINE_TLS_KEY: '/etc/towline/key.pem' })
    expect(fromEnv.tls).toEqual({ certFile: '/etc/towline/cert.pem', keyFile: '/etc/towline/key.pem' })
    expect(fromEnv.publicUrl).toBe('https://localhost:8443')
    const fromFlags = readConfig({ TOWLINE_TLS_CERT: '/env/cert.pem', TOWLINE_TLS_KEY: '/env/key.pem' }, { 'tls-cert': 'c.pem', 'tls-key': 'k.pem', port: '443' })
    expect(fromFlags.tls).toEqual({ certFile: 'c.pem', keyFile: 'k.pem' })
    expect(fromFlags.publicUrl).toBe('https://localhost:443')
  })

  test('an explicit public URL is kept as given, https or not (a TLS proxy in front)', () => {
    const proxied = readConfig({ TOWLINE_PUBLIC_URL: 'https://tow.example.com' })
    expect(proxied).toMatchObject({ tls: null, publicUrl: 'https://tow.example.com', publicUrlIsDefault: false })
    const own = readConfig({ TOWLINE_PUBLIC_URL: 'https://tow.example.com/', TOWLINE_TLS_CERT: 'c', TOWLINE_TLS_KEY: 'k' })
    expect(own).toMatchObject({ publicUrl: 'https://tow.example.com', publicUrlIsDefault: false })
  })

  test('a public URL that is not a web address (ftp://, mailto:) is refused in one line naming the setting', () => {
    for (const url of ['ftp://tow.example.com', 'mailto:dispatch@example.com']) expect(refusal(() => readConfig({ TOWLINE_PUBLIC_URL: url }))).toContain('TOWLINE_PUBLIC_URL')
  })

  test('one without the other is a one-line error naming both', () => {
    for (const [env, flags] of [[{ TOWLINE_TLS_CERT: 'c.pem' }, {}], [{}, { 'tls-key': 'k.pem' }], [{ TOWLINE_TLS_CERT: 'c.pem', TOWLINE_TLS_KEY: '' }, {}]] as const) {
      const message = refusal(() => readConfig(env, flags))
      expect(message).toContain('TOWLINE_TLS_CERT')
      expect(message).toContain('TOWLINE_TLS_KEY')
      expect(message).not.toContain('\n')
    }
  })
})

describe('trusted proxies', () => {
  test('none by default; addresses and ranges from the environment or --trusted-proxies (flags win)', () => {
    expect(readConfig({}).trustedProxies).toEqual([])
    expect(readConfig({ TOWLINE_TRUSTED_PROXIES: '10.0.0.2,10.0.1.0/24' }).trustedProxies.map(([ip, bits]) => `${ip}/${bits}`)).toEqual(['10.0.0.2/32', '10.0.1.0/24'])
    expect(readConfig({ TOWLINE_TRUSTED_PROXIES: '10.0.0.2' }, { 'trusted-proxies': '127.0.0.2' }).trustedProxies.map(([ip]) => `${ip}`)).toEqual(['127.0.0.2'])
  })
  test('an entry that is no address is a one-line error naming the setting and the entry', () => {
    const message = refusal(() => readConfig({ TOWLINE_TRUSTED_PROXIES: '10.0.0.2, balancer.internal' }))
    expect(message).toContain('TOWLINE_TRUSTED_PROXIES')
    expect(message).toContain('"balancer.internal"')
    expect(message).not.toContain('\n')
  })
})

test('a variable set to nothing is not set: its default applies (the tile URL excepted, whose empty value means no tiles)', () => {
  const c = readConfig({ TOWLINE_DB: '', TOWLINE_HOST: '', TOWLINE_WEBHOOK_RETRY_SCHEDULE: '', TOWLINE_SMS_RETRY_SCHEDULE: '', TOWLINE_SMS_PROVIDER: '', TOWLINE_PUBLIC_URL: '', TOWLINE_TILE_URL: '' })
  const d = readConfig({})
  expect({ db: c.dbPath, host: c.host, webhooks: c.webhookRetryScheduleMs, sms: c.smsRetryScheduleMs, publicUrl: c.publicUrl, defaultUrl: c.publicUrlIsDefault })
    .toEqual({ db: d.dbPath, host: d.host, webhooks: d.webhookRetryScheduleMs, sms: d.smsRetryScheduleMs, publicUrl: d.publicUrl, defaultUrl: true })
  expect(d.dbPath).toBe('./towline.db')
  expect(c.tileUrl).toBeNull()
})

test('LOG_LEVEL takes pino\'s levels; another is refused in one line naming the setting', () => {
  expect(readConfig({ LOG_LEVEL: 'warn' }).logLevel).toBe('warn')
  expect(readConfig({}).logLevel).toBe('info')
  expect(refusal(() => readConfig({ LOG_LEVEL: 'verbose' }))).toContain('LOG_LEVEL: "verbose" is not a level')
})

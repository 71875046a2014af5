import { randomBase62 } from '../platform/ids'

/** Mints an endpoint secret: `whsec_` and 32 base62 characters. */
export function mintSecret(): string {
  return 'whsec_' + randomBase62(32)
}

/** Lowercase hex HMAC-SHA256 of "<t>.<body>", keyed with the whole secret string. */
export function sign(secret: string, t: number, body: string): string {
  // Bun's own HMAC: half the time of node:crypto's createHmac, paid on every delivery.
  return new Bun.CryptoHasher('sha256', secret).update(`${t}.${body}`).digest('hex')
}

/** The X-SVC-Signature value: `t=<unix seconds>,v1=<hex>`, with a second v1 while a rotated-out secret is still valid. */
export function signatureHeader(secrets: string[], t: number, body: string): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${sign(s, t, body)}`)].join(',')
}

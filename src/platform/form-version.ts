/**
 * The version a page's form was drawn with: 22 characters of the SHA-256 of what it showed. A
 * save that carries it is refused when what is saved now has another (someone saved since), so
 * nothing is overwritten silently (the company settings, text templates, commercial accounts).
 */
export function formVersion(shown: unknown): string {
  return new Bun.CryptoHasher('sha256').update(typeof shown === 'string' ? shown : JSON.stringify(shown)).digest('base64url').slice(0, 22)
}

/** A posted version as formVersion makes them, or undefined (a form without one, as the console's, saves as it is). */
export function postedVersion(raw: string): string | undefined {
  return /^[A-Za-z0-9_-]{22}$/.test(raw) ? raw : undefined
}

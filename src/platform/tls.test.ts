/** The certificate and key `serve --tls-cert --tls-key` reads: each problem is one line naming the file. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { makeTestCa, type TestCa } from '../../test/https-receiver'
import { readTlsFiles, TlsFileError } from './tls'

let ca: TestCa
let cert: string
let key: string
beforeAll(() => {
  ca = makeTestCa()
  cert = join(ca.dir, 'serve-cert.pem')
  key = join(ca.dir, 'serve-key.pem')
  writeFileSync(cert, ca.cert)
  writeFileSync(key, ca.key)
})
afterAll(() => Bun.spawnSync(['rm', '-rf', ca.dir]))

const refusal = (fn: () => unknown): string => {
  try { fn() } catch (err) { if (err instanceof TlsFileError) return err.message; throw err }
  throw new Error('expected a TlsFileError')
}

describe('readTlsFiles', () => {
  test('returns the PEM certificate and key when they belong together', () => {
    expect(readTlsFiles(cert, key)).toEqual({ cert: ca.cert, key: ca.key })
  })

  test('a missing or unreadable file, a file holding no certificate or key, or a key of another certificate: one line naming the file', () => {
    const other = ca.issue(['DNS:other.localhost'])
    const otherKey = join(ca.dir, 'other-key.pem')
    writeFileSync(otherKey, other.key)
    const locked = join(ca.dir, 'locked.pem')
    writeFileSync(locked, ca.key)
    chmodSync(locked, 0o000)
    const cases: [string, string, string[]][] = [
      [join(ca.dir, 'missing.pem'), key, ['missing.pem', 'does not exist']],
      [cert, join(ca.dir, 'missing-key.pem'), ['missing-key.pem', 'does not exist']],
      [key, key, ['serve-key.pem', 'certificate']],
      [cert, cert, ['serve-cert.pem', 'private key']],
      [cert, otherKey, ['other-key.pem', 'serve-cert.pem', 'does not belong']],
      [ca.dir, key, [ca.dir, 'directory']],
    ]
    // Root reads any file whatever its mode; the case holds only for other users.
    if (process.getuid?.() !== 0) cases.push([cert, locked, ['locked.pem', 'permission']])
    for (const [c, k, words] of cases) {
      const message = refusal(() => readTlsFiles(c, k))
      expect(message).not.toContain('\n')
      for (const w of words) expect({ c, k, message, has: message.includes(w) }).toEqual({ c, k, message, has: true })
    }
  })
})

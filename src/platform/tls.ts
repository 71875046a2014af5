/** The certificate and key `towline serve --tls-cert --tls-key` answers HTTPS with. */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'

/** A certificate or key file that cannot be used; main prints it (one line naming the file) and exits 2. */
export class TlsFileError extends Error {}

const WHY: Record<string, string> = { ENOENT: 'it does not exist', EACCES: 'permission denied', EPERM: 'permission denied', EISDIR: 'it is a directory' }

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? ''
    throw new TlsFileError(`cannot read the TLS ${what} ${path}: ${WHY[code] ?? (err as Error).message}`)
  }
}

/**
 * Reads a PEM certificate (the server's first, then any chain) and its private key, and checks
 * they belong together, so a wrong file stops `serve` with a line naming it instead of failing
 * every handshake later.
 */
export function readTlsFiles(certFile: string, keyFile: string): { cert: string; key: string } {
  const cert = readPem(certFile, 'certificate')
  const key = readPem(keyFile, 'key')
  let x509: X509Certificate
  try { x509 = new X509Certificate(cert) } catch {
    throw new TlsFileError(`${certFile} (--tls-cert, TOWLINE_TLS_CERT) holds no PEM certificate`)
  }
  let privateKey: KeyObject
  try { privateKey = createPrivateKey(key) } catch {
    throw new TlsFileError(`${keyFile} (--tls-key, TOWLINE_TLS_KEY) holds no unencrypted PEM private key`)
  }
  if (!x509.checkPrivateKey(privateKey)) throw new TlsFileError(`the key in ${keyFile} does not belong to the certificate in ${certFile}`)
  return { cert, key }
}

import { dirname } from 'node:path'
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { accessSync, chmodSync, constants, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'

/** A key file that is missing or does not hold a key; main prints it and exits 2. */
export class SealKeyError extends Error {}

/** Hex SHA-256 of a secret token: what the database keeps and lookups compare. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/**
 * Seals a short secret with AES-256-GCM under `key`: base64url of IV (12 bytes), ciphertext and
 * tag. The database keeps this beside the token's hash, so a link can be shown again while a
 * copy of the database alone reveals nothing.
 */
export function seal(key: Buffer, secret: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')
}

/** Opens what `seal` made, or returns null if it was sealed under another key or altered. */
export function unseal(key: Buffer, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, 'base64url')
    if (raw.length < 29) return null
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(raw.length - 16))
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8')
  } catch {
    return null
  }
}

/** Writes a key file (one base64 line, readable by its owner only); never over an existing file. */
export function writeKeyFile(path: string, key: Buffer): void {
  try {
    writeFileSync(path, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' })
  } catch (err) {
    // Said in one line, as every refusal to start is: the operator chose this path (TOWLINE_LINK_KEY_FILE, --db).
    const code = (err as NodeJS.ErrnoException).code ?? ''
    if (CANNOT_WRITE[code]) throw new SealKeyError(cannotCreate(path, code))
    throw err
  }
  chmodSync(path, 0o600) // the umask may have taken bits off; never added
}

/** Why the key file at `path` could be neither read nor made (a folder, an unusable folder), or null. */
export function keyFileProblem(path: string): string | null {
  if (existsSync(path)) return statSync(path).isDirectory() ? FOLDER(path) : null
  const folder = dirname(path)
  const code = !existsSync(folder) ? 'ENOENT' : !statSync(folder).isDirectory() ? 'ENOTDIR' : writable(folder) ? null : 'EACCES'
  return code ? cannotCreate(path, code) : null
}

const FOLDER = (path: string) => `${path} is a folder, not a key file (TOWLINE_LINK_KEY_FILE names the file itself)`
const cannotCreate = (path: string, code: string) => `cannot create the link key file ${path}: ${CANNOT_WRITE[code]!(dirname(path))}; nothing was sealed`
function writable(folder: string): boolean {
  try { accessSync(folder, constants.W_OK); return true } catch { return false }
}

/** Why a key file could not be created, by the error's code, naming its folder. */
const CANNOT_WRITE: Record<string, (folder: string) => string> = {
  ENOENT: (folder) => `the folder ${folder} does not exist (create it, or point TOWLINE_LINK_KEY_FILE elsewhere)`,
  ENOTDIR: (folder) => `${folder} is not a folder`,
  EACCES: (folder) => `this user may not write in ${folder}`,
  EPERM: (folder) => `this user may not write in ${folder}`,
  EROFS: (folder) => `${folder} is on a read-only file system`,
  EISDIR: () => 'that is a folder, not a file',
}

/**
 * Reads the 32-byte key kept in `path` (one base64 line), or creates it (mode 0600) when
 * `create` is set and the file does not exist.
 */
export function loadKeyFile(path: string, opts: { create: boolean }): { key: Buffer; created: boolean } {
  if (!existsSync(path)) {
    if (!opts.create) throw new SealKeyError(`the key file ${path} does not exist`)
    const key = randomBytes(32)
    writeKeyFile(path, key)
    return { key, created: true }
  }
  if (statSync(path).isDirectory()) throw new SealKeyError(FOLDER(path))
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64')
  if (key.length !== 32) throw new SealKeyError(`${path} does not hold a Towline key (32 bytes, base64)`)
  return { key, created: false }
}

/**
 * Dashboard passwords: argon2id through Bun.password, at the OWASP minimum cost (19 MiB, 2
 * passes, ~30 ms here). Each hash in progress holds its memory, and memory given to argon2 is
 * not returned to the system, so at most two run at once: a burst of sign-ins waits its turn
 * instead of growing the process.
 */
import { charCount } from '../platform/chars'

const ARGON2 = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const

/** The shortest password accepted (pages.md). */
export const MIN_PASSWORD_LENGTH = 10
const MAX_PASSWORD_LENGTH = 256

let running = 0
const waiting: (() => void)[] = []
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve))
  running++
  try { return await work() } finally {
    running--
    waiting.shift()?.()
  }
}

/** What is wrong with a proposed password, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (charCount(password) < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`
  if (charCount(password) > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`
  return null
}

/** The argon2id hash (PHC string) of a password. */
export function hashPassword(password: string): Promise<string> {
  return inTurn(() => Bun.password.hash(password, ARGON2))
}

// Checked against when the email is unknown, so an unknown email costs what a wrong password costs.
let dummy: Promise<string> | null = null

/** True when `password` matches `hash`; with no hash (unknown email) it does the same work and answers false. */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  // Longer than any stored password could be: refused without hashing megabytes.
  if (password.length > MAX_PASSWORD_LENGTH) password = password.slice(0, MAX_PASSWORD_LENGTH + 1)
  if (hash === null) {
    dummy ??= hashPassword('not-a-password-anyone-has')
    const standIn = await dummy
    await inTurn(() => Bun.password.verify(password, standIn))
    return false
  }
  try { return await inTurn(() => Bun.password.verify(password, hash)) } catch { return false }
}

/** A generated password: 16 characters from an alphabet without look-alikes (~93 bits). */
export function generatePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ23456789'
  let out = ''
  while (out.length < 16) {
    for (const b of crypto.getRandomValues(new Uint8Array(32))) {
      if (b < 216 && out.length < 16) out += alphabet[b % 54]
    }
  }
  return out
}

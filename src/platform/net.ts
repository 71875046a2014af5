import { isIP } from 'node:net'
import { lookup } from 'node:dns/promises'

/** Tells whether an IP address is loopback, private, link-local, unique-local or otherwise not public. */
export function isPrivateAddress(ip: string): boolean {
  const v = isIP(ip)
  if (v === 4) {
    const [a, b] = ip.split('.').map(Number) as [number, number]
    return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 198 && (b === 18 || b === 19)) || a >= 224
  }
  if (v === 6) {
    const x = ip.toLowerCase()
    if (x === '::' || x === '::1') return true
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(x)
    if (mapped) return isPrivateAddress(mapped[1]!)
    return /^(fc|fd|fe8|fe9|fea|feb|ff)/.test(x)
  }
  return false
}

/** Resolves a host name to all its addresses (an IP literal resolves to itself). */
export async function resolveHost(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '')
  if (isIP(bare)) return [bare]
  const found = await lookup(bare, { all: true, verbatim: true })
  return found.map((a) => a.address)
}

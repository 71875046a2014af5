import ipaddr from 'ipaddr.js'

type Address = ipaddr.IPv4 | ipaddr.IPv6
/** Address ranges whose requests are a proxy's (a load balancer in front of towline). */
export type TrustedProxies = ReadonlyArray<[Address, number]>

/**
 * Reads TOWLINE_TRUSTED_PROXIES: addresses and CIDR ranges, separated by commas or spaces
 * (`10.0.0.2, 10.0.1.0/24, fd00::/8`). Returns the ranges, or the entry that is neither.
 */
export function parseTrustedProxies(text: string): { ok: true; ranges: TrustedProxies } | { ok: false; entry: string } {
  const ranges: [Address, number][] = []
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    try {
      if (entry.includes('/')) {
        const [ip, bits] = ipaddr.parseCIDR(entry)
        ranges.push(ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96 ? [(ip as ipaddr.IPv6).toIPv4Address(), bits - 96] : [ip, bits])
      } else {
        const ip = ipaddr.process(entry)
        ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128])
      }
    } catch {
      return { ok: false, entry }
    }
  }
  return { ok: true, ranges }
}

/** An address as written in X-Forwarded-For (bare, `[v6]:port` or `v4:port`), or null when it is none. */
function addressIn(entry: string): Address | null {
  let text = entry.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text)
  if (bracketed) text = bracketed[1]!
  else if (/^[\d.]+:\d+$/.test(text)) text = text.slice(0, text.indexOf(':'))
  try {
    return ipaddr.process(text)
  } catch {
    return null
  }
}

const isTrusted = (ip: Address, trusted: TrustedProxies) => trusted.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))

/**
 * The address a request came from: the socket's peer, unless the peer is a trusted proxy; then
 * X-Forwarded-For is read from its right end (each proxy appends the address it was reached
 * from), skipping trusted proxies, and the first other address is the client. What a client
 * writes in the header itself sits left of that and is never taken: a client cannot pick the
 * address it is limited by. An entry that is no address ends the walk at the proxy before it.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | null, trusted: TrustedProxies): string | undefined {
  if (!peer || !trusted.length) return peer
  let client = addressIn(peer)
  if (!client || !isTrusted(client, trusted)) return peer
  const hops = forwardedFor ? forwardedFor.split(',') : []
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = addressIn(hops[i]!)
    if (!hop) break
    client = hop
    if (!isTrusted(hop, trusted)) break
  }
  return client.toString()
}

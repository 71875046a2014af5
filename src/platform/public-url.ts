import ipaddr from 'ipaddr.js'

/** Why a phone on the mobile network could not use a public URL well. */
export type PublicUrlProblem =
  | { kind: 'unreachable'; reason: string }
  | { kind: 'plain-http' }

// Names that resolve only on this machine or this network, never from a phone on the road.
const LOCAL_SUFFIXES: [string, string][] = [
  ['localhost', 'localhost is this machine'],
  ['local', '.local names resolve only on this network'],
  ['internal', '.internal names resolve only on this network'],
  ['lan', '.lan names resolve only on this network'],
  ['home.arpa', '.home.arpa names resolve only on this network'],
]

const RANGE_REASONS: Record<string, string> = {
  loopback: 'a loopback address is this machine',
  unspecified: '0.0.0.0 is no address a phone can reach',
  private: 'a private address is reachable only on this network',
  uniqueLocal: 'a unique-local address is reachable only on this network',
  linkLocal: 'a link-local address is reachable only on this network segment',
  carrierGradeNat: 'a carrier-grade NAT address is not reachable from outside',
}

/**
 * Tells whether drivers' phones (the Traccar Client app, links in texts) can use this public
 * URL: null when they can, else why not. A pure check of the URL: nothing is resolved or sent.
 */
export function publicUrlProblem(publicUrl: string): PublicUrlProblem | null {
  let url: URL
  try { url = new URL(publicUrl) } catch { return { kind: 'unreachable', reason: 'it is not a URL' } }
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '')
  if (ipaddr.isValid(host)) {
    const range = ipaddr.process(host).range()
    if (range !== 'unicast') return { kind: 'unreachable', reason: RANGE_REASONS[range] ?? `a ${range} address is not reachable from the internet` }
  } else {
    for (const [suffix, reason] of LOCAL_SUFFIXES) {
      if (host === suffix || host.endsWith(`.${suffix}`)) return { kind: 'unreachable', reason }
    }
    if (!host.includes('.')) return { kind: 'unreachable', reason: 'a name without a domain resolves only on this network' }
  }
  return url.protocol === 'http:' ? { kind: 'plain-http' } : null
}

/**
 * Tells whether a public URL is plain http on a host other than this machine (loopback and
 * localhost names are secure contexts to a browser even over http): phones then refuse the
 * position and the camera to its pages, so `serve` warns. A pure check: nothing is resolved.
 */
export function plainHttpBeyondThisMachine(publicUrl: string): boolean {
  let url: URL
  try { url = new URL(publicUrl) } catch { return false }
  if (url.protocol !== 'http:') return false
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return false
  return !(ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback')
}

import { isIP } from 'node:net'
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

type Address = ipaddr.IPv4 | ipaddr.IPv6

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3')
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96')
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96')

/** The IPv4 address an IPv6 address carries, for the forms that forward to it (mapped, translated, NAT64, 6to4). */
function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts
  switch (a.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return new ipaddr.IPv4([p[6]! >> 8, p[6]! & 255, p[7]! >> 8, p[7]! & 255])
    case 'rfc6052': // NAT64: only the well-known /96 has a fixed place for the address
      return a.match(NAT64_WELL_KNOWN) ? new ipaddr.IPv4([p[6]! >> 8, p[6]! & 255, p[7]! >> 8, p[7]! & 255]) : null
    case '6to4': // 2002:AABB:CCDD::/48
      return new ipaddr.IPv4([p[1]! >> 8, p[1]! & 255, p[2]! >> 8, p[2]! & 255])
    default:
      return null
  }
}

/**
 * Names the range of an address as ipaddr.js knows it ('unicast' for a public one), judging
 * IPv6 forms that carry an IPv4 address by that address; 'invalid' if it is not an address.
 */
export function addressRange(ip: string): string {
  let a: Address
  try { a = ipaddr.parse(ip) } catch { return 'invalid' }
  if (a.kind() === 'ipv4') return a.range()
  const v6 = a as ipaddr.IPv6
  const range = v6.range()
  if (range === 'rfc6052' && !v6.match(NAT64_WELL_KNOWN)) return 'localUseNat64' // 64:ff9b:1::/48 translates into a private network
  const v4 = embeddedIPv4(v6)
  if (v4) return v4.range() === 'unicast' ? 'unicast' : `${range} of ${v4.range()}`
  if (range !== 'unicast') return range
  // Deprecated IPv4-compatible (::a.b.c.d) and anything outside 2000::/3 is no public host.
  if (v6.match(IPV4_COMPATIBLE)) return 'ipv4Compatible'
  return v6.match(GLOBAL_UNICAST) ? 'unicast' : 'unallocated'
}

/** Tells whether an address is plainly public unicast: not loopback, private, link-local, reserved, multicast, or any of those in an IPv6 disguise. */
export function isPublicAddress(ip: string): boolean {
  return addressRange(ip) === 'unicast'
}

/** Tells whether a host name means this machine without asking DNS (`localhost`, `*.localhost`, with or without trailing dots). */
export function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

/** Looks a host name up: every address it has. */
export type Resolver = (host: string) => Promise<string[]>

/** Resolves a host name with the system resolver (getaddrinfo), all addresses in the order it gives them. */
export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)

/** How target hosts are resolved and which addresses are allowed (tests replace both). */
export interface AddressPolicy {
  resolve?: Resolver
  isAllowedAddress?: (ip: string) => boolean
}

/** What resolving a URL host found: whether it was an IP literal, its addresses, and those the policy refuses. */
export interface HostCheck { literal: boolean; addresses: string[]; refused: string[] }

/**
 * Resolves a URL's host once and checks every address: an IP literal is its own address,
 * a localhost name is loopback without DNS, any other name asks the resolver.
 * Throws when the resolver fails or finds nothing.
 */
export async function checkHost(hostname: string, policy: AddressPolicy = {}): Promise<HostCheck> {
  const bare = hostname.replace(/^\[|\]$/g, '')
  const allowed = policy.isAllowedAddress ?? isPublicAddress
  const literal = isIP(bare) !== 0
  let addresses: string[]
  if (literal) addresses = [bare]
  else if (isLoopbackName(bare)) addresses = ['127.0.0.1', '::1']
  else {
    addresses = await (policy.resolve ?? systemResolver)(bare)
    if (!addresses.length) throw Object.assign(new Error(`${bare} has no address`), { code: 'ENOTFOUND' })
  }
  return { literal, addresses, refused: addresses.filter((a) => !allowed(a)) }
}

const WORDS: Record<string, string> = {
  linkLocal: 'link-local', uniqueLocal: 'unique-local', carrierGradeNat: 'carrier-grade NAT', deprecatedSiteLocal: 'site-local',
  ipv4Mapped: 'IPv4-mapped', rfc6145: 'IPv4-translated', rfc6052: 'NAT64', ipv4Compatible: 'IPv4-compatible', localUseNat64: 'local-use NAT64',
  teredo: 'Teredo', as112: 'AS112', as112v6: 'AS112', amt: 'AMT', unallocated: 'outside global unicast', invalid: 'not an address',
}

/** Describes refused addresses in words for a message: `127.0.0.1 loopback, ::ffff:a00:1 IPv4-mapped private`. */
export function describeRefused(refused: string[]): string {
  const words = (range: string) => range.split(' of ').map((r) => WORDS[r] ?? r.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)).join(' ')
  return refused.map((a) => `${a} ${words(addressRange(a))}`).join(', ')
}

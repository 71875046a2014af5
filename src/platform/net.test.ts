import { describe, expect, test } from 'bun:test'
import { checkHost, isLoopbackName, isPublicAddress } from './net'

// Pure classification of literal addresses: nothing here sends a packet anywhere.
const NOT_PUBLIC: [string, string][] = [
  ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'this network'], ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'], ['10.255.255.255', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.20', 'private'],
  ['169.254.169.254', 'link-local (cloud metadata)'], ['100.64.0.1', 'carrier-grade NAT'], ['100.127.255.254', 'carrier-grade NAT'],
  ['198.18.0.1', 'benchmarking'], ['198.19.255.255', 'benchmarking'], ['192.0.0.9', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation'], ['198.51.100.7', 'documentation'], ['203.0.113.9', 'documentation'], ['192.88.99.1', '6to4 relay anycast'],
  ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'], ['240.0.0.1', 'reserved'], ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'], ['::1', 'loopback'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local with a zone'], ['febf::1', 'link-local'],
  ['fc00::1', 'unique-local'], ['fd12:3456::1', 'unique-local'], ['fec0::1', 'deprecated site-local'], ['ff02::1', 'multicast'], ['ff05::1:3', 'multicast'],
  ['100::1', 'discard'], ['2001:db8::1', 'documentation'], ['3fff::1', 'documentation'], ['2001:2::1', 'benchmarking'],
  ['2001::1', 'Teredo'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'], ['5f00::1', 'segment routing'], ['4000::1', 'outside global unicast 2000::/3'],
  // IPv6 forms that carry an IPv4 address are judged by it.
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'], ['::ffff:7f00:1', 'IPv4-mapped loopback'], ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'], ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'], ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
  ['::ffff:0:7f00:1', 'IPv4-translated loopback'], ['::7f00:1', 'IPv4-compatible loopback'], ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::a00:1', 'IPv4-compatible private'], ['::808:808', 'IPv4-compatible (deprecated, never a real target)'],
  ['64:ff9b::7f00:1', 'NAT64 loopback'], ['64:ff9b::127.0.0.1', 'NAT64 loopback'], ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'], ['64:ff9b::c0a8:114', 'NAT64 private'],
  ['64:ff9b:1::a00:1', 'local-use NAT64'], ['64:ff9b:1::808:808', 'local-use NAT64 (a private translator, whatever it embeds)'],
  ['2002:7f00:1::', '6to4 loopback'], ['2002:a00:1::1', '6to4 private'], ['2002:c0a8:114::1', '6to4 private'], ['2002:a9fe:a9fe::', '6to4 link-local'],
  // The classifier reads resolver answers; anything it cannot read as an address is refused.
  ['', 'empty'], ['localhost', 'a name'], ['not-an-ip', 'a name'], ['1.2.3.4.5', 'five parts'], ['::ffff:999.0.0.1', 'bad embedded part'],
  ['2130706433', 'decimal loopback'], ['0x7f.1', 'hex short loopback'], ['0177.0.0.1', 'octal loopback'], ['127.1', 'short loopback'],
]
const PUBLIC: [string, string][] = [
  ['8.8.8.8', ''], ['1.1.1.1', ''], ['93.184.216.34', ''], ['11.0.0.1', ''], ['100.63.255.255', 'just below carrier-grade NAT'],
  ['100.128.0.0', 'just above carrier-grade NAT'], ['172.15.255.255', 'just below 172.16/12'], ['172.32.0.0', 'just above 172.16/12'],
  ['198.17.255.255', 'just below benchmarking'], ['198.20.0.0', 'just above benchmarking'], ['223.1.1.1', ''],
  ['2606:4700:4700::1111', ''], ['2a00:1450:4001:81c::200e', ''], ['2001:4860:4860::8888', 'in 2001::/16 but not Teredo'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'], ['::ffff:808:808', 'IPv4-mapped public'], ['64:ff9b::808:808', 'NAT64 of a public address (DNS64)'],
  ['64:ff9b::1.1.1.1', 'NAT64 of a public address'], ['2002:808:808::1', '6to4 of a public address'],
]

describe('isPublicAddress', () => {
  test.each(NOT_PUBLIC)('refuses %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })
  test.each(PUBLIC)('accepts %s %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true)
  })
})

describe('isLoopbackName', () => {
  test.each(['localhost', 'localhost.', 'LOCALHOST.', 'localhost..', 'foo.localhost', 'a.b.localhost.'])('%s is loopback', (name) => {
    expect(isLoopbackName(name)).toBe(true)
  })
  test.each(['localhost.example.com', 'mylocalhost', 'localhostx', 'example.com.'])('%s is not', (name) => {
    expect(isLoopbackName(name)).toBe(false)
  })
})

describe('checkHost', () => {
  const noDns = async (): Promise<string[]> => { throw new Error('no DNS lookup expected') }

  test('a localhost name is loopback without asking DNS', async () => {
    const r = await checkHost('localhost.', { resolve: noDns })
    expect(r.refused.length).toBeGreaterThan(0)
    expect(r.addresses.every((a) => !isPublicAddress(a))).toBe(true)
  })

  test('an IP literal (bracketed or not) is its own address', async () => {
    expect(await checkHost('[::ffff:7f00:1]', { resolve: noDns })).toEqual({ literal: true, addresses: ['::ffff:7f00:1'], refused: ['::ffff:7f00:1'] })
    expect(await checkHost('93.184.216.34', { resolve: noDns })).toEqual({ literal: true, addresses: ['93.184.216.34'], refused: [] })
  })

  test('a name is resolved once, and one private answer among public ones refuses it', async () => {
    const asked: string[] = []
    const r = await checkHost('hooks.example.com', { resolve: async (h) => { asked.push(h); return ['93.184.216.34', '::ffff:10.0.0.1'] } })
    expect(asked).toEqual(['hooks.example.com'])
    expect(r).toEqual({ literal: false, addresses: ['93.184.216.34', '::ffff:10.0.0.1'], refused: ['::ffff:10.0.0.1'] })
  })

  test('a name that resolves to nothing is a DNS failure', async () => {
    await expect(checkHost('empty.example', { resolve: async () => [] })).rejects.toThrow(/no address/)
  })

  test('the policy decides what is allowed', async () => {
    const r = await checkHost('rebind.test', { resolve: async () => ['127.0.0.2', '127.0.0.1'], isAllowedAddress: (ip) => ip === '127.0.0.2' })
    expect(r.refused).toEqual(['127.0.0.1'])
  })
})

import { describe, expect, test } from 'bun:test'
import { clientAddress, parseTrustedProxies, type TrustedProxies } from './client-address'

// Pure reading of addresses and headers: nothing here sends a packet anywhere.
const ranges = (text: string): TrustedProxies => {
  const parsed = parseTrustedProxies(text)
  if (!parsed.ok) throw new Error(`not a range: ${parsed.entry}`)
  return parsed.ranges
}

describe('trusted proxies setting', () => {
  test('takes addresses and CIDR ranges of both kinds, separated by commas or spaces', () => {
    const parsed = parseTrustedProxies(' 10.0.0.2, 10.0.1.0/24  fd00::/8,::ffff:192.0.2.0/120 ')
    expect(parsed.ok).toBe(true)
    if (parsed.ok) expect(parsed.ranges.map(([ip, bits]) => `${ip.toString()}/${bits}`)).toEqual(['10.0.0.2/32', '10.0.1.0/24', 'fd00::/8', '192.0.2.0/24'])
  })
  test('names the entry that is neither an address nor a range', () => {
    for (const bad of ['nginx', '10.0.0.0/33', '10.0.0.1/', '::1/129', '300.1.1.1']) expect(parseTrustedProxies(`127.0.0.1, ${bad}`)).toEqual({ ok: false, entry: bad })
  })
  test('empty is no proxies', () => expect(parseTrustedProxies('')).toEqual({ ok: true, ranges: [] }))
})

describe('client address behind trusted proxies', () => {
  const lb = ranges('10.0.0.2, 10.0.1.0/24')
  test('without trusted proxies the socket peer is the client, whatever the header says', () => {
    expect(clientAddress('10.0.0.2', '198.51.100.7', [])).toBe('10.0.0.2')
  })
  test('a peer that is no trusted proxy is the client: its own X-Forwarded-For is ignored', () => {
    expect(clientAddress('198.51.100.7', '10.0.0.99', lb)).toBe('198.51.100.7')
    expect(clientAddress('10.0.0.3', '203.0.113.9', lb)).toBe('10.0.0.3')
  })
  test('behind a trusted proxy the address it appended is the client', () => {
    expect(clientAddress('10.0.0.2', '203.0.113.9', lb)).toBe('203.0.113.9')
    expect(clientAddress('::ffff:10.0.0.2', '203.0.113.9', lb)).toBe('203.0.113.9')
  })
  test('what the client wrote into the header itself is never taken', () => {
    // The client sent "X-Forwarded-For: 192.0.2.1"; the balancer appended the address it came from.
    expect(clientAddress('10.0.0.2', '192.0.2.1, 203.0.113.9', lb)).toBe('203.0.113.9')
    expect(clientAddress('10.0.0.2', 'anything at all, 203.0.113.9', lb)).toBe('203.0.113.9')
  })
  test('a chain of trusted proxies is walked through to the first other address', () => {
    expect(clientAddress('10.0.0.2', '192.0.2.1, 203.0.113.9, 10.0.1.7', lb)).toBe('203.0.113.9')
    expect(clientAddress('10.0.0.2', '2001:db8::5, 10.0.1.7', lb)).toBe('2001:db8::5')
    expect(clientAddress('10.0.0.2', '[2001:db8::5]:4711, 203.0.113.9:5000', lb)).toBe('203.0.113.9')
  })
  test('an entry that is no address ends the walk at the proxy before it; no header leaves the proxy', () => {
    expect(clientAddress('10.0.0.2', 'garbage', lb)).toBe('10.0.0.2')
    expect(clientAddress('10.0.0.2', '203.0.113.9, unknown, 10.0.1.7', lb)).toBe('10.0.1.7')
    expect(clientAddress('10.0.0.2', null, lb)).toBe('10.0.0.2')
    expect(clientAddress('10.0.0.2', '', lb)).toBe('10.0.0.2')
  })
  test('only trusted proxies in the header: the leftmost of them', () => {
    expect(clientAddress('10.0.0.2', '10.0.1.5, 10.0.1.7', lb)).toBe('10.0.1.5')
  })
})

/**
 * Each attempt resolves its host once, checks every address, and connects to the address it
 * checked, with TLS verified against the host name. Everything here runs on loopback: a name
 * the system cannot resolve (rebind.test) is answered by an injected resolver, and a policy
 * made for these tests treats 127.0.0.2 as public and 127.0.0.1 as private.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { lookup } from 'node:dns/promises'
import { startTestApi, type TestApi } from '../../test/kit'
import { makeTestCa, startReceiver, type ServerCert } from '../../test/https-receiver'

const ca = makeTestCa()
const rebindCert = ca.issue(['DNS:rebind.test'])
const wrongCert = ca.issue(['DNS:wrong.test'])
const allowed = (ip: string) => ip === '127.0.0.2'

/** A receiver on 127.0.0.2 and an "internal service" on 127.0.0.1 at the same port, both holding a valid certificate for rebind.test. */
function twins(cert: ServerCert | (ServerCert & { serverName?: string })[]) {
  for (let tries = 0; ; tries++) {
    const outside = startReceiver(ca, { hostname: '127.0.0.2', cert, behave: (r) => (r.path === '/moved' ? { redirectTo: '/elsewhere' } : { body: 'the receiver on 127.0.0.2' }) })
    try {
      const internal = startReceiver(ca, { hostname: '127.0.0.1', port: outside.port, cert: rebindCert, behave: () => ({ body: 'INTERNAL SECRET' }) })
      return { outside, internal, port: outside.port, stop: () => { outside.stop(); internal.stop() } }
    } catch (err) {
      outside.stop()
      if (tries > 20) throw err
    }
  }
}

let api: TestApi | undefined
const running: { stop(): void }[] = []
afterEach(() => { api?.close(); api = undefined; running.splice(0).forEach((s) => s.stop()) })
afterAll(() => running.forEach((s) => s.stop()))

async function endpoint(url: string) {
  const key = api!.key(['webhooks:manage'])
  const res = await api!.request('POST', '/api/v1/webhooks', { key, body: { url, events: ['*'] } })
  expect(res.status).toBe(201)
  const { id } = await res.json()
  return { key, ping: async () => (await api!.request('POST', `/api/v1/webhooks/${id}/test`, { key })).json() as Promise<any> }
}

describe('an attempt connects to the address it checked', () => {
  test('DNS rebinding: the name is resolved once per attempt, and the connection goes to that answer', async () => {
    // Default certificate is for wrong.test: the receiver proves the name by SNI.
    const { outside, internal, port, stop } = twins([wrongCert, { ...rebindCert, serverName: 'rebind.test' }])
    running.push({ stop })
    let answers: string[][] = []
    const lookups: string[] = []
    const resolve = async (host: string) => { lookups.push(host); return answers.shift() ?? ['127.0.0.1'] }
    api = startTestApi({}, { webhookSend: { resolve, isAllowedAddress: allowed, tls: { ca: ca.ca } } })
    answers = [['127.0.0.2']]
    const e = await endpoint(`https://rebind.test:${port}/hook?x=1`)

    // First the name answers 127.0.0.2 (allowed), and any later lookup would answer 127.0.0.1.
    lookups.length = 0
    answers = [['127.0.0.2']]
    const first = await e.ping()
    expect(first).toMatchObject({ delivered: true, response_status: 200, response_body: 'the receiver on 127.0.0.2', error: null })
    expect(lookups).toEqual(['rebind.test'])
    expect(outside.received).toHaveLength(1)
    expect(outside.received[0]).toMatchObject({ path: '/hook', headers: { host: `rebind.test:${port}` } })
    expect(internal.received).toHaveLength(0)
    // Nothing but the injected resolver knows the name, so no second lookup could have found 127.0.0.2.
    await expect(lookup('rebind.test')).rejects.toThrow()

    // The next attempt resolves again, gets 127.0.0.1, and sends nothing anywhere.
    const second = await e.ping()
    expect(second).toMatchObject({ delivered: false, response_status: null, response_body: null, error: 'blocked', error_message: expect.stringContaining('127.0.0.1') })
    expect(lookups).toEqual(['rebind.test', 'rebind.test'])
    expect(outside.received).toHaveLength(1)
    expect(internal.received).toHaveLength(0)
  })

  test('one non-public address among the answers refuses the attempt', async () => {
    const { outside, internal, port, stop } = twins(rebindCert)
    running.push({ stop })
    let answer = ['127.0.0.2']
    api = startTestApi({}, { webhookSend: { resolve: async () => answer, isAllowedAddress: allowed, tls: { ca: ca.ca } } })
    const e = await endpoint(`https://rebind.test:${port}/hook`)
    answer = ['127.0.0.2', '127.0.0.1']
    expect(await e.ping()).toMatchObject({ delivered: false, error: 'blocked' })
    expect(outside.received.length + internal.received.length).toBe(0)
  })

  test('the certificate is checked against the host name, not the address', async () => {
    // The server on 127.0.0.2 holds a valid certificate, but for rebind.test, not wrong.test.
    const { outside, internal, port, stop } = twins(rebindCert)
    running.push({ stop })
    api = startTestApi({}, { webhookSend: { resolve: async () => ['127.0.0.2'], isAllowedAddress: allowed, tls: { ca: ca.ca } } })
    const e = await endpoint(`https://wrong.test:${port}/hook`)
    expect(await e.ping()).toMatchObject({ delivered: false, response_status: null, error: 'tls' })
    expect(outside.received.length + internal.received.length).toBe(0)
  })

  test('a certificate from an unknown CA is refused', async () => {
    const { outside, port, stop } = twins(rebindCert)
    running.push({ stop })
    api = startTestApi({}, { webhookSend: { resolve: async () => ['127.0.0.2'], isAllowedAddress: allowed } })
    const e = await endpoint(`https://rebind.test:${port}/hook`)
    expect(await e.ping()).toMatchObject({ delivered: false, error: 'tls' })
    expect(outside.received).toHaveLength(0)
  })

  test('a redirect is still a failure and is not followed', async () => {
    const { outside, internal, port, stop } = twins(rebindCert)
    running.push({ stop })
    api = startTestApi({}, { webhookSend: { resolve: async () => ['127.0.0.2'], isAllowedAddress: allowed, tls: { ca: ca.ca } } })
    const e = await endpoint(`https://rebind.test:${port}/moved`)
    expect(await e.ping()).toMatchObject({ delivered: false, response_status: 302, error: 'redirect' })
    expect(outside.received.map((r) => r.path)).toEqual(['/moved'])
    expect(internal.received).toHaveLength(0)
  })

  test('an address that refuses the connection gives way to the next checked one', async () => {
    const { outside, internal, port, stop } = twins(rebindCert)
    running.push({ stop })
    // Nothing listens on 127.0.0.3: connection refused, nothing sent, so 127.0.0.2 is tried.
    api = startTestApi({}, { webhookSend: { resolve: async () => ['127.0.0.3', '127.0.0.2'], isAllowedAddress: (ip) => ip === '127.0.0.2' || ip === '127.0.0.3', tls: { ca: ca.ca } } })
    const e = await endpoint(`https://rebind.test:${port}/hook`)
    expect(await e.ping()).toMatchObject({ delivered: true, response_body: 'the receiver on 127.0.0.2' })
    expect(outside.received).toHaveLength(1)
    expect(internal.received).toHaveLength(0)
  })

  test('a resolver that never answers is a timeout within the delivery timeout', async () => {
    let asked = 0
    api = startTestApi({ TOWLINE_WEBHOOK_TIMEOUT_MS: '300' }, { webhookSend: { resolve: async () => (asked++ ? new Promise<string[]>(() => {}) : ['127.0.0.2']), isAllowedAddress: allowed } })
    const e = await endpoint('https://rebind.test:9/hook')
    const r = await e.ping()
    expect(r).toMatchObject({ delivered: false, error: 'timeout' })
    expect(r.duration_ms).toBeLessThan(3000)
  })
})

import { afterEach, describe, expect, test } from 'bun:test'
import { expectError, startTestApi, type TestApi } from '../../test/kit'

let api: TestApi
afterEach(() => api?.close())

describe('POST /webhooks', () => {
  test.each(['https://127.0.0.1/hook', 'https://localhost:8443/hook', 'https://10.1.2.3/hook', 'https://192.168.1.20/hook', 'https://169.254.169.254/latest', 'https://[::1]/hook', 'https://[fd00::1]/x'])(
    'refuses the private target %s unless the operator allows it', async (url) => {
      api = startTestApi()
      const key = api.key(['webhooks:manage'])
      const err = await expectError(await api.request('POST', '/api/v1/webhooks', { key, body: { url, events: ['*'] } }), 422, 'validation_failed')
      expect(err.details.fields[0].path).toBe('url')
      expect((await (await api.request('GET', '/api/v1/webhooks', { key })).json()).data).toEqual([])
    })

  // Loopback and private targets in disguise: IPv6 forms carrying an IPv4 address, the IPv4
  // spellings WHATWG URL normalises (decimal, hex, octal, short, a trailing dot, full-width
  // digits), localhost names with trailing dots. None of these is resolved or contacted.
  const DISGUISED = [
    'https://[::ffff:127.0.0.1]/hook', 'https://[::ffff:7f00:1]:8443/hook', 'https://[0:0:0:0:0:ffff:7f00:1]/', 'https://[::7f00:1]/', 'https://[::127.0.0.1]/',
    'https://[::ffff:0:7f00:1]/', 'https://[64:ff9b::7f00:1]/', 'https://[64:ff9b::127.0.0.1]/', 'https://[64:ff9b:1::a00:1]/', 'https://[2002:7f00:1::]/',
    'https://[2002:a9fe:a9fe::]/latest', 'https://[::ffff:10.0.0.1]/', 'https://[::ffff:a9fe:a9fe]/latest', 'https://[::]/', 'https://[fe80::1]/',
    'https://[2001::1]/', 'https://localhost./hook', 'https://LOCALHOST./hook', 'https://localhost../', 'https://foo.localhost./', 'https://%6c%6fcalhost/',
    'https://2130706433/', 'https://2130706433:8443/', 'https://0x7f.1/', 'https://0x7f000001/', 'https://0177.0.0.1/', 'https://017700000001/',
    'https://127.1/', 'https://127.0.1/', 'https://127.0.0.1./', 'https://１２７.０.０.１/', 'https://0/', 'https://0x0a.1/', 'https://167772161/',
    'https://100.64.0.1/', 'https://198.18.0.1/', 'https://192.0.2.1/',
  ]
  test.each(DISGUISED)('refuses %s, a non-public target in disguise', async (url) => {
    api = startTestApi({}, { webhookSend: { resolve: async () => { throw new Error('no DNS lookup expected') } } })
    const key = api.key(['webhooks:manage'])
    const err = await expectError(await api.request('POST', '/api/v1/webhooks', { key, body: { url, events: ['*'] } }), 422, 'validation_failed')
    expect(err.details.fields).toEqual([{ path: 'url', message: expect.stringContaining('TOWLINE_WEBHOOK_ALLOW_PRIVATE=1') }])
    expect((await (await api.request('GET', '/api/v1/webhooks', { key })).json()).data).toEqual([])
  })

  test('PATCH refuses a disguised target and keeps the URL it had', async () => {
    api = startTestApi({}, { webhookSend: { resolve: async () => { throw new Error('no DNS lookup expected') } } })
    const key = api.key(['webhooks:manage'])
    const created = await api.request('POST', '/api/v1/webhooks', { key, body: { url: 'https://93.184.216.34/hook', events: ['*'] } })
    expect(created.status).toBe(201)
    const { id } = await created.json()
    for (const url of ['https://[::ffff:7f00:1]/hook', 'https://localhost./hook', 'https://0x7f.1/hook', 'https://[64:ff9b::a9fe:a9fe]/latest']) {
      const err = await expectError(await api.request('PATCH', `/api/v1/webhooks/${id}`, { key, body: { url } }), 422, 'validation_failed')
      expect(err.details.fields[0].path).toBe('url')
    }
    expect((await (await api.request('GET', `/api/v1/webhooks/${id}`, { key })).json()).url).toBe('https://93.184.216.34/hook')
  })

  test('a name that resolves to any non-public address is refused; the resolver is asked once', async () => {
    const asked: string[] = []
    api = startTestApi({}, { webhookSend: { resolve: async (host) => { asked.push(host); return ['93.184.216.34', '::ffff:a9fe:a9fe'] } } })
    const err = await expectError(await api.request('POST', '/api/v1/webhooks', { key: api.key(['webhooks:manage']), body: { url: 'https://Hooks.Example.com./x', events: ['*'] } }), 422, 'validation_failed')
    expect(err.details.fields[0]).toMatchObject({ path: 'url', message: expect.stringContaining('::ffff:a9fe:a9fe') })
    expect(asked).toEqual(['hooks.example.com.'])
  })

  test('accepts a private target when TOWLINE_WEBHOOK_ALLOW_PRIVATE=1', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const res = await api.request('POST', '/api/v1/webhooks', { key: api.key(['webhooks:manage']), body: { url: 'https://127.0.0.1:9/hook', events: ['job.created', 'job.created'] } })
    expect(res.status).toBe(201)
    expect((await res.json()).events).toEqual(['job.created'])
  })

  test('another account\'s endpoint answers 404', async () => {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const mine = await (await api.request('POST', '/api/v1/webhooks', { key: api.key(['webhooks:manage']), body: { url: 'https://127.0.0.1:9/x', events: ['*'] } })).json()
    const theirs = api.key(['webhooks:manage'], { accountId: api.account('Other Towing') })
    for (const [method, path] of [['GET', `/api/v1/webhooks/${mine.id}`], ['PATCH', `/api/v1/webhooks/${mine.id}`], ['DELETE', `/api/v1/webhooks/${mine.id}`], ['GET', `/api/v1/webhooks/${mine.id}/deliveries`]] as const) {
      await expectError(await api.request(method, path, { key: theirs, body: method === 'PATCH' ? { description: 'x' } : undefined }), 404, 'not_found')
    }
  })

  test('an unknown event type is refused naming the valid ones, on create and on update', async () => {
    api = startTestApi()
    const key = api.key(['webhooks:manage'])
    const err = await expectError(await api.request('POST', '/api/v1/webhooks', { key, body: { url: 'https://example.com/x', events: ['job.created', 'job.bogus'] } }), 422, 'validation_failed')
    expect(err.details.fields).toEqual([{ path: 'events.1', message: expect.stringMatching(/^must be one of ping, job\.created, .*job\.status_changed.*, or "\*" for all$/) }])
    const made = await (await api.request('POST', '/api/v1/webhooks', { key, body: { url: 'https://example.com/x', events: ['*'] } })).json()
    const again = await expectError(await api.request('PATCH', `/api/v1/webhooks/${made.id}`, { key, body: { events: ['job.nope'] } }), 422, 'validation_failed')
    expect(again.details.fields[0].message).toStartWith('must be one of ping, job.created, ')
    // A bad URL and a bad event type are both named, at once, and nothing is made.
    const both = await expectError(await api.request('POST', '/api/v1/webhooks', { key, body: { url: 'http://example.com/x', events: ['job.bogus'] } }), 422, 'validation_failed')
    expect(both.details.fields.map((f: any) => f.path)).toEqual(['events.0', 'url'])
    const listed = await (await api.request('GET', '/api/v1/webhooks', { key })).json()
    expect(listed.data.map((e: any) => e.id)).toEqual([made.id])
  })

  test('unknown fields are refused', async () => {
    api = startTestApi()
    const err = await expectError(await api.request('POST', '/api/v1/webhooks', { key: api.key(['webhooks:manage']), body: { url: 'https://example.com/x', events: ['*'], secret: 'mine' } }), 422, 'validation_failed')
    expect(err.details.fields[0].path).toBe('secret')
  })
})

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

  test('unknown fields are refused', async () => {
    api = startTestApi()
    const err = await expectError(await api.request('POST', '/api/v1/webhooks', { key: api.key(['webhooks:manage']), body: { url: 'https://example.com/x', events: ['*'], secret: 'mine' } }), 422, 'validation_failed')
    expect(err.details.fields[0].path).toBe('secret')
  })
})

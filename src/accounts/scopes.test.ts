import { afterAll, beforeAll, describe, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { checkEveryOperationNeedsItsScope } from '../../test/scope-checks'
import { SCOPES } from './scopes'

let api: TestApi
beforeAll(() => { api = startTestApi() })
afterAll(() => api.close())

describe('scopes', () => {
  test('every operation answers 401 without a key and 403 to a key lacking its scope', async () => {
    const doc = await (await api.request('GET', '/api/v1/openapi.json')).json()
    const keys = new Map(SCOPES.map((s) => [s, api.key(SCOPES.filter((x) => x !== s))]))
    await checkEveryOperationNeedsItsScope(
      doc,
      (method, path, key) => api.request(method, path, { key, body: method === 'GET' || method === 'DELETE' ? undefined : {} }),
      (scope) => keys.get(scope as any)!,
    )
  })
})

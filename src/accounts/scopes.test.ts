import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { checkEveryOperationNeedsItsScope, checkOtherAccountsLookUnknown } from '../../test/scope-checks'
import { kindOf, makeResources, unknownIdOf, validBodyFor } from '../../test/resources'
import { databaseFingerprint } from '../../test/fingerprint'
import { SCOPES } from './scopes'
import { addSite } from './add-site'

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

/**
 * Runs the shared isolation check for `mine` (a key holding every scope) against resources made
 * by `theirs`, and checks nothing was written.
 */
async function checkIsolation(iso: TestApi, mine: string, own: Record<string, string>, theirs: Record<string, string>, accountWide: string[] = []) {
  const before = databaseFingerprint(iso.db)
  const doc = await (await iso.request('GET', '/api/v1/openapi.json')).json()
  await checkOtherAccountsLookUnknown(doc,
    (method, path, body) => iso.request(method, path, { key: mine, body }),
    { own, theirs, kindOf, unknownIdOf: (kind) => unknownIdOf(kind, theirs), accountWide },
    (method, path) => validBodyFor(method, path, own))
  expect(databaseFingerprint(iso.db)).toEqual(before)
}
const isolated = () => startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1', TOWLINE_RATE_LIMIT_WRITES: '100000', TOWLINE_RATE_LIMIT_READS: '100000' })

describe('isolation', () => {
  test("every operation with a path id answers another account's resource exactly as an unknown id, and changes nothing", async () => {
    const iso = isolated()
    try {
      const mine = iso.key('all')
      const rival = iso.account('Rival Towing')
      const own = await makeResources(iso, mine, iso.accountId, 'mine')
      const theirs = await makeResources(iso, iso.key('all', { accountId: rival }), rival, 'theirs')
      await checkIsolation(iso, mine, own, theirs)
    } finally {
      iso.close()
    }
  })

  test("every operation with a path id answers another site's resource exactly as an unknown id to a key limited to its site, and changes nothing", async () => {
    const iso = isolated()
    try {
      const north = (iso.db.$client.query('SELECT id FROM sites WHERE account_id = ?').get(iso.accountId) as { id: string }).id
      const south = addSite(iso.db, iso.clock, { accountId: iso.accountId, name: 'South yard' }).id
      const mine = iso.key('all', { sites: [north] })
      const own = await makeResources(iso, mine, iso.accountId, 'north', { siteIds: [north] })
      const theirs = await makeResources(iso, iso.key('all', { sites: [south] }), iso.accountId, 'south', { siteIds: [south] })
      // The commercial accounts directory belongs to the whole account: a key limited to a site reads every entry.
      await checkIsolation(iso, mine, own, theirs, ['accounts'])
      const shared = await iso.request('GET', `/api/v1/accounts/${theirs.accounts}`, { key: mine })
      expect(shared.status).toBe(200)
    } finally {
      iso.close()
    }
  })
})

import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { startTestApi, type TestApi } from '../../test/kit'
import { makeTestCa, startReceiver } from '../../test/https-receiver'
import { SCOPES } from '../accounts/scopes'
import { addSite } from '../accounts/add-site'
import { createUser } from '../users/create-user'

let api: TestApi
afterEach(() => api?.close())

const ORIGIN = 'http://towline.test'
const PASSWORD = 'correct horse battery'

/** Makes a login on the account and signs it in; returns the session cookie (`name=value`). */
async function signedIn(role: 'owner' | 'dispatcher', accountId = api.accountId, email = `${role}-${accountId}@example.com`): Promise<string> {
  await createUser(api.contexts.forOperator(accountId), { email, role, password: PASSWORD })
  const res = await api.raw(new Request(`${ORIGIN}/login`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email, password: PASSWORD }).toString() }))
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie')!.split(';')[0]!
}
const get = (path: string, cookie?: string) => api.raw(new Request(ORIGIN + path, { headers: cookie ? { cookie } : {} }))
/** Posts a form as the dashboard does; a field given a list is repeated. */
function post(path: string, cookie: string | undefined, fields: Record<string, string | string[]> = {}, origin = ORIGIN) {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one)
  return api.raw(new Request(ORIGIN + path, { method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) }, body: body.toString() }))
}

/** Undoes escapeHtml, to read an attribute or text back as a browser would. */
const unescape = (s: string) => s.replace(/&(lt|gt|quot|#39|amp);/g, (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e]!)

/** What a browser's parser would find: the elements a selector matches, attributes and text decoded. */
async function find(page: string, selector: string): Promise<{ attrs: Record<string, string>; text: string }[]> {
  const found: { attrs: Record<string, string>; text: string }[] = []
  await new HTMLRewriter().on(selector, {
    element(el) { found.push({ attrs: Object.fromEntries([...el.attributes].map(([k, v]) => [k, unescape(v)])), text: '' }) },
    text(t) { if (found.length) found[found.length - 1]!.text += t.text },
  }).transform(new Response(page)).text()
  for (const f of found) f.text = unescape(f.text).trim()
  return found
}
/** The text of the label of a control, by the control's id. */
const labelOf = async (page: string, id: string) => (await find(page, `label[for="${id}"]`))[0]?.text
const me = (key: string) => api.request('GET', '/api/v1/me', { key })

/** Rows of the tables the Developers pages write, to show a refused request changed nothing. */
function snapshot() {
  const q = (sql: string) => api.db.$client.query(sql).all()
  return JSON.stringify([
    q('SELECT * FROM api_keys ORDER BY id'), q('SELECT * FROM webhook_endpoints ORDER BY id'),
    q('SELECT * FROM webhook_deliveries ORDER BY id'), q('SELECT * FROM webhook_attempts ORDER BY id'), q('SELECT * FROM idempotency_keys'),
  ])
}
const countKeys = () => (api.db.$client.query('SELECT count(*) AS n FROM api_keys').get() as { n: number }).n

/** Creates a key on the page; returns the response, its page and the key read from the read-only field. */
async function createKeyOnPage(cookie: string, fields: Record<string, string | string[]>) {
  const res = await post('/developers/keys', cookie, fields)
  const page = await res.text()
  const shown = (await find(page, '#shown-secret'))[0]
  return { res, page, shown, key: shown?.attrs.value }
}

describe('API keys on /developers', () => {
  test('the page names every scope by itself, the sites by name, and a Create key button', async () => {
    api = startTestApi()
    addSite(api.db, api.clock, { accountId: api.accountId, name: 'North yard' })
    const cookie = await signedIn('owner')
    const res = await get('/developers', cookie)
    expect(res.status).toBe(200)
    const page = await res.text()
    expect(await labelOf(page, 'f-name')).toBe('Name')
    const boxes = await find(page, 'input[type="checkbox"][name="scopes[]"]')
    expect(await Promise.all(boxes.map((b) => labelOf(page, b.attrs.id!)))).toEqual([...SCOPES])
    const sites = await find(page, 'input[type="checkbox"][name="sites[]"]')
    expect(await Promise.all(sites.map((b) => labelOf(page, b.attrs.id!)))).toEqual(['Main yard', 'North yard'])
    expect((await find(page, 'button[type="submit"]')).map((b) => b.text)).toContain('Create key')
  })

  test('an owner creates a key: shown once in a read-only field, it answers GET /api/v1/me with what was ticked', async () => {
    api = startTestApi()
    const north = addSite(api.db, api.clock, { accountId: api.accountId, name: 'North yard' })
    const cookie = await signedIn('owner')
    const { res, page, shown, key } = await createKeyOnPage(cookie, { name: ' Motor club intake ', 'scopes[]': ['jobs:read', 'jobs:write'], 'sites[]': [north.id] })
    expect(res.status).toBe(200)
    expect(shown!.attrs).toHaveProperty('readonly')
    expect(await labelOf(page, 'shown-secret')).toBe('New key')
    expect(page).toContain('it will not be shown again')
    expect(key).toMatch(/^svc_live_[0-9A-Za-z]{32}$/)
    const who = await me(key!)
    expect(who.status).toBe(200)
    expect(await who.json()).toMatchObject({ name: 'Motor club intake', scopes: ['jobs:read', 'jobs:write'], site_restricted: true, sites: [{ id: north.id, name: 'North yard' }] })
    // Listed with its prefix and last use, never the key itself again.
    const list = await (await get('/developers', cookie)).text()
    expect(list).not.toContain(key!)
    const item = (await find(list, '.item[data-key-id]'))[0]!
    expect(item.text).toContain('Motor club intake')
    expect(item.text).toContain(`${key!.slice(0, 13)}…`)
    expect(item.text).toContain('North yard')
    expect(item.text).toMatch(/Last used\s*2026-11-21 09:00 UTC/)
  })

  test('the form posted twice (a reload of the answer, a second click) makes one key; the second answer says so and shows no secret', async () => {
    api = startTestApi()
    const cookie = await signedIn('owner')
    const formKey = (await find(await (await get('/developers', cookie)).text(), 'form[action="/developers/keys"] input[name="idempotency_key"]'))[0]!.attrs.value!
    expect(formKey).toMatch(/^[0-9A-Za-z]{24}\.key$/)
    const fields = { idempotency_key: formKey, name: 'Reloaded', 'scopes[]': ['jobs:read'] }
    const first = await createKeyOnPage(cookie, fields)
    expect(first.key).toMatch(/^svc_live_/)
    const again = await createKeyOnPage(cookie, fields)
    expect(again.res.status).toBe(200)
    expect(again.shown).toBeUndefined()
    expect(again.page).not.toContain(first.key!)
    const made = (await find(again.page, '[role="status"]'))[0]!
    expect(made.text).toContain('Key "Reloaded" was already created')
    expect(made.text).toContain('revoke that key and create another')
    expect(countKeys()).toBe(1)
    expect((await me(first.key!)).status).toBe(200)
    // Each answer carries a new form key: the next key made on it is a new key.
    const next = (await find(again.page, 'form[action="/developers/keys"] input[name="idempotency_key"]'))[0]!.attrs.value!
    expect(next).not.toBe(formKey)
    expect((await createKeyOnPage(cookie, { ...fields, idempotency_key: next })).key).toMatch(/^svc_live_/)
    expect(countKeys()).toBe(2)
  })

  test('a key with no site ticked sees every site', async () => {
    api = startTestApi()
    addSite(api.db, api.clock, { accountId: api.accountId, name: 'North yard' })
    const { key } = await createKeyOnPage(await signedIn('owner'), { name: 'All yards', 'scopes[]': 'jobs:read' })
    expect(await (await me(key!)).json()).toMatchObject({ site_restricted: false, sites: [{ name: 'Main yard' }, { name: 'North yard' }] })
  })

  test('a key without a name or a scope is refused beside each field, what was typed kept, nothing written', async () => {
    api = startTestApi()
    const cookie = await signedIn('owner')
    const before = countKeys()
    const { res, page, shown } = await createKeyOnPage(cookie, { name: '   ' })
    expect(res.status).toBe(422)
    expect(shown).toBeUndefined()
    expect((await find(page, '#f-name-error'))[0]!.text).toBe('a key needs a name')
    expect((await find(page, '#f-scopes-error'))[0]!.text).toContain('a key needs at least one scope')
    expect((await find(page, '[role="alert"][data-form-alert]'))[0]!.text).not.toBe('')
    const again = await createKeyOnPage(cookie, { name: 'Typed name', 'scopes[]': ['jobs:read', 'jobs:destroy'] })
    expect(again.res.status).toBe(422)
    expect((await find(again.page, '#f-name'))[0]!.attrs.value).toBe('Typed name')
    expect((await find(again.page, '#f-scopes'))[0]!.attrs).toHaveProperty('checked')
    expect((await find(again.page, '#f-scopes-error'))[0]!.text).toContain('unknown scope "jobs:destroy"')
    expect(countKeys()).toBe(before)
  })

  test('a key\'s name is counted in characters (100 emoji fit, 101 do not) and is one plain line: control and direction-override characters are refused', async () => {
    api = startTestApi()
    const cookie = await signedIn('owner')
    const car = '\u{1F697}'
    expect((await createKeyOnPage(cookie, { name: car.repeat(100), 'scopes[]': 'jobs:read' })).res.status).toBe(200)
    const before = countKeys()
    const refused = async (name: string) => {
      const { res, page } = await createKeyOnPage(cookie, { name, 'scopes[]': 'jobs:read' })
      expect({ name, status: res.status }).toEqual({ name, status: 422 })
      return (await find(page, '#f-name-error'))[0]!.text
    }
    expect(await refused(car.repeat(101))).toBe("a key's name must be at most 100 characters")
    for (const name of ['ctrl\u0000char', 'line1\nline2', 'tab\there', 'line\u2028separator']) expect(await refused(name)).toContain('must be on one line')
    expect(await refused('Motor club intake\u202Eekatni')).toBe("a key's name must not hold characters that change the direction of the text around them")
    expect(countKeys()).toBe(before)
  })

  test('Revoke ends the key from the next request; the list says it was revoked', async () => {
    api = startTestApi()
    const cookie = await signedIn('owner')
    const { key } = await createKeyOnPage(cookie, { name: 'Short lived', 'scopes[]': 'jobs:read' })
    expect((await me(key!)).status).toBe(200)
    const id = (await find(await (await get('/developers', cookie)).text(), '.item[data-key-id]'))[0]!.attrs['data-key-id']!
    const res = await post(`/developers/keys/${id}/revoke`, cookie)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/developers#keys')
    expect((await me(key!)).status).toBe(401)
    const item = (await find(await (await get('/developers', cookie)).text(), `.item[data-key-id="${id}"]`))[0]!
    expect(item.text).toMatch(/Revoked\s*2026-11-21/)
    expect(item.text).not.toContain('Revoke key')
  })
})

describe('webhook endpoints on /developers', () => {
  const ca = makeTestCa()
  const secrets: string[] = []
  const receiver = startReceiver(ca, { secrets: () => secrets })
  afterAll(() => receiver.stop())
  const start = () => { api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' }, { webhookSend: { tls: { ca: ca.ca } } }) }
  const listed = async (key: string) => (await (await api.request('GET', '/api/v1/webhooks', { key })).json()).data as any[]

  /** Adds an endpoint on the page; returns its id and the secret shown once. */
  async function addEndpoint(cookie: string, path: string, events: string[] = ['*']) {
    const res = await post('/developers/webhooks', cookie, { url: `${receiver.url}${path}`, description: `page ${path}`, 'events[]': events })
    expect(res.status).toBe(200)
    const page = await res.text()
    expect(await labelOf(page, 'shown-secret')).toBe('Signing secret')
    const secret = (await find(page, '#shown-secret'))[0]!.attrs.value!
    const id = (await find(page, '.item[data-endpoint-id]')).at(-1)!.attrs['data-endpoint-id']!
    return { id, secret, page }
  }

  test('the add form posted twice makes one endpoint; both answers show its one secret', async () => {
    start()
    const key = api.key(['webhooks:manage'])
    const cookie = await signedIn('owner')
    const formKey = (await find(await (await get('/developers', cookie)).text(), 'form[action="/developers/webhooks"] input[name="idempotency_key"]'))[0]!.attrs.value!
    const fields = { idempotency_key: formKey, url: `${receiver.url}/twice`, 'events[]': ['*'] }
    const shown = async () => (await find(await (await post('/developers/webhooks', cookie, fields)).text(), '#shown-secret'))[0]!.attrs.value
    const first = await shown()
    expect(first).toMatch(/^whsec_/)
    expect(await shown()).toBe(first)
    expect((await listed(key)).filter((e) => e.url === `${receiver.url}/twice`)).toHaveLength(1)
  })

  test('add, Send test, Resend, Pause, Resume, Rotate secret and Delete, as GET /api/v1/webhooks then shows', async () => {
    start()
    const key = api.key(['webhooks:manage'])
    const cookie = await signedIn('owner')
    const { id, secret } = await addEndpoint(cookie, '/page-flow', ['job.created', 'job.status_changed'])
    expect(secret).toMatch(/^whsec_/)
    secrets.push(secret)
    expect(await listed(key)).toEqual([expect.objectContaining({ id, url: `${receiver.url}/page-flow`, events: ['job.created', 'job.status_changed'], description: 'page /page-flow', status: 'active' })])
    expect(JSON.stringify(await (await get('/developers', cookie)).text())).not.toContain(secret)

    // Send test: a signed ping reaches the receiver; the page shows the attempt and what came back.
    const before = receiver.received.length
    const tested = await post(`/developers/webhooks/${id}/test`, cookie)
    expect(tested.status).toBe(303)
    const ping = receiver.received.slice(before).find((r) => r.path === '/page-flow')!
    expect(ping.body).toMatchObject({ type: 'ping', attempt: 1 })
    expect(ping.validSignatures).toBe(1)
    expect(tested.headers.get('location')).toBe(`/developers/webhooks/${id}?sent=${ping.body.id}`)
    const shown = await (await get(tested.headers.get('location')!, cookie)).text()
    expect((await find(shown, '[role="status"]'))[0]!.text).toContain('Test ping (attempt 1): delivered, HTTP 200')
    const attempts = await find(shown, '.item[data-attempt-id]')
    expect(attempts).toHaveLength(1)
    expect(attempts[0]!.attrs['data-delivery-id']).toBe(ping.body.id)
    expect(attempts[0]!.text).toContain('ping · attempt 1')
    expect(attempts[0]!.text).toContain('{"ok":true}')
    expect(attempts[0]!.text).toContain(`x-svc-signature: ${ping.headers['x-svc-signature']}`)
    expect(attempts[0]!.text).toContain(ping.raw)

    // Resend: the same delivery again, the next attempt number.
    const resent = await post(`/developers/webhooks/${id}/deliveries/${ping.body.id}/resend`, cookie)
    expect(resent.status).toBe(303)
    const again = receiver.received.filter((r) => r.body?.id === ping.body.id)
    expect(again.map((r) => r.body.attempt)).toEqual([1, 2])
    const log = (await (await api.request('GET', `/api/v1/webhooks/${id}/deliveries`, { key })).json()).data
    expect(log.map((a: any) => [a.delivery_id, a.attempt, a.status])).toEqual([[ping.body.id, 2, 'succeeded'], [ping.body.id, 1, 'succeeded']])

    expect((await post(`/developers/webhooks/${id}/pause`, cookie)).status).toBe(303)
    expect((await listed(key))[0]).toMatchObject({ status: 'paused', paused_reason: 'manual' })
    expect(await (await get(`/developers/webhooks/${id}`, cookie)).text()).toContain('Paused (by hand)')
    expect((await post(`/developers/webhooks/${id}/resume`, cookie)).status).toBe(303)
    expect((await listed(key))[0]).toMatchObject({ status: 'active', paused_reason: null })

    const rotated = await post(`/developers/webhooks/${id}/rotate`, cookie)
    expect(rotated.status).toBe(200)
    const newSecret = (await find(await rotated.text(), '#shown-secret'))[0]!.attrs.value!
    expect(newSecret).toMatch(/^whsec_/)
    expect(newSecret).not.toBe(secret)
    secrets.splice(0, secrets.length, newSecret)
    await post(`/developers/webhooks/${id}/test`, cookie)
    // Both signatures during the overlap; the receiver now knows only the new secret.
    expect(receiver.received.at(-1)!.validSignatures).toBe(1)
    expect(receiver.received.at(-1)!.headers['x-svc-signature']!.match(/v1=/g)).toHaveLength(2)
    // Its form posted again (a reload of that answer) rotates once: the same secret is shown, and three sign (it and the two rotated out today), not four.
    const form = async (html: string) => Object.fromEntries((await find(html, 'form[action$="/rotate"] input[type="hidden"]')).map((i) => [i.attrs.name!, i.attrs.value!]))
    const rotateForm = await form(await (await get(`/developers/webhooks/${id}`, cookie)).text())
    expect(rotateForm.idempotency_key).toMatch(/^[0-9A-Za-z]{24}\.rotate$/)
    const once = (await find(await (await post(`/developers/webhooks/${id}/rotate`, cookie, rotateForm)).text(), '#shown-secret'))[0]!.attrs.value!
    const reloaded = (await find(await (await post(`/developers/webhooks/${id}/rotate`, cookie, rotateForm)).text(), '#shown-secret'))[0]!.attrs.value!
    expect(reloaded).toBe(once)
    expect(once).not.toBe(newSecret)
    await post(`/developers/webhooks/${id}/test`, cookie)
    expect(receiver.received.at(-1)!.headers['x-svc-signature']!.match(/v1=/g)).toHaveLength(3)

    const confirm = await get(`/developers/webhooks/${id}/delete`, cookie)
    expect(confirm.status).toBe(200)
    expect((await find(await confirm.text(), 'button')).map((b) => b.text)).toContain('Delete endpoint')
    expect(await listed(key)).toHaveLength(1)
    const deleted = await post(`/developers/webhooks/${id}/delete`, cookie)
    expect(deleted.status).toBe(303)
    expect(await listed(key)).toEqual([])
    expect((await get(`/developers/webhooks/${id}`, cookie)).status).toBe(404)
  })

  test('an http URL, a loopback one (unless the operator allows them) and no event ticked are refused beside their fields, typed values kept, nothing written', async () => {
    api = startTestApi()
    const cookie = await signedIn('owner')
    const before = snapshot()
    const cases: [Record<string, string | string[]>, string, string][] = [
      [{ url: 'http://hooks.example.com/x', 'events[]': '*' }, 'url', 'must use https'],
      [{ url: 'https://127.0.0.1:9/x', 'events[]': 'job.created' }, 'url', 'TOWLINE_WEBHOOK_ALLOW_PRIVATE=1'],
      [{ url: 'https://[::ffff:127.0.0.1]/x', 'events[]': '*' }, 'url', 'loopback'],
      [{ url: 'not a url', 'events[]': '*' }, 'url', 'is not an absolute URL'],
      [{ url: 'https://hooks.example.com/x' }, 'events', ''],
    ]
    for (const [fields, field, message] of cases) {
      const res = await post('/developers/webhooks', cookie, fields)
      expect(res.status).toBe(422)
      const page = await res.text()
      const error = (await find(page, `#f-${field}-error`))[0]!.text
      expect(error).not.toBe('')
      expect(error).toContain(message)
      expect((await find(page, '#f-url'))[0]!.attrs.value).toBe(fields.url as string)
      expect((await find(page, '#f-url'))[0]!.attrs['aria-invalid'] === 'true').toBe(field === 'url')
      if (fields['events[]'] === 'job.created') expect((await find(page, 'input[name="events[]"][value="job.created"]'))[0]!.attrs).toHaveProperty('checked')
    }
    expect(snapshot()).toBe(before)
  })
})

describe('who may use the Developers pages', () => {
  /** Every Developers route with its path filled in with real ids of the owner's account. */
  async function everyRoute() {
    api = startTestApi({ TOWLINE_WEBHOOK_ALLOW_PRIVATE: '1' })
    const ownerKey = api.key('all')
    const keyId = (api.db.$client.query('SELECT id FROM api_keys').get() as { id: string }).id
    const made = await (await api.request('POST', '/api/v1/webhooks', { key: ownerKey, body: { url: 'https://127.0.0.1:9/unused', events: ['*'] } })).json()
    // A delivery to resend, written as the scheduler would have made it (no request leaves this test).
    api.db.$client.query("INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_type, data, status, attempts, created_at, updated_at) VALUES ('dlv_test', ?, ?, 'ping', '{}', 'failed', 1, 0, 0)").run(api.accountId, made.id)
    const routes = (api.app.routes as { method: string; path: string }[]).filter((r) => r.path.startsWith('/developers'))
    expect(routes.length).toBeGreaterThanOrEqual(13)
    const fill = (path: string) => path.replace('/keys/:id', `/keys/${keyId}`).replace('/webhooks/:id', `/webhooks/${made.id}`).replace(':delivery_id', 'dlv_test')
    return { routes: routes.map((r) => ({ method: r.method, path: fill(r.path) })), ownerKey, endpointId: made.id as string }
  }

  test('every route is there: the overview, keys and each endpoint action', async () => {
    const { routes } = await everyRoute()
    expect(routes.filter((r) => r.method === 'POST').length).toBeGreaterThanOrEqual(9)
    expect(routes.filter((r) => r.method === 'GET').length).toBeGreaterThanOrEqual(3)
  })

  test('a dispatcher gets 403 on every Developers page and post, and nothing is written', async () => {
    const { routes } = await everyRoute()
    const cookie = await signedIn('dispatcher')
    const before = snapshot()
    for (const r of routes) {
      const res = r.method === 'GET' ? await get(r.path, cookie) : await post(r.path, cookie, { name: 'x', 'scopes[]': 'jobs:read', url: 'https://127.0.0.1:9/x', 'events[]': '*' })
      expect({ route: `${r.method} ${r.path}`, status: res.status }).toEqual({ route: `${r.method} ${r.path}`, status: 403 })
      expect(await res.text()).toContain('Only an owner')
    }
    expect(snapshot()).toBe(before)
  })

  test('without a session every page goes to sign in, and nothing is written', async () => {
    const { routes } = await everyRoute()
    const before = snapshot()
    for (const r of routes) {
      const res = r.method === 'GET' ? await get(r.path) : await post(r.path, undefined, { name: 'x', 'scopes[]': 'jobs:read' })
      expect({ route: `${r.method} ${r.path}`, status: res.status, to: res.headers.get('location')?.split('?')[0] }).toEqual({ route: `${r.method} ${r.path}`, status: 303, to: '/login' })
    }
    expect(snapshot()).toBe(before)
  })

  test('an owner\'s post from another origin is refused (403) and writes nothing', async () => {
    const { routes } = await everyRoute()
    const cookie = await signedIn('owner')
    const before = snapshot()
    for (const r of routes.filter((x) => x.method === 'POST')) {
      const res = await post(r.path, cookie, { name: 'x', 'scopes[]': 'jobs:read', url: 'https://127.0.0.1:9/x', 'events[]': '*' }, 'http://evil.test')
      expect({ route: r.path, status: res.status }).toEqual({ route: r.path, status: 403 })
    }
    expect(snapshot()).toBe(before)
  })

  test('another account\'s key, endpoint and delivery ids answer 404 and change nothing', async () => {
    const { routes, ownerKey } = await everyRoute()
    const other = api.account('Other Towing')
    const cookie = await signedIn('owner', other)
    const before = snapshot()
    for (const r of routes.filter((x) => /key_|whk_/.test(x.path))) {
      const res = r.method === 'GET' ? await get(r.path, cookie) : await post(r.path, cookie)
      expect({ route: `${r.method} ${r.path}`, status: res.status }).toEqual({ route: `${r.method} ${r.path}`, status: 404 })
    }
    expect(snapshot()).toBe(before)
    expect((await me(ownerKey)).status).toBe(200)
    // Nor does their overview list them.
    const page = await (await get('/developers', cookie)).text()
    expect(await find(page, '.item')).toEqual([])
  })
})

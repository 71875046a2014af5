import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestApi, TEST_ENGINE, whileWriteLockHeld, type TestApi } from '../../test/kit'
import { createUser } from './create-user'
import { setUserDisabled, setUserPassword } from './manage-user'

let api: TestApi
beforeEach(() => { api = startTestApi() })
afterEach(() => api.close())

const ORIGIN = 'http://towline.test'
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

async function makeUser(email = 'ann@example.com', role: 'owner' | 'dispatcher' = 'owner', password = 'correct horse battery', accountId = api.accountId) {
  return (await createUser(api.contexts.forOperator(accountId), { email, role, password })).user
}

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return api.raw(new Request(ORIGIN + path, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: form(fields) }))
}
const get = (path: string, cookie?: string) => api.raw(new Request(ORIGIN + path, { headers: cookie ? { cookie } : {} }))

/** Signs in and returns the `name=value` of the session cookie. */
async function signIn(email = 'ann@example.com', password = 'correct horse battery') {
  const res = await post('/login', { email, password })
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie')!.split(';')[0]!
}

describe('signing in', () => {
  test('the right password starts a session: an HttpOnly, SameSite=Lax cookie on / (no Secure over http), then the board', async () => {
    await makeUser()
    const res = await post('/login', { email: ' Ann@Example.com ', password: 'correct horse battery' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/board')
    const cookie = res.headers.get('set-cookie')!
    expect(cookie).toMatch(/^towline_session=[0-9A-Za-z]{32};/)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Lax')
    expect(cookie).toContain('Path=/')
    expect(cookie).not.toContain('Secure')
    // Only the token's hash is stored.
    const token = cookie.split(';')[0]!.split('=')[1]!
    expect(JSON.stringify(api.db.$client.query('SELECT * FROM sessions').all())).not.toContain(token)
  })

  test('the cookie is Secure when the public URL is https', async () => {
    api.close()
    api = startTestApi({ TOWLINE_PUBLIC_URL: 'https://towline.test' })
    await makeUser()
    const res = await api.raw(new Request('https://towline.test/login', { method: 'POST', headers: { origin: 'https://towline.test', 'content-type': 'application/x-www-form-urlencoded' }, body: form({ email: 'ann@example.com', password: 'correct horse battery' }) }))
    expect(res.headers.get('set-cookie')).toContain('Secure')
  })

  test('a wrong password, an unknown email and a disabled login get the same answer, and no cookie', async () => {
    await makeUser()
    await makeUser('gone@example.com', 'dispatcher')
    setUserDisabled(api.contexts.forOperator(api.accountId), 'gone@example.com', true)
    const answers = []
    for (const [email, password] of [['ann@example.com', 'wrong password!'], ['nobody@example.com', 'correct horse battery'], ['gone@example.com', 'correct horse battery']]) {
      const res = await post('/login', { email: email!, password: password! })
      expect(res.headers.get('set-cookie')).toBeNull()
      const body = await res.text()
      answers.push([res.status, body.match(/role="alert"[^>]*>(.*?)<\/div>/s)![1]])
      // What was typed (the email) is kept; the password never comes back.
      expect(body).toContain(`value="${email}"`)
      expect(body).not.toContain(password!)
    }
    expect(answers[0]).toEqual(answers[1]!)
    expect(answers[1]).toEqual(answers[2]!)
    expect(answers[0]![0]).toBe(401)
  })

  test('empty fields are named beside each field and nothing is checked', async () => {
    const res = await post('/login', { email: '', password: '' })
    expect(res.status).toBe(422)
    const body = await res.text()
    expect(body).toMatch(/id="f-email-error">[^<]+</)
    expect(body).toMatch(/id="f-password-error">[^<]+</)
  })

  test('a sign-in posted from another origin is refused before anything is read', async () => {
    await makeUser()
    const res = await post('/login', { email: 'ann@example.com', password: 'correct horse battery' }, { origin: 'http://evil.test' })
    expect(res.status).toBe(403)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect(api.db.$client.query('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 0 })
  })

  test('after 10 failures in 15 minutes the email is locked for 15 minutes, even with the right password; then it opens', async () => {
    await makeUser()
    for (let i = 0; i < 10; i++) {
      expect((await post('/login', { email: 'ann@example.com', password: `wrong-${i}-password` })).status).toBe(401)
      api.clock.advance(60_000)
    }
    const locked = await post('/login', { email: 'ann@example.com', password: 'correct horse battery' })
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await locked.text()).toMatch(/locked for \d+ more minutes?/)
    expect(locked.headers.get('set-cookie')).toBeNull()
    // Another email is not affected.
    await makeUser('bob@example.com', 'dispatcher')
    expect((await post('/login', { email: 'bob@example.com', password: 'correct horse battery' })).status).toBe(303)
    // 15 minutes after the tenth failure it opens again.
    api.clock.advance(15 * 60_000)
    expect((await post('/login', { email: 'ann@example.com', password: 'correct horse battery' })).status).toBe(303)
  })

  test('failures spread over more than 15 minutes do not lock', async () => {
    await makeUser()
    for (let i = 0; i < 12; i++) {
      await post('/login', { email: 'ann@example.com', password: 'wrong password' })
      api.clock.advance(2 * 60_000)
    }
    expect((await post('/login', { email: 'ann@example.com', password: 'correct horse battery' })).status).toBe(303)
  })

  test('an unknown email is locked the same way (a lock says nothing about whether a login exists)', async () => {
    for (let i = 0; i < 10; i++) await post('/login', { email: 'nobody@example.com', password: 'wrong password' })
    expect((await post('/login', { email: 'nobody@example.com', password: 'wrong password' })).status).toBe(429)
  })

  test('next is followed only to a path of this site', async () => {
    await makeUser()
    for (const [next, to] of [['/jobs/job_1?x=1', '/jobs/job_1?x=1'], ['//evil.test/x', '/board'], ['https://evil.test/', '/board'], ['/\\evil.test', '/board'], ['/日?q=é ü', '/%E6%97%A5?q=%C3%A9%20%C3%BC'], ['/\ud800', '/%EF%BF%BD']]) {
      const res = await post('/login', { email: 'ann@example.com', password: 'correct horse battery', next: next! })
      expect(res.headers.get('location')).toBe(to!)
    }
  })
})

describe('sessions', () => {
  test('a page without a session goes to /login (303) with the page to come back to', async () => {
    const res = await get('/board?status=pending')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login?next=%2Fboard%3Fstatus%3Dpending')
  })

  test('a form posted without a session goes to /login, then back to the page it was posted from (its Referer on this origin only); nothing is written', async () => {
    const before = api.db.$client.query('SELECT count(*) AS n FROM jobs').get()
    const from = async (referer?: string) => (await post('/jobs/new', { customer_name: 'Ann Lee', pickup: 'I-5' }, referer === undefined ? {} : { referer })).headers.get('location')
    expect(await from(`${ORIGIN}/jobs/new`)).toBe('/login?next=%2Fjobs%2Fnew')
    expect(await from(`${ORIGIN}/jobs/job_1?tab=notes`)).toBe('/login?next=%2Fjobs%2Fjob_1%3Ftab%3Dnotes')
    // What the last form did is not said again on the way back.
    expect(await from(`${ORIGIN}/jobs/job_1?done=note`)).toBe('/login?next=%2Fjobs%2Fjob_1')
    expect(await from()).toBe('/login')
    expect(await from('https://evil.test/jobs/new')).toBe('/login')
    expect(await from('not a url')).toBe('/login')
    expect(await from(`${ORIGIN}/login?next=/x`)).toBe('/login')
    expect(api.db.$client.query('SELECT count(*) AS n FROM jobs').get()).toEqual(before)
  })

  test('sign-out ends the session on the server: the old cookie no longer opens anything', async () => {
    await makeUser()
    const cookie = await signIn()
    expect((await get('/login', cookie)).status).toBe(303) // signed in: /login sends to the board
    const out = await post('/logout', {}, { cookie })
    expect(out.status).toBe(303)
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
    const after = await get('/login', cookie)
    expect(after.status).toBe(200)
  })

  test('a session ends after 12 hours idle, and after 7 days however active (injected clock)', async () => {
    await makeUser()
    const idle = await signIn()
    api.clock.advance(11 * 3600_000)
    expect((await get('/login', idle)).status).toBe(303)
    api.clock.advance(11 * 3600_000 + 59 * 60_000) // 11 h 59 min after the last request
    expect((await get('/login', idle)).status).toBe(303)
    api.clock.advance(12 * 3600_000)
    expect((await get('/login', idle)).status).toBe(200)

    const busy = await signIn()
    for (let h = 6; h < 7 * 24; h += 6) { api.clock.advance(6 * 3600_000); expect((await get('/login', busy)).status).toBe(303) }
    api.clock.advance(7 * 3600_000)
    expect((await get('/login', busy)).status).toBe(200)
  })

  test('a new password or disabling the login ends its sessions', async () => {
    // A dispatcher: the account's last active owner cannot be disabled.
    await makeUser('ann@example.com', 'dispatcher')
    const a = await signIn()
    await setUserPassword(api.contexts.forOperator(api.accountId), 'ann@example.com', 'another good password')
    expect((await get('/login', a)).status).toBe(200)
    const b = await signIn('ann@example.com', 'another good password')
    setUserDisabled(api.contexts.forOperator(api.accountId), 'ann@example.com', true)
    expect((await get('/login', b)).status).toBe(200)
  })

  test('a forged or malformed cookie is simply not signed in', async () => {
    for (const cookie of ['towline_session=' + 'A'.repeat(32), 'towline_session={"a":1}', 'towline_session=', 'other=1']) {
      expect((await get('/board', cookie)).status).toBe(303)
    }
  })
})

describe('last seen', () => {
  // SQLite: another connection's long write (an import) holds the one write lock.
  test.skipIf(TEST_ENGINE === 'postgres')("a session's last-seen time never waits for another connection's write: the page is answered, the time written by a later request", async () => {
    await makeUser()
    const cookie = await signIn()
    const lastSeen = () => (api.db.$client.query('SELECT last_seen_at AS t FROM sessions').get() as { t: number }).t
    const signedInAt = lastSeen()
    api.clock.advance(61_000)
    await whileWriteLockHeld(api.db, async () => {
      const started = performance.now()
      expect((await get('/board', cookie)).status).toBe(200)
      // Waiting for the lock would have been the busy timeout (5 s), then a failed request.
      expect(performance.now() - started).toBeLessThan(2_000)
    })
    expect(lastSeen()).toBe(signedInAt)
    expect((await get('/board', cookie)).status).toBe(200)
    expect(lastSeen()).toBe(api.clock.now())
  })
})

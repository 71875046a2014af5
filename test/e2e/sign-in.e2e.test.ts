/**
 * Sign-in against the compiled binary as an attacker would press it: many guesses sent at once
 * (each waits its turn for argon2), from many addresses (named by X-Forwarded-For through a
 * trusted proxy, here the test itself on 127.0.0.1) and from one.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { cli, freshFolder, startServer, type RunningServer } from '../binary'

const PASSWORD = 'correct horse battery'
let folder: ReturnType<typeof freshFolder>
let server: RunningServer
let origin: string

beforeAll(async () => {
  folder = freshFolder()
  server = await startServer(folder.bin, { cwd: folder.dir, env: { TOWLINE_TRUSTED_PROXIES: '127.0.0.1' } })
  origin = `http://localhost:${new URL(server.url).port}`
  for (const email of ['ann@example.com', 'bo@example.com']) {
    expect(cli(folder.bin, ['users', 'create', '--email', email, '--role', 'owner', '--password', PASSWORD], { cwd: folder.dir }).code).toBe(0)
  }
}, 30_000)
afterAll(async () => {
  await server?.stop()
  folder?.cleanup()
})

/** A sign-in as the page posts it, from the client `from` (X-Forwarded-For). */
async function signIn(email: string, password: string, from: string) {
  const res = await fetch(`${server.url}/login`, {
    method: 'POST', redirect: 'manual',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
    body: new URLSearchParams({ email, password }).toString(),
  })
  return { status: res.status, text: await res.text(), cookie: res.headers.get('set-cookie') }
}
const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {})

test('40 wrong passwords sent at once from 40 addresses: 10 are checked, the rest refused as locked, and so is the right one with them and after', async () => {
  const burst = await Promise.all([
    ...Array.from({ length: 40 }, (_, i) => signIn('ann@example.com', `wrong password ${i}`, `127.0.1.${i + 1}`)),
    signIn('ann@example.com', PASSWORD, '127.0.2.1'),
  ])
  expect(tally(burst.map((r) => r.status))).toEqual({ 401: 10, 429: 31 })
  expect(burst.filter((r) => r.status === 429).every((r) => /Sign-in is locked for \d+ more minutes?/.test(r.text))).toBe(true)
  expect(burst.some((r) => r.cookie)).toBe(false)
  const after = await signIn('ann@example.com', PASSWORD, '127.0.2.2')
  expect({ status: after.status, cookie: after.cookie }).toEqual({ status: 429, cookie: null })
  // Another login is not affected.
  expect((await signIn('bo@example.com', PASSWORD, '127.0.2.3')).status).toBe(303)
})

test('one address has at most 8 sign-ins waiting at once; the others are told to wait, and another address signs in meanwhile', async () => {
  const flood = Promise.all(Array.from({ length: 30 }, (_, i) => signIn(`nobody${i}@example.com`, 'wrong password', '127.0.3.1')))
  const meanwhile = await signIn('bo@example.com', PASSWORD, '127.0.3.2')
  const answers = await flood
  expect(meanwhile.status).toBe(303)
  const counts = tally(answers.map((r) => r.status))
  expect(counts[401]).toBeGreaterThanOrEqual(8)
  expect(counts[429]).toBeGreaterThanOrEqual(1)
  expect(counts[401]! + counts[429]!).toBe(30)
  expect(answers.filter((r) => r.status === 429).every((r) => r.text.includes('Too many sign-ins at once from your address'))).toBe(true)
})

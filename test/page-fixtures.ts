/**
 * Page routes for testing the HTTP layer before real pages exist, declared with the same route
 * options real pages use (route-props.ts): an HTML page, a form, a photo-sized and a CSV-sized
 * multipart upload, a page's JSON endpoint, and routes that fail on purpose. Mounted with
 * `startTestApi(env, { pages: [pageFixtures(calls)] })`; each handler run is counted in `calls`,
 * so a test can tell a refused request from one that reached its handler.
 */
import { Elysia, t } from 'elysia'
import { AppError } from '../src/platform/errors'
import { BODY_CAPS, routeProps } from '../src/platform/route-props'

/** What a handler saw of a parsed form: text as is, Files by name, type and size. */
function describeFields(body: unknown): Record<string, unknown> {
  const one = (v: unknown) => (v instanceof File ? { file: v.name, type: v.type, size: v.size } : v)
  return Object.fromEntries(Object.entries(body as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? v.map(one) : one(v)]))
}

/** Counts handler runs by route. */
export type Calls = Record<string, number>

/** The fixture routes (see above). */
export function pageFixtures(calls: Calls = {}) {
  const ran = (name: string) => { calls[name] = (calls[name] ?? 0) + 1 }
  const html = (text: string) => new Response(`<!doctype html><html lang="en"><title>Fixture</title><p>${text}</p></html>`, { headers: { 'content-type': 'text/html; charset=utf-8' } })
  return new Elysia().use(routeProps)
    .get('/fixture/page', () => { ran('page'); return html('a page') })
    .get('/fixture/forms', () => new Response(`<!doctype html><html lang="en"><title>Forms</title>
<form method="post" action="/fixture/form"><input name="name" value="Ann Lee"><input type="checkbox" name="scopes[]" value="jobs:read" checked><input type="checkbox" name="scopes[]" value="roster:read" checked><button>Save</button></form>
<form method="post" action="/fixture/photo" enctype="multipart/form-data"><input name="caption" value="Front bumper"><input type="file" name="photo"><input type="file" name="spare"><button>Upload</button></form>
</html>`, { headers: { 'content-type': 'text/html; charset=utf-8' } }))
    .post('/fixture/form', ({ body }) => { ran('form'); return Response.json(describeFields(body)) }, { accepts: { kind: 'form', maxBytes: BODY_CAPS.form } })
    .post('/fixture/few', ({ body }) => { ran('few'); return Response.json(describeFields(body)) }, { accepts: { kind: 'form', maxBytes: BODY_CAPS.form, maxFields: 3 } })
    .post('/fixture/photo', async ({ body }) => {
      ran('photo')
      const photo = (body as Record<string, unknown>).photo
      // Reads the whole file, as a real upload would, to prove the bytes arrived intact.
      const sum = photo instanceof File ? new Bun.CryptoHasher('sha256').update(await photo.arrayBuffer()).digest('hex') : null
      return Response.json({ ...describeFields(body), sha256: sum })
    }, { accepts: { kind: 'multipart', maxBytes: BODY_CAPS.photo } })
    .post('/fixture/import', ({ body }) => { ran('import'); return Response.json(describeFields(body)) }, { accepts: { kind: 'multipart', maxBytes: BODY_CAPS.csv } })
    .get('/fixture/state', () => { ran('state'); return { status: 'en_route' } }, { answers: 'json' })
    .post('/fixture/state', ({ body }) => { ran('state.post'); return { got: body } }, { answers: 'json', accepts: { kind: 'json', maxBytes: BODY_CAPS.json } })
    .post('/fixture/nobody', ({ body }) => { ran('nobody'); return Response.json({ body }) })
    .delete('/fixture/thing', () => { ran('delete'); return html('deleted') })
    .post('/fixture/open', () => { ran('open'); return html('anyone may post here') }, { sameOrigin: false })
    .get('/fixture/boom', () => { throw new Error('boom <script>alert(1)</script> at /secret/path') })
    .get('/fixture/boom.json', () => { throw new Error('boom') }, { answers: 'json' })
    .get('/fixture/limited', () => {
      throw new AppError('rate_limited', 'Too many attempts for <b>ann@example.com</b>; retry in 900 seconds.', { retry_after_seconds: 900 }, { 'retry-after': '900' })
    })
    // Not declared async, yet answering with a promise (as a handler calling an async helper does).
    .get('/fixture/later', () => Promise.resolve().then(() => { ran('later'); return html('a page, later') }))
    .get('/fixture/later-limited', () => Promise.resolve().then(() => {
      throw new AppError('rate_limited', 'Too many attempts; retry in 60 seconds.', { retry_after_seconds: 60 }, { 'retry-after': '60' })
    }))
    .get('/fixture/later-boom.json', () => Promise.reject(new Error('boom later')), { answers: 'json' })
    .get('/fixture/bad-response', () => ({ a: 1 }) as unknown as { a: string }, { answers: 'json', response: { 200: t.Object({ a: t.String() }) } })
}
